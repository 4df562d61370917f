// Package report renders what `migrate plan`, `migrate verify` and
// `migrate prune` found: as terminal text ([Text], [VerifyText],
// [PruneText]; colour optional), GitHub markdown ([Markdown],
// [VerifyMarkdown], [PruneMarkdown]), JSON ([JSON], [VerifyJSON],
// [PruneJSON]) and
// one self-contained HTML page ([HTML]: inline CSS and inline SVG charts,
// no script, nothing fetched). It is pure: it formats the documents it is
// given and computes nothing else.
//
// # JSON schema
//
// The JSON documents are the types [Plan] and [Verify] encoded with
// encoding/json; each field's comment in schema.go is its documentation.
// Their JSON Schemas (draft 2020-12) are published as
// docs/schema/plan.schema.json and docs/schema/verify.schema.json; this
// package's tests keep them equal to the Go types.
// The "schema" field names the document and its version:
//
//	migrate.plan/v1    Plan
//	migrate.verify/v1  Verify
//
// Fields added within v1 (absent from documents of earlier releases):
// capacity.import and capacity.cheaper, the import path the plan compares
// with writes.
//
// Stability rules, which consumers may rely on within a version:
//
//   - fields are never removed, renamed or given another meaning; new
//     fields may appear, so ignore the ones you do not know;
//   - lists are always present ([] when empty, never null); optional
//     objects and strings (maxItem, key, origin, sortKey, old, new) are
//     omitted when absent;
//   - counts are integers, sizes are bytes (DynamoDB's item size rules,
//     1 KB = 1024 bytes), costs are USD, durations seconds;
//   - keys are {"pk": "...", "sk": "..."} text (numbers canonical, binary
//     base64); attribute values are DynamoDB JSON with type tags, e.g.
//     {"S": "Oslo"}, {"N": "12.5"}, {"M": {"city": {"S": "Oslo"}}};
//   - detail lists are in table key order and capped at maxDetails, while
//     summary counts are complete.
//
// A complete example is testdata/plan.json (plan) and
// testdata/verify.json (verify), the golden files of this package's tests:
//
//	{
//	  "schema": "migrate.plan/v1",
//	  "generatedAt": "2025-01-02T03:04:05Z",
//	  "mapping": "testdata/bookstore.yaml",
//	  "table": {"name": "Bookstore", "exists": true, "partitionKey": "PK", "sortKey": "SK", "entityAttribute": "type"},
//	  "reads": {"mode": "scan", "consistent": false, "staleChecked": true, "calls": 8, "itemsRead": 2345, "readUnits": 61.5, "seconds": 1.9},
//	  "summary": {"expected": 2345, "create": 4, "change": 7, "unchanged": 2334, "stale": 6, "foreign": 0, "problems": 0},
//	  "entities": [{"entity": "Customer", "source": "public.customers", "expected": 61, "create": 1, ...}],
//	  "creates": [{"key": {"pk": "CUSTOMER#61", "sk": "PROFILE"}, "entity": "Customer", "origin": "public.customers customer_id=61"}],
//	  "changes": [{"key": {...}, "entity": "Customer", "origin": "...", "attributes": [{"path": "name", "op": "changed", "old": {"S": "Ann"}, "new": {"S": "Anna"}}]}],
//	  "stale": [{"key": {...}, "entity": "Order"}],
//	  "problems": [],
//	  "maxDetails": 20,
//	  "capacity": {"items": 2345, "bytes": ..., "writeUnits": {"table": ..., "indexes": ..., "total": ..., "createsAndChanges": ...}, ...,
//	               "import": {"uncompressedBytes": ..., "pricePerGB": 0.15, "estimatedCostUSD": ..., "gbPerHour": 20, ...}, "cheaper": "import"}
//	}
package report
