package load

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// Checker makes the checks a Writer makes on every item before sending it
// (attributes present and non-nil, key attributes scalar, non-empty and
// within DynamoDB's length limits, the 400 KB item limit, duplicate keys),
// for a target that stores items somewhere else than a table, such as an
// export to files that DynamoDB's Import from S3 loads later: such a target
// must refuse exactly what a Writer would refuse, because nothing checks
// the items again before they land in a table. Both run the same code
// (itemChecks); a Checker measures an item in one walk over its attributes
// where a Writer also encodes its request in that walk. Its memory is the
// Writer's: the RecentKeys most recent keys, so that, as for a Writer, a
// duplicate of an older key is found by the caller's check of all keys
// (see "Duplicates" in the package documentation).
//
// A Checker is used by one goroutine.
type Checker struct {
	checks itemChecks
}

// NewChecker returns a Checker for the table's keys and indexes in cfg
// (defaults applied; Table may be empty, the other fields of a Writer's
// Config that matter are OnDuplicate, RecentKeys and UniqueEntities).
func NewChecker(cfg Config) (*Checker, error) {
	if cfg.Table == "" {
		cfg.Table = "-" // not needed to check items
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Checker{checks: newItemChecks(cfg)}, nil
}

// Check checks one item and records its key. It returns nil for an item to
// store, or the row error a Writer would report for it. skip is true for a
// confirmed duplicate under OnDuplicateSkip, which a Writer acknowledges
// without writing it; the caller should do the same.
func (c *Checker) Check(it contract.Item) (ie *contract.ItemError, skip bool) {
	var size int
	var err error
	if it.Delete {
		size, err = ddbvalue.MeasureItem(keyAttrs(it.Attrs, c.checks.cfg.PartitionKey, c.checks.cfg.SortKey))
	} else {
		size, err = ddbvalue.MeasureItem(it.Attrs)
	}
	_, ie, skip = c.checks.check(it, size, err)
	return ie, skip
}

// Key returns the canonical primary key of an item: equal for two items
// DynamoDB stores under the same key (numbers compared by value).
func (c *Checker) Key(attrs map[string]types.AttributeValue) string {
	return string(AppendKey(make([]byte, 0, 64), attrs, c.checks.cfg.PartitionKey, c.checks.cfg.SortKey))
}

// DisplayKey renders an item's primary key for messages, as row errors
// do: PK="CUSTOMER#42" SK="PROFILE".
func (c *Checker) DisplayKey(attrs map[string]types.AttributeValue) string {
	return displayKey(attrs, c.checks.cfg.PartitionKey, c.checks.cfg.SortKey)
}

// itemChecks are the checks of every item, a Writer's and a Checker's: the
// same rules, in the same order, with the same messages.
type itemChecks struct {
	cfg    Config
	dedupe *dedupe
	unique map[string]bool // Config.UniqueEntities: no duplicate check
}

func newItemChecks(cfg Config) itemChecks {
	c := itemChecks{cfg: cfg, dedupe: newDedupe(cfg.RecentKeys), unique: map[string]bool{}}
	for _, e := range cfg.UniqueEntities {
		c.unique[e] = true
	}
	return c
}

// check checks it, given what the caller's one walk over its attributes
// found (encoding its request, or measure): its size by ItemSize and
// ddbvalue.ErrNilValue or ddbvalue.ErrUnknownValue. It records the item's key for the
// duplicate check, unless the item's entity has unique keys (key is then
// ""). It returns the refusal, if any, or skip for a duplicate skipped
// under OnDuplicateSkip (logged here).
func (c *itemChecks) check(it contract.Item, size int, walkErr error) (key string, ie *contract.ItemError, skip bool) {
	cfg := c.cfg
	if len(it.Attrs) == 0 {
		return "", &contract.ItemError{Origin: it.Origin, Reason: "item has no attributes", Err: ErrInvalidKey}, false
	}
	display := func() string { return displayKey(it.Attrs, cfg.PartitionKey, cfg.SortKey) }
	switch {
	case errors.Is(walkErr, ddbvalue.ErrNilValue):
		return "", &contract.ItemError{Origin: it.Origin, Key: display(), Reason: fmt.Sprintf("attribute %q has no value (nil)", nilAttr(it.Attrs)), Err: ErrInvalidItem}, false
	case walkErr != nil:
		return "", &contract.ItemError{Origin: it.Origin, Key: display(), Reason: walkErr.Error(), Err: ErrInvalidItem}, false
	}
	if reason, err := c.checkKeys(it.Attrs); err != nil {
		return "", &contract.ItemError{Origin: it.Origin, Key: display(), Reason: reason, Err: err}, false
	}
	if size > MaxItemSize {
		return "", &contract.ItemError{
			Origin: it.Origin, Key: display(), Err: ErrItemTooLarge,
			Reason: fmt.Sprintf("item is %d bytes, over DynamoDB's 400 KB (%d-byte) item limit", size, MaxItemSize),
		}, false
	}
	if c.unique[it.Origin.Entity] {
		return "", nil, false
	}
	key = string(AppendKey(make([]byte, 0, 64), it.Attrs, cfg.PartitionKey, cfg.SortKey))
	switch state, first := c.dedupe.add(key, it.Origin, cfg.RecentKeys); state {
	case dupConfirmed:
		if cfg.OnDuplicate == OnDuplicateSkip {
			cfg.Logger.Warn("load: skipping duplicate key", "key", display(), "origin", it.Origin.String(), "first", first.String())
			return key, nil, true
		}
		return key, &contract.ItemError{
			Origin: it.Origin, Key: display(), Err: ErrDuplicateKey,
			Reason: fmt.Sprintf("duplicate key: %s has the same key; two items of one run must not share a primary key (check the mapping's key templates)", first),
		}, false
	case dupUnconfirmed:
		return key, &contract.ItemError{
			Origin: it.Origin, Key: display(), Err: ErrDuplicateKey,
			Reason: fmt.Sprintf("duplicate key: an earlier item of this run had the same key, but it is no longer among the %d recent keys kept to name it", cfg.RecentKeys),
		}, false
	}
	return key, nil, false
}

// checkKeys checks the table's and the indexes' key attributes of an item.
func (c *itemChecks) checkKeys(attrs map[string]types.AttributeValue) (string, error) {
	cfg := c.cfg
	if reason, err := checkKeyAttr(attrs, cfg.PartitionKey, "", "partition key", MaxPartitionKeyBytes, true); err != nil {
		return reason, err
	}
	if cfg.SortKey != "" {
		if reason, err := checkKeyAttr(attrs, cfg.SortKey, "", "sort key", MaxSortKeyBytes, true); err != nil {
			return reason, err
		}
	}
	for _, ix := range cfg.Indexes {
		if reason, err := checkKeyAttr(attrs, ix.PartitionKey, ix.Name, "partition key", MaxPartitionKeyBytes, false); err != nil {
			return reason, err
		}
		if ix.SortKey != "" {
			if reason, err := checkKeyAttr(attrs, ix.SortKey, ix.Name, "sort key", MaxSortKeyBytes, false); err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}
