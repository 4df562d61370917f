package load

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDB's capacity rules that the writer plans with (documented by AWS).
const (
	// OnDemandInitialWCU is what a new on-demand table without warm
	// throughput serves at once, in write units per second.
	OnDemandInitialWCU = 4000
	// PartitionWCU is what one partition takes, in write units per second.
	PartitionWCU = 1000
	// OnDemandPeakWindow is how far back an on-demand table remembers its
	// peak: traffic above twice the peak of this window may be throttled.
	OnDemandPeakWindow = 30 * time.Minute
)

// TableCapacity is what a table takes when a write begins, from its
// description (CapacityOf). The zero value means unknown.
type TableCapacity struct {
	// WCU is the write units per second the table takes at once: an
	// on-demand table's warm throughput (AWS describes it for every table,
	// a new one's is OnDemandInitialWCU; an emulator describes none),
	// a provisioned table's write capacity (and its indexes'), which is
	// also the most the writer sends unless Config.MaxWCU is set. 0 means
	// unknown: the writer starts unlimited and measures what DynamoDB
	// accepts.
	WCU float64
	// OnDemand says the table follows on-demand's doubling rule: beyond
	// WCU it takes at most twice the peak it served within
	// OnDemandPeakWindow.
	OnDemand bool
	// MaxWCU is an on-demand table's configured maximum write request
	// units per second (OnDemandThroughput), 0 for none.
	MaxWCU float64
}

// CapacityOf is what the described table takes at once. A provisioned
// table takes its provisioned write capacity and its global indexes'
// (its warm throughput may be higher, but the provisioned capacity is
// what it throttles at); an
// on-demand table its warm throughput. An on-demand table that describes
// none (DynamoDB Local, which throttles nothing) has an unknown WCU: the
// writer starts unlimited, as it measures what an endpoint accepts.
func CapacityOf(t *types.TableDescription) TableCapacity {
	if t == nil {
		return TableCapacity{}
	}
	if t.BillingModeSummary == nil || t.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		if t.ProvisionedThroughput == nil {
			return TableCapacity{}
		}
		// The writer counts index writes in its units (ItemWriteUnits), and
		// each global index has capacity of its own.
		wcu := max(0, aws.ToInt64(t.ProvisionedThroughput.WriteCapacityUnits))
		for _, ix := range t.GlobalSecondaryIndexes {
			if ix.ProvisionedThroughput != nil && wcu > 0 {
				wcu += max(0, aws.ToInt64(ix.ProvisionedThroughput.WriteCapacityUnits))
			}
		}
		return TableCapacity{WCU: float64(wcu)}
	}
	c := TableCapacity{OnDemand: true}
	if w := t.WarmThroughput; w != nil && aws.ToInt64(w.WriteUnitsPerSecond) > 0 {
		c.WCU = float64(aws.ToInt64(w.WriteUnitsPerSecond))
	}
	if t.OnDemandThroughput != nil && aws.ToInt64(t.OnDemandThroughput.MaxWriteRequestUnits) > 0 {
		c.MaxWCU = float64(aws.ToInt64(t.OnDemandThroughput.MaxWriteRequestUnits))
	}
	return c
}
