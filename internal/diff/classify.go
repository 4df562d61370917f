package diff

// Kind is what a comparison found for one key.
type Kind int

// Kinds of outcome, in the order reports list them.
const (
	KindCreate    Kind = iota // expected, not in the target
	KindChange                // in both, different
	KindUnchanged             // in both, equal
	KindStale                 // in the target only, of an entity the mapping owns
	KindForeign               // in the target only, of an entity the mapping does not own
)

func (k Kind) String() string {
	switch k {
	case KindCreate:
		return "create"
	case KindChange:
		return "change"
	case KindUnchanged:
		return "unchanged"
	case KindStale:
		return "stale"
	case KindForeign:
		return "foreign"
	}
	return "unknown"
}

// Classify decides what a Pair is. owns reports whether a target item
// (its entity attribute value and attributes) with that encoded key (the
// Pair's) is the mapping's to write: one it could have produced. A target item that it
// does not own is foreign, never stale. Changes are returned for Change
// only, from the target item (old) to the first expected item (new).
func Classify(p Pair, owns func(r Record, key []byte) bool) (Kind, []Change) {
	switch {
	case len(p.Expected) == 0 && len(p.Target) == 0:
		return KindUnchanged, nil
	case len(p.Target) == 0:
		return KindCreate, nil
	case len(p.Expected) == 0:
		if owns(p.Target[0], p.Key) {
			return KindStale, nil
		}
		return KindForeign, nil
	}
	ch := Changes(p.Target[0].Attrs, p.Expected[0].Attrs)
	if len(ch) == 0 {
		return KindUnchanged, nil
	}
	return KindChange, ch
}
