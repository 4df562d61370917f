package transform

import (
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/pgkind"
	"github.com/pgdynamo/migrate/mapping"
)

// CheckNestingForTest converts a jsonb value as a top-level attribute and
// checks its nesting.
func CheckNestingForTest(v extract.JSON) error {
	av, _, err := AttributeValue(v, pgkind.Type{Kind: pgkind.JSON}, mapping.AsDefault, mapping.NullOmit)
	if err != nil {
		return err
	}
	return checkNesting(av, 1)
}
