package transform

import (
	"fmt"
	"math"
)

// ShardInputs are the numbers a shard count is computed from, kept so that
// the run and the plan report can print them.
type ShardInputs struct {
	AvgItemBytes         float64
	SampleItems          int   // items AvgItemBytes was measured on; 0 = not said
	ItemsPerRCU          int   // 4 KB / average item size, at least 1
	PartitionMaxReadRate int64 // 3000 read units per second per partition
	ReadRate             int64 // declared items per second at peak
	Raw                  int   // ReadRate / PartitionMaxReadRate, rounded up
	Count                int   // Raw padded by 15% for headroom and uneven hashing
}

// String renders the computation from item size to padded count.
func (s ShardInputs) String() string {
	sample := ""
	if s.SampleItems > 0 {
		sample = fmt.Sprintf(" (sample of %d items)", s.SampleItems)
	}
	return fmt.Sprintf("avg item %.0f B%s -> %d items/RCU -> %d items/s per partition; readRate %d -> %d shards, padded to %d",
		s.AvgItemBytes, sample, s.ItemsPerRCU, s.PartitionMaxReadRate, s.ReadRate, s.Raw, s.Count)
}

// ShardCount applies the formula of docs/modeling.md rule 7:
//
//	ItemsPerRCU          = 4 KB / average item size
//	PartitionMaxReadRate = 3000 * ItemsPerRCU
//	N                    = MaxRequiredIO / PartitionMaxReadRate, then padded
//
// 250-byte items and 600,000 items/s give 16, 48,000, 12.5 -> 13, padded 15.
func ShardCount(avgItemBytes float64, readRate int64) ShardInputs {
	in := ShardInputs{AvgItemBytes: avgItemBytes, ReadRate: readRate}
	in.ItemsPerRCU = 1
	if avgItemBytes > 0 {
		in.ItemsPerRCU = max(1, int(4096/avgItemBytes))
	}
	in.PartitionMaxReadRate = 3000 * int64(in.ItemsPerRCU)
	in.Raw = max(1, int(math.Ceil(float64(readRate)/float64(in.PartitionMaxReadRate))))
	in.Count = max(1, int(math.Ceil(float64(in.Raw)*1.15)))
	return in
}
