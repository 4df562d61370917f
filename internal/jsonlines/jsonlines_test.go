package jsonlines

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestWriter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := New(&out)
	w.now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	// A plain line, a JSON line passed through, a line split over writes,
	// then an error of two lines that becomes one record.
	for _, p := range []string{"slot migrate_T created\n", `{"level":"INFO","msg":"already json"}` + "\n", "half ", "a line\n", "pending"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	w.SetLevel("ERROR")
	if _, err := w.Write([]byte("migrate: failed\n  because\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{
		{"time": "2025-01-02T03:04:05Z", "level": "INFO", "msg": "slot migrate_T created"},
		{"level": "INFO", "msg": "already json"},
		{"time": "2025-01-02T03:04:05Z", "level": "INFO", "msg": "half a line"},
		{"time": "2025-01-02T03:04:05Z", "level": "ERROR", "msg": "pendingmigrate: failed\n  because"},
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, line := range lines {
		var got map[string]string
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d is not JSON: %s", i+1, line)
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("line %d: %s = %q, want %q", i+1, k, got[k], v)
			}
		}
	}
}
