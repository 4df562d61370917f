package load

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Checker makes the checks a Writer makes on every item before sending it
// (attributes present and non-nil, key attributes scalar, non-empty and
// within DynamoDB's length limits, the 400 KB item limit, duplicate keys),
// for a target that stores items somewhere else than a table, such as an
// export to files that DynamoDB's Import from S3 loads later: such a target
// must refuse exactly what a Writer would refuse, because nothing checks
// the items again before they land in a table. Its memory grows with the
// items checked as the Writer's does (see "Duplicates" in the package
// documentation).
//
// A Checker is used by one goroutine.
type Checker struct {
	cfg    Config
	dedupe *dedupe
}

// NewChecker returns a Checker for the table's keys and indexes in cfg
// (defaults applied; Table may be empty, the other fields of a Writer's
// Config that matter are OnDuplicate and RecentKeys).
func NewChecker(cfg Config) (*Checker, error) {
	if cfg.Table == "" {
		cfg.Table = "-" // not needed to check items
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Checker{cfg: cfg, dedupe: newDedupe(cfg.RecentKeys)}, nil
}

// Check checks one item and records its key. It returns nil for an item to
// store, or the row error a Writer would report for it. skip is true for a
// confirmed duplicate under OnDuplicateSkip, which a Writer acknowledges
// without writing it; the caller should do the same.
func (c *Checker) Check(it Item) (ie *ItemError, skip bool) {
	if len(it.Attrs) == 0 {
		return &ItemError{Origin: it.Origin, Reason: "item has no attributes", Err: ErrInvalidKey}, false
	}
	key := func() string { return displayKey(it.Attrs, c.cfg.PartitionKey, c.cfg.SortKey) }
	if name := nilAttr(it.Attrs); name != "" {
		return &ItemError{Origin: it.Origin, Key: key(), Reason: fmt.Sprintf("attribute %q has no value (nil)", name), Err: ErrInvalidItem}, false
	}
	if reason, err := checkItemKeys(c.cfg, it.Attrs); err != nil {
		return &ItemError{Origin: it.Origin, Key: key(), Reason: reason, Err: err}, false
	}
	if size := ItemSize(it.Attrs); size > MaxItemSize {
		return &ItemError{
			Origin: it.Origin, Key: key(), Err: ErrItemTooLarge,
			Reason: fmt.Sprintf("item is %d bytes, over DynamoDB's 400 KB (%d-byte) item limit", size, MaxItemSize),
		}, false
	}
	switch state, first := c.dedupe.add(c.Key(it.Attrs), it.Origin, c.cfg.RecentKeys); state {
	case dupConfirmed:
		if c.cfg.OnDuplicate == OnDuplicateSkip {
			c.cfg.Logger.Warn("load: skipping duplicate key", "key", key(), "origin", it.Origin.String(), "first", first.String())
			return nil, true
		}
		return &ItemError{
			Origin: it.Origin, Key: key(), Err: ErrDuplicateKey,
			Reason: fmt.Sprintf("duplicate key: %s has the same key; two items of one run must not share a primary key (check the mapping's key templates)", first),
		}, false
	case dupUnconfirmed:
		return &ItemError{
			Origin: it.Origin, Key: key(), Err: ErrDuplicateKey,
			Reason: fmt.Sprintf("duplicate key: an earlier item of this run had the same key, but it is no longer among the %d recent keys kept to name it", c.cfg.RecentKeys),
		}, false
	}
	return nil, false
}

// Key returns the canonical primary key of an item: equal for two items
// DynamoDB stores under the same key (numbers compared by value).
func (c *Checker) Key(attrs map[string]types.AttributeValue) string {
	buf := make([]byte, 0, 64)
	tag, val, _ := scalar(attrs[c.cfg.PartitionKey])
	buf = appendKeyPart(buf, tag, val)
	if c.cfg.SortKey != "" {
		tag, val, _ = scalar(attrs[c.cfg.SortKey])
		buf = appendKeyPart(buf, tag, val)
	}
	return string(buf)
}

// DisplayKey renders an item's primary key for messages, as row errors
// do: PK="CUSTOMER#42" SK="PROFILE".
func (c *Checker) DisplayKey(attrs map[string]types.AttributeValue) string {
	return displayKey(attrs, c.cfg.PartitionKey, c.cfg.SortKey)
}

// checkItemKeys checks the table's and the indexes' key attributes of an
// item, as Writer.checkKeys does.
func checkItemKeys(cfg Config, attrs map[string]types.AttributeValue) (string, error) {
	if reason, err := checkKeyAttr(attrs, cfg.PartitionKey, "partition key", MaxPartitionKeyBytes, true); err != nil {
		return reason, err
	}
	if cfg.SortKey != "" {
		if reason, err := checkKeyAttr(attrs, cfg.SortKey, "sort key", MaxSortKeyBytes, true); err != nil {
			return reason, err
		}
	}
	for _, ix := range cfg.Indexes {
		if reason, err := checkKeyAttr(attrs, ix.PartitionKey, "index "+ix.Name+" partition key", MaxPartitionKeyBytes, false); err != nil {
			return reason, err
		}
		if ix.SortKey != "" {
			if reason, err := checkKeyAttr(attrs, ix.SortKey, "index "+ix.Name+" sort key", MaxSortKeyBytes, false); err != nil {
				return reason, err
			}
		}
	}
	return "", nil
}
