package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// TestRunUsage pins the exit code and message of each misuse of run's
// flags, and of each state-file situation that must stop a run before it
// reads or writes anything. None of them needs a database: the URL given
// points nowhere.
func TestRunUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mappingFile := filepath.Join(dir, "m.yaml")
	mappingText := []byte("table: Tab1\nkeys: { partition: PK, sort: SK }\nentities:\n  A:\n    from: a\n    key: { pk: \"A#{id}\", sk: \"A\" }\n    attributes: { id: id }\n")
	if err := os.WriteFile(mappingFile, mappingText, 0o600); err != nil {
		t.Fatal(err)
	}
	state := func(name string, s *checkpoint.State) string {
		path := filepath.Join(dir, name)
		if s != nil {
			if err := checkpoint.Save(path, s); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	hash := checkpoint.Hash(mappingText)
	unfinished := state("unfinished.json", &checkpoint.State{Mapping: mappingFile, MappingSHA256: hash, Table: "Tab1",
		Sources: []checkpoint.Source{{Name: "public.a", After: checkpoint.Position{int64(5)}, Rows: 5}}})
	otherMapping := state("other.json", &checkpoint.State{Mapping: mappingFile, MappingSHA256: checkpoint.Hash([]byte("old")), Table: "Tab1"})
	complete := state("complete.json", &checkpoint.State{Mapping: mappingFile, MappingSHA256: hash, Table: "Tab1", Complete: true})
	garbage := filepath.Join(dir, "garbage.json")
	os.WriteFile(garbage, []byte("{"), 0o600)
	missing := state("missing.json", nil)

	// Nothing listens on port 1: any attempt to connect fails, which the
	// cases below must never reach (or, for the last ones, must reach).
	const pg = "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1"
	base := []string{"run", "--mapping", mappingFile, "--pg", pg}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"on-error value", []string{"--on-error", "skip"}, exitUsage, []string{`--on-error must be "fail" or "reject", not "skip"`}},
		{"on-duplicate value", []string{"--on-duplicate", "keep"}, exitUsage, []string{`--on-duplicate must be "fail" or "skip"`}},
		{"reject file without reject", []string{"--reject-file", "x.jsonl"}, exitUsage, []string{"apply only with --on-error reject"}},
		{"max rejects without reject", []string{"--max-rejects", "3"}, exitUsage, []string{"apply only with --on-error reject"}},
		{"max rejects below -1", []string{"--on-error", "reject", "--max-rejects", "-2"}, exitUsage, []string{"--max-rejects must be -1"}},
		{"negative max-wcu", []string{"--max-wcu", "-5"}, exitUsage, []string{"--max-wcu must not be negative"}},
		{"negative warm-wcu", []string{"--create-table", "--warm-wcu", "-5"}, exitUsage, []string{"--warm-wcu must not be negative"}},
		{"warm-wcu without create-table", []string{"--warm-wcu", "8000"}, exitUsage, []string{"--warm-wcu applies only with --create-table"}},
		{"warm-wcu below a new table's", []string{"--create-table", "--warm-wcu", "1000"}, exitUsage, []string{"--warm-wcu must be at least 4000", "got 1000"}},
		{"warm-wcu not a number", []string{"--create-table", "--warm-wcu", "lots"}, exitUsage, []string{`invalid argument "lots"`}},
		// Passes the check, then fails to connect.
		{"warm-wcu with create-table", []string{"--create-table", "--warm-wcu", "12000"}, exitFailure, []string{"connect to postgres"}},
		{"negative max-batch-elapsed", []string{"--max-batch-elapsed", "-1s"}, exitUsage, []string{"--max-batch-elapsed must not be negative"}},
		{"bad duration", []string{"--max-batch-elapsed", "soon"}, exitUsage, []string{"invalid argument \"soon\""}},
		{"resume and fresh", []string{"--resume", "--fresh"}, exitUsage, []string{"--resume and --fresh exclude each other"}},
		{"resume without state file", []string{"--resume", "--state", missing}, exitUsage, []string{"there is no state file " + missing, "run without --resume"}},
		{"unfinished state without a choice", []string{"--state", unfinished}, exitUsage, []string{unfinished + ` holds an unfinished run into table "Tab1" (5 rows done`, "pass --resume to continue it, or --fresh to start over"}},
		{"unfinished state of another mapping", []string{"--state", otherMapping}, exitUsage, []string{"that --resume could not continue", "the mapping changed", "--resume", "--fresh"}},
		{"resume with a changed mapping", []string{"--resume", "--state", otherMapping}, exitUsage, []string{"cannot continue the run recorded in " + otherMapping, "the mapping changed since the state file was written", "pass --fresh"}},
		{"resume into another table", []string{"--resume", "--state", unfinished, "--table", "Tab2"}, exitUsage, []string{`the state file is for another target table: it records a migration into "Tab1", not "Tab2"`}},
		{"garbage state", []string{"--state", garbage}, exitUsage, []string{"is not a state file", "pass --fresh"}},
		{"resume a complete run", []string{"--resume", "--state", complete}, exitOK, []string{"nothing to resume: the run recorded in " + complete + " completed", "--fresh"}},
		// These pass every check and then fail to connect: exit 1, and the
		// state files are left as they were.
		{"complete state starts a new run", []string{"--state", complete}, exitFailure, []string{"connect to postgres 127.0.0.1:1/db"}},
		{"fresh over garbage", []string{"--fresh", "--state", garbage}, exitFailure, []string{"connect to postgres"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := execute(t.Context(), append(append([]string{}, base...), tt.args...), &out, &errOut)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, tt.code, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if strings.Contains(errOut.String()+out.String(), "secret") {
				t.Errorf("the output shows the password:\n%s%s", out.String(), errOut.String())
			}
		})
	}
	if st, err := checkpoint.Load(unfinished); err != nil || st.Rows() != 5 {
		t.Errorf("the unfinished state file changed: %+v, %v", st, err)
	}
}

func TestResumeCommand(t *testing.T) {
	t.Parallel()
	cmd := newRunCmd(&globals{})
	if err := cmd.ParseFlags([]string{"--mapping", "my map.yaml", "--pg", "postgres://u:pw@h/db", "--endpoint", "http://127.0.0.1:8000",
		"--create-table", "--on-error", "reject", "--max-wcu", "500", "--quiet", "--fresh", "--concurrency", "4"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ from, want string }{
		{"flag", `migrate run --mapping 'my map.yaml' --endpoint http://127.0.0.1:8000 --pg '<your --pg URL>' --concurrency 4 --max-wcu 500 --on-error reject --quiet --state .migrate/T.state.json --resume`},
		{"MIGRATE_PG_URL", `migrate run --mapping 'my map.yaml' --endpoint http://127.0.0.1:8000 --pg "$MIGRATE_PG_URL" --concurrency 4 --max-wcu 500 --on-error reject --quiet --state .migrate/T.state.json --resume`},
	} {
		if got := resumeCommand(cmd.Flags(), tt.from, ".migrate/T.state.json"); got != tt.want {
			t.Errorf("from %s:\n got %s\nwant %s", tt.from, got, tt.want)
		}
	}
}
