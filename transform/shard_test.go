package transform_test

import (
	"testing"

	"github.com/pgdynamo/migrate/transform"
)

func TestShardCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		avg             float64
		rate            int64
		perRCU, raw, n  int
		partitionMaxReq int64
	}{
		{250, 600_000, 16, 13, 15, 48_000}, // the worked example of docs/modeling.md
		{4000, 3000, 1, 1, 2, 3000},
		{10_000, 1_000, 1, 1, 2, 3000}, // items over 4 KB still count one per RCU at least
		{100, 1, 40, 1, 2, 120_000},
		{0, 10_000, 1, 4, 5, 3000},
	}
	for _, tc := range cases {
		got := transform.ShardCount(tc.avg, tc.rate)
		if got.ItemsPerRCU != tc.perRCU || got.Raw != tc.raw || got.Count != tc.n || got.PartitionMaxReadRate != tc.partitionMaxReq {
			t.Errorf("ShardCount(%v, %d) = %+v, want perRCU %d raw %d n %d", tc.avg, tc.rate, got, tc.perRCU, tc.raw, tc.n)
		}
	}
}
