package engine

import (
	"strings"

	"github.com/jackc/pgx/v5"
)

// CheckPostgres parses a source database URL (a Config's Postgres field)
// as the connection will, without connecting: nil when url is "" (each
// verb says whether it needs one) or parses, else a FieldError of verb's
// field "Postgres". The message shows neither the URL nor pgx's quote of
// it: a malformed URL cannot be redacted reliably, and it may hold a
// password.
func CheckPostgres(verb, url string) error {
	if url == "" {
		return nil
	}
	_, err := pgx.ParseConfig(url)
	if err == nil {
		return nil
	}
	// pgx's message is "cannot parse `<redacted value>`: why".
	why := "cannot be parsed"
	msg := err.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 && !strings.Contains(msg[i:], url) {
		why = msg[i+3:]
	}
	return fieldf(verb, "Postgres", "is not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) or key=value string: %s (the value is not shown: it may hold a password)", why)
}
