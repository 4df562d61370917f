package contract

import "time"

// EntityStats counts the work done for one entity (Origin.Entity) or in total.
type EntityStats struct {
	Written   int64 // items DynamoDB acknowledged
	Retries   int64 // item sends beyond the first (re-sent after a failed call or as UnprocessedItems)
	Throttled int64 // item sends DynamoDB throttled (a throttling error for their call, or returned unprocessed)
	WCU       int64 // write units of the acknowledged items, table plus indexes (see load.ItemWriteUnits)
}

// Add adds o's counts to s.
func (s *EntityStats) Add(o EntityStats) {
	s.Written += o.Written
	s.Retries += o.Retries
	s.Throttled += o.Throttled
	s.WCU += o.WCU
}

// Stats describes one Write call.
type Stats struct {
	Total    EntityStats
	Entities map[string]EntityStats // by Origin.Entity ("" for items without one)

	Calls          int64 // BatchWriteItem calls made by the writer (SDK-internal attempts not included)
	SDKRetries     int64 // attempts the SDK retried inside successful calls
	ThrottledCalls int64 // calls that failed with throttling or returned UnprocessedItems, plus SDK-internal throttled attempts
	Duplicates     int64 // duplicates skipped under load.Config.OnDuplicate "skip"
	ItemErrors     int64 // row errors
	Elapsed        time.Duration

	// DirectCalls are the calls sent without the SDK's per-call
	// middleware (see "Request bodies" in package load's documentation);
	// DirectFallbacks, those whose answer would have stopped the run and
	// that were made again through the SDK whole.
	DirectCalls, DirectFallbacks int64
}
