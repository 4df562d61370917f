package replicate

import (
	"testing"
	"time"
)

// The URL's connect_timeout is kept (an earlier version cut 30 s down to
// 5 s), and the one setting the tool overrides is the idle timeout.
func TestConnConfigKeepsTheURLsTimeout(t *testing.T) {
	t.Setenv("PGCONNECT_TIMEOUT", "")
	cfg, err := connConfig("postgres://u:secret@db.example/app?connect_timeout=30&application_name=sync")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConnectTimeout != 30*time.Second {
		t.Errorf("ConnectTimeout = %v, want the URL's 30s", cfg.ConnectTimeout)
	}
	for k, want := range map[string]string{"application_name": "sync", "replication": "database", "idle_in_transaction_session_timeout": "0"} {
		if got := cfg.RuntimeParams[k]; got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
