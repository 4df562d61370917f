package load

import (
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestCapacityOf(t *testing.T) {
	t.Parallel()
	onDemand := &types.BillingModeSummary{BillingMode: types.BillingModePayPerRequest}
	for _, tc := range []struct {
		name string
		desc *types.TableDescription
		want TableCapacity
	}{
		{"nil", nil, TableCapacity{}},
		// An emulator describes no warm throughput: unknown, unlimited.
		{"on demand, no warm throughput", &types.TableDescription{BillingModeSummary: onDemand,
			ProvisionedThroughput: &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(0)}},
			TableCapacity{OnDemand: true}},
		{"new on-demand table on AWS", &types.TableDescription{BillingModeSummary: onDemand,
			WarmThroughput: &types.TableWarmThroughputDescription{WriteUnitsPerSecond: aws.Int64(4000)}},
			TableCapacity{WCU: 4000, OnDemand: true}},
		{"on demand, warm", &types.TableDescription{BillingModeSummary: onDemand,
			WarmThroughput: &types.TableWarmThroughputDescription{WriteUnitsPerSecond: aws.Int64(12000)}},
			TableCapacity{WCU: 12000, OnDemand: true}},
		{"on demand, warm and a maximum", &types.TableDescription{BillingModeSummary: onDemand,
			WarmThroughput:     &types.TableWarmThroughputDescription{WriteUnitsPerSecond: aws.Int64(6000)},
			OnDemandThroughput: &types.OnDemandThroughput{MaxWriteRequestUnits: aws.Int64(5000)}},
			TableCapacity{WCU: 6000, OnDemand: true, MaxWCU: 5000}},
		{"provisioned", &types.TableDescription{
			BillingModeSummary:    &types.BillingModeSummary{BillingMode: types.BillingModeProvisioned},
			ProvisionedThroughput: &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(3000)},
			WarmThroughput:        &types.TableWarmThroughputDescription{WriteUnitsPerSecond: aws.Int64(8000)}},
			TableCapacity{WCU: 3000}},
		{"provisioned with indexes", &types.TableDescription{
			ProvisionedThroughput: &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(3000)},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{
				{ProvisionedThroughput: &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(500)}}, {}}},
			TableCapacity{WCU: 3500}},
		{"provisioned without a billing summary", &types.TableDescription{
			ProvisionedThroughput: &types.ProvisionedThroughputDescription{WriteCapacityUnits: aws.Int64(50)}},
			TableCapacity{WCU: 50}},
		{"provisioned without throughput", &types.TableDescription{}, TableCapacity{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := CapacityOf(tc.desc); got != tc.want {
				t.Errorf("CapacityOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCreateTableInputWarm(t *testing.T) {
	t.Parallel()
	cfg := Config{Table: "t", PartitionKey: "PK"}
	if in := CreateTableInput(cfg); in.WarmThroughput != nil {
		t.Errorf("warm throughput without WarmWCU: %+v", in.WarmThroughput)
	}
	cfg.WarmWCU = 9000
	in := CreateTableInput(cfg)
	if in.WarmThroughput == nil || aws.ToInt64(in.WarmThroughput.WriteUnitsPerSecond) != 9000 || in.WarmThroughput.ReadUnitsPerSecond != nil {
		t.Errorf("warm throughput = %+v, want 9000 writes/s", in.WarmThroughput)
	}
	cfg.WarmWCU = -1
	if err := cfg.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "warm WCU") {
		t.Errorf("negative warm WCU: %v", err)
	}
}

// A writer that knows the table's capacity starts at it: the first
// second's calls go out at that rate, not unlimited.
func TestLimiterStartsAtTableCapacity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		max    float64
		start  TableCapacity
		want   float64
		unlimt bool
	}{
		{"unknown", 0, TableCapacity{}, 0, true},
		{"unknown, capped", 500, TableCapacity{}, 500, false},
		{"provisioned", 0, TableCapacity{WCU: 3000}, 3000, false},
		{"on demand", 0, TableCapacity{WCU: 4000, OnDemand: true}, 4000, false},
		{"warm", 0, TableCapacity{WCU: 12000, OnDemand: true}, 12000, false},
		{"warm, on-demand maximum", 0, TableCapacity{WCU: 12000, OnDemand: true, MaxWCU: 5000}, 5000, false},
		{"capped below the table", 1000, TableCapacity{WCU: 4000, OnDemand: true}, 1000, false},
		{"floor above a tiny table", 0, TableCapacity{WCU: 5}, 25, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newFakeClock()
			l := newLimiter(clk, slog.New(slog.DiscardHandler), tc.max, 25, tc.start)
			if got := l.Rate(); got != tc.want {
				t.Fatalf("starting rate = %v, want %v", got, tc.want)
			}
			if tc.unlimt {
				return
			}
			// A full second's worth goes at once, the next unit waits.
			if d := mustWait(t, l, int(tc.want)); d != 0 {
				t.Errorf("the first second's %v units waited %v", tc.want, d)
			}
			if d := mustWait(t, l, 1); d == 0 {
				t.Errorf("a unit beyond the first second did not wait")
			}
		})
	}
}

// An on-demand table takes at most twice its previous peak: the writer
// starts at the table's 4,000, never goes beyond twice the highest second
// it saw accepted (nor below the start), and does grow past the start when
// nothing is refused.
func TestLimiterFollowsDoublingRule(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimiter(clk, slog.New(slog.DiscardHandler), 0, 25, TableCapacity{WCU: 4000, OnDemand: true})
	if l.Rate() != 4000 {
		t.Fatalf("starting rate = %v, want 4000", l.Rate())
	}
	// As after a decrease that found a large capacity: the rate climbs by
	// a quarter of the gap per window, and only the doubling rule holds it.
	l.capacity = 1e9
	// The tracker's seconds start at its first answer: a sliding window of
	// 1.1 s in steps of 100 ms holds each of them.
	const step = 100 * time.Millisecond
	var steps []float64
	peak, grown := 0.0, false
	for i := range 100 {
		r := drive(l, clk, step, 0, 2e4, func(float64) float64 { return 0 })
		steps = append(steps, r.accepted)
		sum := 0.0
		for _, a := range steps[max(0, len(steps)-11):] {
			sum += a
		}
		peak = max(peak, sum)
		if limit := max(4000, 2*peak); l.Rate() > limit+1e-9 {
			t.Fatalf("at %v: rate %.0f beyond twice the peak so far %.0f", time.Duration(i+1)*step, l.Rate(), peak)
		}
		grown = grown || l.Rate() > 4000
	}
	if !grown || l.Rate() < 8000 {
		t.Errorf("rate after 10 s without refusals = %.0f, want past twice the start", l.Rate())
	}
	if math.IsInf(l.ceiling(clk.Now()), 1) {
		t.Errorf("an on-demand table has no ceiling")
	}
}

// The ceiling is twice the highest second within the last 30 minutes, and
// never below the capacity the table started with.
func TestLimiterCeilingDoubles(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := newLimiter(clk, slog.New(slog.DiscardHandler), 0, 25, TableCapacity{WCU: 4000, OnDemand: true})
	if got := l.ceiling(clk.Now()); got != 4000 {
		t.Fatalf("ceiling of a new table = %v, want 4000", got)
	}
	// 5,000 units/s accepted for 3 s (200 calls of 25 per second), then
	// 1,000 units/s for 10 s.
	answer := func(secs, calls int) {
		for range secs * calls {
			clk.Advance(time.Second / time.Duration(calls))
			l.Answered(clk.Now().Add(-10*time.Millisecond), 25, 0)
		}
	}
	answer(3, 200)
	answer(10, 40)
	if got := l.ceiling(clk.Now()); math.Abs(got-10000) > 25 {
		t.Errorf("ceiling after a peak of 5,000 units/s = %v, want 10000", got)
	}
	clk.Advance(OnDemandPeakWindow)
	if got := l.ceiling(clk.Now()); got != 4000 {
		t.Errorf("ceiling 30 minutes after the peak = %v, want the table's 4000", got)
	}
	// A maximum below the rule wins.
	l = newLimiter(clk, slog.New(slog.DiscardHandler), 3000, 25, TableCapacity{WCU: 4000, OnDemand: true})
	if got := l.ceiling(clk.Now()); got != 3000 {
		t.Errorf("ceiling with a maximum of 3000 = %v", got)
	}
}

// A provisioned table's capacity is the highest rate, unless a maximum is
// configured (as under auto scaling).
func TestLimiterProvisionedCeiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, want float64
	}{{0, 3000}, {5000, 5000}} {
		clk := newFakeClock()
		l := newLimiter(clk, slog.New(slog.DiscardHandler), tc.max, 25, TableCapacity{WCU: 3000})
		drive(l, clk, 30*time.Second, 0, 1e4, func(float64) float64 { return 0 })
		if got := l.Rate(); got != tc.want {
			t.Errorf("max %v: rate after 30 s without refusals = %v, want %v", tc.max, got, tc.want)
		}
	}
}
