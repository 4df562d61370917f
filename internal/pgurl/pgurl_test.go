package pgurl

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestApplyDefaults(t *testing.T) {
	for _, c := range []struct {
		name, conn, env string
		want            time.Duration
		applied         bool
	}{
		{"URL 30s kept", "postgres://u@db.example:5432/app?connect_timeout=30", "", 30 * time.Second, false},
		{"URL 3s kept", "postgres://u@db.example/app?connect_timeout=3&sslmode=disable", "", 3 * time.Second, false},
		{"URL 0 is wait for ever, as in libpq", "postgresql://u@db.example/app?connect_timeout=0", "", 0, false},
		{"keyword form kept", "host=db.example user=u connect_timeout=45", "", 45 * time.Second, false},
		{"keyword form 0 kept", "host=db.example connect_timeout = 0 user=u", "", 0, false},
		{"environment kept", "postgres://u@db.example/app", "20", 20 * time.Second, false},
		{"unset: default", "postgres://u@db.example/app?application_name=connect_timeout", "", DefaultConnectTimeout, true},
		{"unset, keyword form: default", "host=db.example user=u", "", DefaultConnectTimeout, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PGCONNECT_TIMEOUT", c.env)
			cfg, err := pgconn.ParseConfig(c.conn)
			if err != nil {
				t.Fatal(err)
			}
			if got := ApplyDefaults(cfg, c.conn); got != c.applied {
				t.Errorf("applied = %v, want %v", got, c.applied)
			}
			if cfg.ConnectTimeout != c.want {
				t.Errorf("ConnectTimeout = %v, want %v", cfg.ConnectTimeout, c.want)
			}
		})
	}
}
