package render

import (
	"strings"
	"testing"
	"time"

	"github.com/pgdynamo/migrate/contract"
)

// The progress line follows acknowledged items: the ETA stays until the
// last item is written, even once every row is read.
func TestEntityLine(t *testing.T) {
	t.Parallel()
	started := time.Now().Add(-10 * time.Second)
	for _, tc := range []struct {
		name string
		e    contract.EntityProgress
		want []string
		not  []string
	}{
		{"not started", contract.EntityProgress{}, []string{"waiting"}, []string{"ETA"}},
		{"all read, half written", contract.EntityProgress{Started: started, Estimate: 1000, RowsRead: 1000, ItemsWritten: 500},
			[]string{"items 500 of ~1000", "50 items/s", "1000 rows read", "ETA 10s"}, nil},
		{"more rows than estimated", contract.EntityProgress{Started: started, Estimate: 100, RowsRead: 400, ItemsWritten: 200},
			[]string{"items 200 of ~400", "ETA 10s"}, nil},
		{"rejects count as done", contract.EntityProgress{Started: started, RowsRead: 100, ItemsWritten: 90, Rejects: 10},
			[]string{"10 rejected"}, []string{"ETA"}},
		{"done", contract.EntityProgress{Started: started, Estimate: 1000, RowsRead: 1000, ItemsWritten: 1000}, []string{"items 1000 of ~1000"}, []string{"ETA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EntityLine(tc.e)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("%q has %q", got, w)
				}
			}
		})
	}
}
