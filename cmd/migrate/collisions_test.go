package main

import (
	"strings"
	"testing"
)

// A mapping that would write one attribute over another is refused by
// validate, without a database, with the position and exit 2: an entity
// attribute named GSI1PK once passed, and every item's index key became its
// entity name.
func TestValidateRejectsAttributeCollisions(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, old, new, want string }{
		{"entity attribute is an index key", "entityAttribute: type", "entityAttribute: GSI1PK",
			`The entity attribute is "GSI1PK", which is already the partition key of index GSI1`},
		{"entity attribute is the table key", "entityAttribute: type", "entityAttribute: PK",
			`The entity attribute is "PK", which is already the table's partition key`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := editedBookstore(t, tc.old, tc.new)
			_, stderr, code := runCLI(t, "validate", "--mapping", path)
			if code != exitUsage || !strings.Contains(stderr, path+":") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and a positioned %q", code, stderr, tc.want)
			}
		})
	}
}
