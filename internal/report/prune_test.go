package report

import (
	"bytes"
	"testing"
)

func TestPruneRendering(t *testing.T) {
	t.Parallel()
	found := &Prune{Table: "Shop", Exists: true, Total: 3,
		Entities: []EntityCount{{Entity: "Customer", Items: 1}, {Entity: "Order", Items: 2}},
		Listed:   []ItemRef{{Entity: "Order", Key: Key{PK: "CUSTOMER#1", SK: "ORDER#7"}}},
		Foreign:  1, ForeignListed: []ItemRef{{Entity: "Note", Key: Key{PK: "N#1", SK: "<x>"}}}}
	for _, c := range []struct {
		name   string
		render func(*bytes.Buffer) error
		want   string
	}{
		{"text, absent table", func(b *bytes.Buffer) error { return PruneText(b, &Prune{Table: "Shop"}, 20) },
			"table Shop does not exist: nothing to prune\n"},
		{"text, listed", func(b *bytes.Buffer) error { return PruneText(b, found, 1) },
			"prune Shop: would delete 3 stale items\n" +
				"  Customer       1\n  Order          2\n" +
				"  - Order        CUSTOMER#1 | ORDER#7\n" +
				"  … 2 more not shown (--max-details 1)\n" +
				"left alone: 1 foreign item the mapping could not have written (another entity, or a key its templates cannot produce from the columns' types)\n" +
				"  - Note         N#1 | <x>\n" +
				"nothing was deleted; pass --yes to delete them\n"},
		{"markdown, deleted", func(b *bytes.Buffer) error {
			d := *found
			d.Deleted, d.Foreign, d.ForeignListed = true, 0, nil
			return PruneMarkdown(b, &d)
		}, "### Prune `Shop`\n\nDeleted 3 stale items.\n\n| entity | items |\n|---|---:|\n| Customer | 1 |\n| Order | 2 |\n\n- `Order` `CUSTOMER#1 | ORDER#7`\n"},
		{"json escapes HTML", func(b *bytes.Buffer) error {
			return PruneJSON(b, &Prune{Table: "a<b", Entities: []EntityCount{}})
		}, "{\n  \"table\": \"a\\u003cb\",\n  \"exists\": false,\n  \"deleted\": false,\n  \"entities\": [],\n  \"total\": 0,\n  \"listed\": null,\n  \"foreign\": 0,\n  \"foreignListed\": null\n}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := c.render(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", b.String(), c.want)
			}
		})
	}
}
