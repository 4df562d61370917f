package diff

import (
	"regexp"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// Op is the kind of an attribute change.
type Op string

// Attribute change kinds.
const (
	Added   Op = "added"   // only in the new item
	Removed Op = "removed" // only in the old item
	Changed Op = "changed" // in both, with different values
)

// Change is one attribute-level difference between an old (target) and a
// new (expected) item. Old is nil for Added, New is nil for Removed.
type Change struct {
	Path     string // "name", "addresses.home.city", "lines[2]", `meta["a.b"]`
	Op       Op
	Old, New types.AttributeValue
}

// Changes lists what turns old into new, sorted by path. Maps are compared
// key by key at any depth and lists of equal length element by element; a
// list whose length changed, a set, or a value whose type changed is one
// Changed entry for the whole value. Equal items give nil.
func Changes(old, new map[string]types.AttributeValue) []Change {
	var out []Change
	diffMaps("", old, new, &out)
	return out
}

func diffMaps(prefix string, old, new map[string]types.AttributeValue, out *[]Change) {
	names := make([]string, 0, len(old)+len(new))
	for k := range old {
		names = append(names, k)
	}
	for k := range new {
		if _, ok := old[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		path := joinPath(prefix, k)
		o, inOld := old[k]
		n, inNew := new[k]
		switch {
		case !inOld:
			*out = append(*out, Change{Path: path, Op: Added, New: n})
		case !inNew:
			*out = append(*out, Change{Path: path, Op: Removed, Old: o})
		default:
			diffValues(path, o, n, out)
		}
	}
}

func diffValues(path string, o, n types.AttributeValue, out *[]Change) {
	if ddbvalue.Equal(o, n) {
		return
	}
	if om, ok := o.(*types.AttributeValueMemberM); ok {
		if nm, ok := n.(*types.AttributeValueMemberM); ok {
			diffMaps(path, om.Value, nm.Value, out)
			return
		}
	}
	if ol, ok := o.(*types.AttributeValueMemberL); ok {
		if nl, ok := n.(*types.AttributeValueMemberL); ok && len(ol.Value) == len(nl.Value) {
			for i := range ol.Value {
				diffValues(path+"["+strconv.Itoa(i)+"]", ol.Value[i], nl.Value[i], out)
			}
			return
		}
	}
	*out = append(*out, Change{Path: path, Op: Changed, Old: o, New: n})
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// joinPath appends a map key to a path: .name when the name is plain, else
// ["quoted"], so that a path is never ambiguous.
func joinPath(prefix, name string) string {
	if plainName.MatchString(name) {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	return prefix + "[" + strconv.Quote(name) + "]"
}
