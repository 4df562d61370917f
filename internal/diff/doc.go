// Package diff compares the items a mapping produces ("expected") with the
// items a DynamoDB table holds ("target"), by primary key. It is pure: it
// never does I/O.
//
// # Rules
//
//   - Keys ([KeyOf]) are the partition and sort key values, numbers in
//     canonical form, encoded so that byte order is (partition key, sort key)
//     order and all items of one partition key are adjacent. The value
//     rules (canonical numbers, key encoding, equality, canonical JSON) are
//     package ddbvalue's.
//   - Values are equal (ddbvalue.Equal) when DynamoDB would store the same thing:
//     numbers compare by value ("1.50" = "1.5"), sets ignore order, lists and
//     maps compare element by element.
//   - An item's changes ([Changes]) are attribute-level, descending into maps
//     (path "addresses.home.city") and into lists of equal length ("lines[2]");
//     other differences replace the whole value.
//   - A key only in the expected stream is a create, in both an unchanged item
//     or a change, only in the target a stale item when its entity attribute
//     names an entity of the mapping, else a foreign item the mapping does not
//     own ([Classify]).
//   - An item's content hash ([Hash]) is the SHA-256 of its canonical JSON
//     (sorted attribute names, canonical numbers, sorted sets); a set of items
//     hashes to the sum of its items' hashes modulo 2^256 ([Sum]), which does
//     not depend on order and, unlike XOR, does not cancel duplicates.
//   - A sample ([InSample]) is chosen by a hash of the key, so that the same
//     keys are chosen on every run and on both sides.
//
// # Comparing without holding either side in memory
//
// Both sides can be far larger than memory, so neither is kept as a map.
// The caller writes each side's records ([EncodeRecord]) into an external
// merge sort keyed by [KeyOf] (package extsort: sorted runs of bounded size
// spilled to temporary files, merged with a heap), and [Join] walks the two
// sorted streams in step, handing over one key at a time with its expected
// and target records. Memory is the sort buffer plus one key's records.
//
// A sorted merge was chosen over hash-partitioning both sides into buckets:
// hash buckets need a second level of partitioning when one bucket outgrows
// memory and still cannot split one huge item collection, while sorted runs
// have no skew problem; the sort also delivers each partition key's items
// together, so item-collection sizes (hot partitions) are counted exactly in
// the same pass, and reports list keys in table order, deterministically.
// The price is O(n log n) CPU and writing both sides to disk once (twice
// when there are more runs than the merge fan-in).
package diff
