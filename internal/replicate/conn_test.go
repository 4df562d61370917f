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

// TestRecordEnd checks the page header correction of the insert position.
func TestRecordEnd(t *testing.T) {
	const block, segment = 8192, 16 << 20
	for _, c := range []struct{ insert, want LSN }{
		{0x1503D70, 0x1503D70}, // inside a page
		{0, 0},
		{0x1504000 + shortPageHeader, 0x1504000}, // a record ended at a page boundary
		{0x2000000 + longPageHeader, 0x2000000},  // ... at a segment boundary
		{0x2000000 + shortPageHeader, 0x2000000 + shortPageHeader},         // a segment's first page has the long header: 24 is inside a record
		{0x1504000 + shortPageHeader + 8, 0x1504000 + shortPageHeader + 8}, // after a record on the page
	} {
		if got := recordEnd(c.insert, block, segment); got != c.want {
			t.Errorf("recordEnd(%s) = %s, want %s", c.insert, got, c.want)
		}
	}
}
