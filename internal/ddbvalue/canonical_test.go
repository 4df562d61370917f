package ddbvalue

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// FuzzCanonicalEncoder: the encoder writes AppendCanonicalItem's bytes for
// every item of a sequence whose name sets repeat, overlap, share a
// length without being the same, and outnumber what it remembers.
func FuzzCanonicalEncoder(f *testing.F) {
	f.Add([]byte{0x0F, 0x0F, 0x33, 0xF0, 0x0F, 0x3C, 0xFF, 0x00, 0x01})
	f.Add([]byte{1, 2, 4, 8, 16, 32, 64, 128, 3, 5, 6, 9, 10, 12, 17, 18, 20, 24, 33, 34, 36, 40, 48, 65, 66, 68, 72, 80, 96, 129, 130, 132, 136, 144, 160, 192, 1, 2, 4})
	names := []string{"PK", "SK", "a", "b<&>", "é", "GSI1PK", "n", "z"}
	f.Fuzz(func(t *testing.T, sets []byte) {
		var enc CanonicalEncoder
		for i, set := range sets {
			item := map[string]types.AttributeValue{}
			for bit, name := range names {
				if set&(1<<bit) != 0 {
					item[name] = &types.AttributeValueMemberS{Value: fmt.Sprint(i, name)}
				}
			}
			if bit := set % 8; set&1 != 0 { // nested maps go the plain way
				item["m"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{names[bit]: &types.AttributeValueMemberN{Value: "1.50"}, "a": &types.AttributeValueMemberNULL{Value: true}}}
			}
			want := AppendCanonicalItem([]byte("x"), item)
			if got := enc.AppendItem([]byte("x"), item); !bytes.Equal(got, want) {
				t.Fatalf("item %d (set %08b): encoder %s, AppendCanonicalItem %s", i, set, got, want)
			}
		}
	})
}

func TestCanonicalEncoderForgets(t *testing.T) {
	t.Parallel()
	var enc CanonicalEncoder
	for i := range 3 * canonicalOrders {
		item := map[string]types.AttributeValue{fmt.Sprint("a", i): &types.AttributeValueMemberBOOL{Value: true}}
		if got, want := enc.AppendItem(nil, item), AppendCanonicalItem(nil, item); !bytes.Equal(got, want) {
			t.Fatalf("item %d: %s, want %s", i, got, want)
		}
	}
	kept := 0
	for _, o := range enc.orders {
		if o != nil {
			kept++
		}
	}
	if kept != canonicalOrders {
		t.Errorf("remembers %d lists, want %d", kept, canonicalOrders)
	}
}
