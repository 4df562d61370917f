package contract

import (
	"context"
	"iter"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Source is a set of stored items that a run loads instead of reading the
// database (engine.RunConfig.Export): an export read back fits.
type Source interface {
	// ID identifies the source and the files taken from it; the state
	// file records it, and a resumed run continues only the same.
	ID() string
	// MappingSHA256 is the hash of the mapping the items were made with.
	MappingSHA256() string
	// Files are the data files to load, in order.
	Files() []SourceFile
	// Items reads one file's items, starting after line after (0: from
	// the first line).
	Items(ctx context.Context, file string, after int64) iter.Seq2[SourceItem, error]
}

// SourceFile is one data file of a Source.
type SourceFile struct {
	Name     string
	Items    int64
	Entities map[string]int64 // items per entity
}

// SourceItem is one line of a data file: one item.
type SourceItem struct {
	Line  int64 // 1 for the first line
	Attrs map[string]types.AttributeValue
}
