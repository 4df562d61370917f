package capacity

import (
	"math"

	"github.com/pgdynamo/migrate/load"
)

// Warm is how long a load takes at what the target table takes at once
// (see WarmLoad).
type Warm struct {
	// Table is the table's capacity the estimate starts from.
	Table load.TableCapacity
	// Seconds is the load's duration at that capacity: a provisioned
	// table's write capacity throughout; an on-demand table's warm
	// throughput, doubled every load.OnDemandPeakWindow (DynamoDB takes
	// twice the previous peak within that window, not more), up to its
	// maximum; and never less than HotSeconds.
	Seconds float64
	// HotSeconds is the largest item collection's share: one partition
	// takes load.PartitionWCU write units per second, whatever the table.
	HotSeconds float64
}

// WarmLoad estimates writing units write units (table plus indexes, as
// the writer counts them), hot of them to the largest item collection,
// into a table of capacity t. The zero Warm when t is unknown.
func WarmLoad(units, hot int64, t load.TableCapacity) Warm {
	if t.WCU <= 0 {
		return Warm{}
	}
	w := Warm{Table: t, HotSeconds: float64(hot) / load.PartitionWCU}
	rate, left := t.WCU, float64(units)
	if t.MaxWCU > 0 {
		rate = min(rate, t.MaxWCU)
	}
	window := load.OnDemandPeakWindow.Seconds()
	for t.OnDemand && left > rate*window && (t.MaxWCU <= 0 || rate < t.MaxWCU) {
		left -= rate * window
		w.Seconds += window
		rate *= 2
		if t.MaxWCU > 0 {
			rate = min(rate, t.MaxWCU)
		}
	}
	w.Seconds += left / rate
	w.Seconds = math.Max(w.Seconds, w.HotSeconds)
	return w
}

// CollectionWriteUnits approximates an item collection's table write
// units from its items and bytes: at least one per item, one per KB.
func CollectionWriteUnits(p Partition) int64 {
	return max(p.Items, (p.Bytes+1023)/1024)
}
