package extract_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/migratetest"
)

// The snapshot turns off the user's idle and statement timeouts for its
// own transaction only, and says which: here set by the URL's options
// (source "client"). After the snapshot the session has the user's values
// again, and a timeout left at 0 is not reported.
func TestSnapshotTurnsOffTimeoutsForItself(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	u, err := url.Parse(migratetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	// Spaces as %20: libpq's URL syntax does not take + for a space.
	opts := strings.ReplaceAll(url.QueryEscape("-c idle_in_transaction_session_timeout=7s -c statement_timeout=2min"), "+", "%20")
	u.RawQuery += "&options=" + opts
	conn, err := extract.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	show := func(name string) string {
		t.Helper()
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	got := snap.Overrides()
	want := []extract.Setting{{Name: "idle_in_transaction_session_timeout", Value: "7s", Source: "client"}, {Name: "statement_timeout", Value: "2min", Source: "client"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Overrides() = %+v, want %+v", got, want)
	}
	for _, name := range []string{"idle_in_transaction_session_timeout", "statement_timeout"} {
		if v := show(name); v != "0" {
			t.Errorf("inside the snapshot %s = %s, want 0", name, v)
		}
	}
	if err := snap.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if v := show("idle_in_transaction_session_timeout"); v != "7s" {
		t.Errorf("after the snapshot idle_in_transaction_session_timeout = %s, want the user's 7s", v)
	}
	if v := show("statement_timeout"); v != "2min" {
		t.Errorf("after the snapshot statement_timeout = %s, want the user's 2min", v)
	}
}
