package capacity

import (
	"math"
	"testing"

	"github.com/pgdynamo/migrate/load"
)

func TestWarmLoad(t *testing.T) {
	t.Parallel()
	const window = 1800.0 // load.OnDemandPeakWindow in seconds
	for _, tc := range []struct {
		name       string
		units, hot int64
		table      load.TableCapacity
		want       float64
	}{
		{"unknown table", 1e6, 0, load.TableCapacity{}, 0},
		{"provisioned", 3_000_000, 100, load.TableCapacity{WCU: 3000}, 1000},
		{"new on-demand table, within the first window", 4000 * 600, 0, load.TableCapacity{WCU: 4000, OnDemand: true}, 600},
		// 4,000/s for 30 min (7.2M), then 8,000/s for 30 min (14.4M), then
		// 16,000/s for the remaining 8.4M units: 525 s.
		{"on demand doubles every 30 minutes", 30_000_000, 0, load.TableCapacity{WCU: 4000, OnDemand: true}, 2*window + 525},
		{"warm", 30_000_000, 0, load.TableCapacity{WCU: 20000, OnDemand: true}, 1500},
		{"on-demand maximum", 30_000_000, 0, load.TableCapacity{WCU: 4000, OnDemand: true, MaxWCU: 5000}, window + (30_000_000-4000*window)/5000},
		{"provisioned does not double", 30_000_000, 0, load.TableCapacity{WCU: 4000}, 7500},
		{"a hot partition takes 1,000/s", 3_000_000, 2_000_000, load.TableCapacity{WCU: 30000}, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := WarmLoad(tc.units, tc.hot, tc.table)
			if math.Abs(w.Seconds-tc.want) > 1e-6 {
				t.Errorf("WarmLoad(%d, %d, %+v) = %v s, want %v", tc.units, tc.hot, tc.table, w.Seconds, tc.want)
			}
		})
	}
	if got := CollectionWriteUnits(Partition{Items: 10, Bytes: 50_000}); got != 49 {
		t.Errorf("collection of 10 items, 50,000 bytes = %d units, want 49", got)
	}
}
