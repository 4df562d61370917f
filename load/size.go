package load

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// ItemSize returns the size of an item by DynamoDB's rules ("Item sizes and
// formats" in the developer guide; see ddbvalue.ItemSize for them). The
// 400 KB item limit and write units are computed from this size.
func ItemSize(item map[string]types.AttributeValue) int {
	return ddbvalue.ItemSize(item)
}

// WriteUnits is the number of write capacity units a put of an item of size
// bytes consumes: one per started KB, at least one.
func WriteUnits(size int) int {
	return max(1, (size+1023)/1024)
}

// ItemWriteUnits is the write units a put of item consumes in the table and
// in every index of indexes the item appears in (it has the index's partition
// key and, if the index has one, its sort key). A write to an index costs
// by the size of the index entry (IndexEntrySize): the whole item for
// projection ALL, less for KEYS_ONLY and INCLUDE. tableKeys names the
// table's key attributes, which every index entry carries.
func ItemWriteUnits(item map[string]types.AttributeValue, indexes []Index, tableKeys ...string) int {
	size := ItemSize(item)
	n := WriteUnits(size)
	for _, ix := range indexes {
		if entry, ok := IndexEntrySize(item, size, ix, tableKeys...); ok {
			n += WriteUnits(entry)
		}
	}
	return n
}

// itemWriteUnits is ItemWriteUnits with the item's size known.
func itemWriteUnits(item map[string]types.AttributeValue, size int, cfg Config) int {
	n := WriteUnits(size)
	for _, ix := range cfg.Indexes {
		if entry, ok := IndexEntrySize(item, size, ix, cfg.PartitionKey, cfg.SortKey); ok {
			n += WriteUnits(entry)
		}
	}
	return n
}

// InIndex reports whether an item appears in an index: it has the index's
// partition key and, if the index has one, its sort key.
func InIndex(item map[string]types.AttributeValue, ix Index) bool {
	if _, ok := item[ix.PartitionKey]; !ok {
		return false
	}
	if ix.SortKey != "" {
		if _, ok := item[ix.SortKey]; !ok {
			return false
		}
	}
	return true
}

// IndexEntrySize is the size of an item's entry in an index (false when
// the item is not in it), by DynamoDB's rules: the whole item (size) for
// projection ALL; otherwise the table's and the index's key attributes
// plus, for INCLUDE, the projected attributes the item has. Storage adds
// IndexOverheadBytes per entry; write units do not.
func IndexEntrySize(item map[string]types.AttributeValue, size int, ix Index, tableKeys ...string) (int, bool) {
	if !InIndex(item, ix) {
		return 0, false
	}
	if ix.Projection == "" || ix.Projection == types.ProjectionTypeAll {
		return size, true
	}
	n := 0
	seen := make(map[string]bool, len(tableKeys)+2+len(ix.NonKeyAttributes))
	add := func(name string) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		if av, ok := item[name]; ok {
			size, _ := ddbvalue.ValueSize(av)
			n += len(name) + size
		}
	}
	for _, k := range tableKeys {
		add(k)
	}
	add(ix.PartitionKey)
	add(ix.SortKey)
	if ix.Projection == types.ProjectionTypeInclude {
		for _, a := range ix.NonKeyAttributes {
			add(a)
		}
	}
	return n, true
}

// IndexOverheadBytes is what DynamoDB adds to every item, and to every
// index entry, for storage.
const IndexOverheadBytes = 100
