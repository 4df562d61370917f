package extract

import (
	"testing"
	"time"

	"github.com/pgdynamo/migrate/internal/pgurl"
)

// The URL's connect_timeout and libpq's other settings reach the
// connection as given; only a URL without connect_timeout gets the
// tool's default. An earlier version cut 30 s down to 5 s.
func TestConnConfigKeepsTheURLsSettings(t *testing.T) {
	t.Setenv("PGCONNECT_TIMEOUT", "")
	cfg, err := connConfig("postgres://u:secret@db.example:6543/app?connect_timeout=30&application_name=nightly&sslmode=disable&options=-c%20work_mem%3D64MB")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 30*time.Second {
		t.Errorf("ConnectTimeout = %v, want the URL's 30s", cfg.ConnectTimeout)
	}
	if got := cfg.RuntimeParams["application_name"]; got != "nightly" {
		t.Errorf("application_name = %q, want the URL's", got)
	}
	if got := cfg.RuntimeParams["options"]; got != "-c work_mem=64MB" {
		t.Errorf("options = %q, want the URL's", got)
	}
	if cfg.TLSConfig != nil {
		t.Error("sslmode=disable was not respected")
	}
	if cfg.Host != "db.example" || cfg.Port != 6543 || cfg.Database != "app" {
		t.Errorf("host, port, database = %s, %d, %s", cfg.Host, cfg.Port, cfg.Database)
	}

	cfg, err = connConfig("postgres://u@db.example/app")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != pgurl.DefaultConnectTimeout {
		t.Errorf("without connect_timeout: ConnectTimeout = %v, want %v", cfg.ConnectTimeout, pgurl.DefaultConnectTimeout)
	}
}
