// Package pgurl holds the tool's one rule about a PostgreSQL connection
// string that pgx leaves to the caller: how long a connection attempt may
// take when the user did not say.
package pgurl

import (
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultConnectTimeout bounds a connection attempt (per host address, as
// libpq's connect_timeout does) when neither the connection string nor
// PGCONNECT_TIMEOUT sets connect_timeout. libpq and pgx wait for ever; an
// unreachable server should fail a command, but a loaded one should still
// be reached, so it is generous.
const DefaultConnectTimeout = 30 * time.Second

// ApplyDefaults sets cfg.ConnectTimeout to DefaultConnectTimeout unless the
// user chose a value: connect_timeout in connString (URL or keyword/value
// form), PGCONNECT_TIMEOUT, or a service file. A value given is kept as
// it is, 0 (wait for ever) included. It reports whether the default was
// applied.
func ApplyDefaults(cfg *pgconn.Config, connString string) bool {
	if cfg.ConnectTimeout != 0 || connectTimeoutGiven(connString) || os.Getenv("PGCONNECT_TIMEOUT") != "" {
		return false
	}
	cfg.ConnectTimeout = DefaultConnectTimeout
	return true
}

// keyword matches connect_timeout as a key of the keyword/value form.
var keyword = regexp.MustCompile(`(^|\s)connect_timeout\s*=`)

func connectTimeoutGiven(connString string) bool {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		return err == nil && u.Query().Has("connect_timeout")
	}
	return keyword.MatchString(connString)
}
