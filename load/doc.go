// Package load writes transformed items into one DynamoDB table with
// BatchWriteItem, and never loses a write silently.
//
// A [Writer] consumes a channel of [contract.Item]s and:
//
//   - checks every item before sending it: key attributes present, scalar and
//     non-empty, partition key at most 2048 bytes, sort key at most 1024 bytes
//     (the same for GSI key attributes the item carries), item size at most
//     400 KB by DynamoDB's sizing rules ([ItemSize]). A failing item becomes an
//     [*contract.ItemError]; it is never dropped.
//   - refuses duplicate keys: two items with the same primary key in one run
//     is a mapping error naming both origins (see "Duplicates" below).
//   - buffers a window of items in buckets by partition-key hash and forms
//     batches round-robin over the buckets, so that a source sorted by key does
//     not hammer one partition at a time (see Config.Window).
//   - sends batches of at most 25 requests and 16 MB, Config.Concurrency at a
//     time; re-sends UnprocessedItems and retries throttling, 5xx,
//     connection errors and calls with no answer within Config.CallTimeout
//     with exponential backoff and full jitter (a batch
//     backing off lends its slot to another), each batch for at most
//     Config.MaxBatchElapsed from its first send, after which Write fails
//     with an error wrapping [ErrBatchTimeout].
//   - limits write units per second with a token bucket whose rate follows
//     what DynamoDB accepts: throttling and partial batches lower it in
//     proportion to the share refused, at most once per round trip, and
//     only while the refusals follow the rate; 5xx, dropped connections
//     and timeouts never do; it recovers within seconds (see ratelimit.go).
//   - calls contract.Item.Ack only once DynamoDB acknowledged the item. Items that are
//     still unacknowledged when Write returns an error are never acknowledged.
//
// # Validation errors
//
// A ValidationException for a whole batch cannot be attributed to one item,
// so the writer re-sends that batch's items one per call: the items that
// DynamoDB accepts are written and acknowledged, the ones it rejects become
// [*contract.ItemError]s carrying DynamoDB's message. Config.MaxItemErrors decides how
// many row errors Write tolerates before it stops; with the default (0) the
// first one stops the run. Write reports every row error it collected.
//
// # Duplicates
//
// The writer keeps the key and origin of the Config.RecentKeys most recent
// items (default 65,536, about 150-250 bytes each): an item whose key is
// among them is a duplicate, a row error naming both origins, found before
// it is written. Its memory does not grow with the table, so a duplicate
// of an older key is not found here: package engine proves most mappings'
// keys unique from the source's unique keys (Config.UniqueEntities lists
// those entities, whose items skip the check entirely) and checks the keys
// of the other entities' written items on disk at the end of the run. With
// OnDuplicate "skip", duplicates found are skipped (counted in
// Stats.Duplicates and acknowledged at once, since they need no write).
//
// A Writer remembers keys across its Write calls: use one Writer per run.
//
// # Request bodies
//
// The writer encodes each item's request of the BatchWriteItem body when
// it accepts the item, in the walk over its attributes that also measures
// its size and finds nil values; a call's body is these requests in the
// envelope. The encoding is the SDK's, escaping included (a test compares
// them). Clients that are not *dynamodb.Client receive the same requests
// in the input.
//
// With a client [NewClient] built, the writer's first call goes through the
// SDK whole (input validation, endpoint resolution, identity, SigV4
// signing, transport, decoding), and the writer records the request the
// SDK built. Later calls repeat it without the SDK's middleware stack,
// which costs more CPU per call than anything else the SDK does for it:
// the same URL, operation headers (an allow-list; a request with any other
// header is never repeated) and signing scope, the client's own
// credentials provider, SigV4 signer (over the body's SHA-256, at the
// SDK's clock offset) and HTTP client, a new invocation id and attempt
// header. Only a plain success (200, CRC-32 checked, no UnprocessedItems)
// is decoded by the writer; every other answer, and every transport error,
// is handed to the SDK as if its HTTP client had received it, so errors
// and unprocessed items have the SDK's own types; an answer that would
// stop the run is confirmed by making the call again through the SDK
// whole (Stats.DirectFallbacks; see direct.go). Any other
// *dynamodb.Client, such as one a caller built with their own middleware,
// goes through the SDK whole on every call.
//
// # Retries
//
// The writer owns the retries of its BatchWriteItem calls: it asks the SDK
// for one attempt per call, so that every throttled attempt reaches the
// rate limiter at once and every re-send waits for it. [NewClient]
// configures the SDK's standard retryer (a few attempts, no client-side
// retry quota) for the other calls. With a client that retries anyway, the
// writer reads the per-attempt results from a successful call's metadata
// and counts those retries and throttles in Stats and its rate limiter.
//
// # Unreachable endpoints
//
// A dial error (connection refused, dial timeout) before the writer ever got
// an answer from DynamoDB fails Write at once: a wrong endpoint must fail in
// seconds. After a first answer, dial errors are retried like other
// transient errors.
//
// # In the pipeline
//
// Package engine draws it whole:
//
//	mapping ──► extract ──► transform ──► engine ──► LOAD (the Target)
//
// load imports only the AWS SDK: it writes items, whatever made them. The
// engine declares the Target interface it consumes; the Writer is its
// first implementation.
package load
