package load

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/pgdynamo/migrate/contract"
)

// A Checker refuses exactly what a Writer refuses, with the same error:
// the same sequence of items (bad ones, a duplicate, good ones) goes to
// both, and every verdict must agree.
func TestCheckerAgreesWithWriter(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	mod := func(pk string, f func(map[string]types.AttributeValue)) contract.Item {
		it := item(pk, "S")
		f(it.Attrs)
		return it
	}
	items := []contract.Item{
		item("P#1", "S"),
		mod("P#2", func(a map[string]types.AttributeValue) { a["blob"] = s(strings.Repeat("x", MaxItemSize)) }),
		mod("P#3", func(a map[string]types.AttributeValue) { a["blob"] = s(strings.Repeat("x", MaxItemSize-ItemSize(a)-4)) }),
		mod("P#4", func(a map[string]types.AttributeValue) { a["SK"] = s(strings.Repeat("s", 1025)) }),
		mod("P#5", func(a map[string]types.AttributeValue) { a["GSI1PK"] = s("") }),
		mod("P#6", func(a map[string]types.AttributeValue) { delete(a, "SK") }),
		mod("P#7", func(a map[string]types.AttributeValue) { a["PK"] = &types.AttributeValueMemberBOOL{Value: true} }),
		mod("P#8", func(a map[string]types.AttributeValue) {
			a["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": nil}}
		}),
		{Origin: contract.Origin{Table: "things", SourceKey: "empty"}},
		mod("P#1", func(a map[string]types.AttributeValue) {}), // duplicate of the first
		// The same key, with the number written another way.
		mod("P#9", func(a map[string]types.AttributeValue) { a["SK"] = &types.AttributeValueMemberN{Value: "1.50"} }),
		mod("P#9", func(a map[string]types.AttributeValue) { a["SK"] = &types.AttributeValueMemberN{Value: "1.5"} }),
		item("P#10", "S"),
	}
	for _, onDup := range []string{OnDuplicateFail, OnDuplicateSkip} {
		t.Run(onDup, func(t *testing.T) {
			t.Parallel()
			b := setup(t, withConfig(func(c *Config) { c.MaxItemErrors = -1; c.Concurrency = 1; c.OnDuplicate = onDup }))
			writerVerdicts := make([]string, len(items))
			in := make([]contract.Item, len(items))
			for i, it := range items {
				it.Ack = func() { writerVerdicts[i] = "ok" }
				it.Fail = func(e *contract.ItemError) { writerVerdicts[i] = verdict(e) }
				in[i] = it
			}
			_, _ = b.writer.Write(context.Background(), feed(in...))

			cfg := testConfig()
			cfg.Table, cfg.OnDuplicate = "", onDup
			c, err := NewChecker(cfg)
			if err != nil {
				t.Fatal(err)
			}
			skips := 0
			for i, it := range items {
				ie, skip := c.Check(it)
				got := "ok"
				if ie != nil {
					got = verdict(ie)
				}
				if skip {
					skips++
				}
				if got != writerVerdicts[i] {
					t.Errorf("item %d (%s): checker %q, writer %q", i, it.Origin.SourceKey, got, writerVerdicts[i])
				}
			}
			if want := map[string]int{OnDuplicateFail: 0, OnDuplicateSkip: 2}[onDup]; skips != want {
				t.Errorf("%d skips, want %d", skips, want)
			}
			dups := 0
			for _, v := range writerVerdicts {
				if strings.HasPrefix(v, ErrDuplicateKey.Error()) {
					dups++
				}
			}
			if onDup == OnDuplicateFail && dups != 2 {
				t.Errorf("writer verdicts %q: want two duplicates, the test proves nothing otherwise", writerVerdicts)
			}
		})
	}
}

// verdict renders a row error for comparison: its sentinel and reason.
func verdict(e *contract.ItemError) string {
	for _, s := range []error{ErrItemTooLarge, ErrKeyTooLong, ErrEmptyKey, ErrInvalidKey, ErrDuplicateKey, ErrInvalidItem} {
		if errors.Is(e, s) {
			return s.Error() + ": " + e.Key + ": " + e.Reason
		}
	}
	return "other: " + e.Error()
}
