package main

import "testing"

// The commands sync prints to continue it or to remove its slot: the
// flags given, never the URL, the slot and publication named.
func TestSyncCommand(t *testing.T) {
	t.Parallel()
	cmd := newSyncCmd(&globals{})
	if err := cmd.ParseFlags([]string{"--mapping", "my map.yaml", "--pg", "postgres://u:pw@h/db", "--endpoint", "http://127.0.0.1:8000",
		"--create-table", "--until-caught-up", "--max-wcu", "500", "--quiet", "--table", "Shop", "--summary-json", "s.json", "--drop"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		from string
		drop bool
		want string
	}{
		{"flag", false, `migrate sync --mapping 'my map.yaml' --table Shop --pg '<your --pg URL>' --slot s1 --publication p1 --endpoint http://127.0.0.1:8000 --max-wcu 500 --quiet`},
		{"DATABASE_URL", false, `migrate sync --mapping 'my map.yaml' --table Shop --pg "$DATABASE_URL" --slot s1 --publication p1 --endpoint http://127.0.0.1:8000 --max-wcu 500 --quiet`},
		{"flag", true, `migrate sync --drop --mapping 'my map.yaml' --table Shop --pg '<your --pg URL>' --slot s1 --publication p1`},
		{"", true, `migrate sync --drop --mapping 'my map.yaml' --table Shop --slot s1 --publication p1`},
	} {
		if got := syncCommand(cmd.Flags(), tt.from, "s1", "p1", tt.drop); got != tt.want {
			t.Errorf("from %q, drop %v:\n got %s\nwant %s", tt.from, tt.drop, got, tt.want)
		}
	}
}
