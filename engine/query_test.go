package engine

import (
	"slices"
	"testing"

	"github.com/pgdynamo/migrate/mapping"
)

func TestShardKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tpl, pk string
		n       int
		want    []string
		bad     bool
	}{
		{"STATUS#{status}#{shard}", "STATUS#OPEN", 3, []string{"STATUS#OPEN#0", "STATUS#OPEN#1", "STATUS#OPEN#2"}, false},
		{"STATUS#{status}#{shard}", "STATUS#OPEN#", 2, []string{"STATUS#OPEN#0", "STATUS#OPEN#1"}, false},
		{"{shard}#DAY#{day}", "DAY#2024-05-01", 2, []string{"0#DAY#2024-05-01", "1#DAY#2024-05-01"}, false},
		{"S#{shard}#{status}", "S#OPEN", 2, []string{"S#0#OPEN", "S#1#OPEN"}, false},
		{"EMAIL#{email}", "EMAIL#a@b", 0, []string{"EMAIL#a@b"}, false},
		{"{status}#{shard}#{day}", "OPEN#2024", 2, nil, true},
		{"STATUS#{status}#{shard}", "STATUS#OPEN", 0, nil, true},
	} {
		tpl, err := mapping.ParseTemplate(tc.tpl)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ShardKeys(tpl, tc.pk, tc.n)
		if tc.bad != (err != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("ShardKeys(%q, %q, %d) = %q, %v; want %q", tc.tpl, tc.pk, tc.n, got, err, tc.want)
		}
	}
}
