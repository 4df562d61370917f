package extract

import (
	"bytes"
	"encoding/json"
	"testing"
)

// splitJSONArray finds the same elements as encoding/json, whatever the
// strings hold.
func TestSplitJSONArray(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`[]`, ` [ ] `, `[1]`, `[[1, "a", null], [2, "b,c", true]]`,
		`["a\"b", "c\\", "]", "[", "{", "}", ",", "\\\""]`,
		`[{"k": [1, 2, {"x": "]"}]}, [], {}, "\u00e9"]`,
		`[ 1 , -2.5e3 ,"x" , [ [ ] ] ]`,
		`[["1 2", "\n\t", "é😀"]]`,
	} {
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := splitJSONArray([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d elements, want %d", in, len(got), len(want))
			continue
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("%s: element %d is %s, want %s", in, i, got[i], want[i])
			}
			s, err1 := jsonString(got[i])
			var ws string
			err2 := json.Unmarshal(want[i], &ws)
			if (err1 == nil) != (err2 == nil) || s != ws {
				t.Errorf("%s: string %d is %q (%v), want %q (%v)", in, i, s, err1, ws, err2)
			}
		}
	}
	for _, bad := range []string{``, `[`, `{"a":1}`, `["a]`, `[[1]`, `[1]]`} {
		if _, err := splitJSONArray([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
