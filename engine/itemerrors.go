package engine

import (
	"errors"
	"fmt"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/load"
)

// splitItemErrors separates the row errors in an error returned by
// load.Writer.Write from the rest (a fatal error, an interruption, or the
// count of row errors beyond those reported).
func splitItemErrors(err error) ([]*contract.ItemError, error) {
	var items []*contract.ItemError
	var rest []error
	var walk func(error)
	walk = func(err error) {
		if ie, ok := err.(*contract.ItemError); ok {
			items = append(items, ie)
			return
		}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if errors.Is(err, load.ErrTooManyItemErrors) && len(items) > 0 {
			return // the limit was reached; the item errors say what happened
		}
		rest = append(rest, err)
	}
	walk(err)
	return items, errors.Join(rest...)
}

func describeItemError(e *contract.ItemError) string {
	key := ""
	if e.Key != "" {
		key = " (item " + e.Key + ")"
	}
	return fmt.Sprintf("entity %s, table %s, row %s%s: %s", e.Origin.Entity, e.Origin.Table, e.Origin.Key(), key, e.Reason)
}
