package diff

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
	"github.com/pgdynamo/migrate/transform"
)

type av = types.AttributeValue
type item = map[string]types.AttributeValue

func S(v string) av         { return &types.AttributeValueMemberS{Value: v} }
func N(v string) av         { return &types.AttributeValueMemberN{Value: v} }
func B(v string) av         { return &types.AttributeValueMemberB{Value: []byte(v)} }
func BOOL(v bool) av        { return &types.AttributeValueMemberBOOL{Value: v} }
func NULL() av              { return &types.AttributeValueMemberNULL{Value: true} }
func SS(v ...string) av     { return &types.AttributeValueMemberSS{Value: v} }
func NS(v ...string) av     { return &types.AttributeValueMemberNS{Value: v} }
func BS(v ...string) av     { return &types.AttributeValueMemberBS{Value: bytesOf(v)} }
func L(v ...av) av          { return &types.AttributeValueMemberL{Value: v} }
func M(kv map[string]av) av { return &types.AttributeValueMemberM{Value: kv} }
func bytesOf(v []string) [][]byte {
	out := make([][]byte, len(v))
	for i, s := range v {
		out[i] = []byte(s)
	}
	return out
}

// render prints changes one a line as path op old -> new in DynamoDB JSON.
func render(t *testing.T, cs []Change) string {
	t.Helper()
	var lines []string
	for _, c := range cs {
		lines = append(lines, fmt.Sprintf("%s %s %s -> %s", c.Path, c.Op, js(t, c.Old), js(t, c.New)))
	}
	return strings.Join(lines, "\n")
}

func js(t *testing.T, v av) string {
	t.Helper()
	if v == nil {
		return "-"
	}
	b, err := transform.MarshalItem(item{"v": v})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return s[len(`{"v":`) : len(s)-1]
}

func TestChanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		old, new item
		want     string
	}{
		{name: "equal", old: item{"a": S("x"), "n": N("1")}, new: item{"a": S("x"), "n": N("1")}, want: ""},
		{name: "added", old: item{"a": S("x")}, new: item{"a": S("x"), "b": N("2")}, want: `b added - -> {"N":"2"}`},
		{name: "removed", old: item{"a": S("x"), "b": BOOL(true)}, new: item{"a": S("x")}, want: `b removed {"BOOL":true} -> -`},
		{name: "changed", old: item{"a": S("x")}, new: item{"a": S("y")}, want: `a changed {"S":"x"} -> {"S":"y"}`},
		{name: "type changed", old: item{"a": S("1")}, new: item{"a": N("1")}, want: `a changed {"S":"1"} -> {"N":"1"}`},
		{name: "numbers compare canonically", old: item{"p": N("12.50"), "q": N("0100"), "r": N("1e2"), "z": N("-0")}, new: item{"p": N("12.5"), "q": N("100"), "r": N("100"), "z": N("0")}, want: ""},
		{name: "different numbers", old: item{"p": N("12.50")}, new: item{"p": N("12.51")}, want: `p changed {"N":"12.50"} -> {"N":"12.51"}`},
		{name: "sets ignore order", old: item{"s": SS("b", "a", "c"), "n": NS("2", "1.0"), "b": BS("y", "x")}, new: item{"s": SS("c", "a", "b"), "n": NS("1", "2"), "b": BS("x", "y")}, want: ""},
		{name: "set changed is one change", old: item{"s": SS("a", "b")}, new: item{"s": SS("a", "c")}, want: `s changed {"SS":["a","b"]} -> {"SS":["a","c"]}`},
		{name: "string set is not a list", old: item{"s": L(S("a"))}, new: item{"s": SS("a")}, want: `s changed {"L":[{"S":"a"}]} -> {"SS":["a"]}`},
		{
			name: "nested maps by path",
			old: item{"addresses": M(map[string]av{
				"home": M(map[string]av{"city": S("Oslo"), "zip": S("0150")}),
				"work": M(map[string]av{"city": S("Bergen")}),
			})},
			new: item{"addresses": M(map[string]av{
				"home":    M(map[string]av{"city": S("Trondheim"), "zip": S("0150"), "line2": S("c/o")}),
				"billing": M(map[string]av{"city": S("Oslo")}),
			})},
			want: strings.Join([]string{
				`addresses.billing added - -> {"M":{"city":{"S":"Oslo"}}}`,
				`addresses.home.city changed {"S":"Oslo"} -> {"S":"Trondheim"}`,
				`addresses.home.line2 added - -> {"S":"c/o"}`,
				`addresses.work removed {"M":{"city":{"S":"Bergen"}}} -> -`,
			}, "\n"),
		},
		{name: "odd map keys are quoted", old: item{"m": M(map[string]av{"a.b": N("1"), "c d": N("1")})}, new: item{"m": M(map[string]av{"a.b": N("2"), "c d": N("1")})}, want: `m["a.b"] changed {"N":"1"} -> {"N":"2"}`},
		{name: "lists of equal length by element", old: item{"l": L(N("1"), M(map[string]av{"q": N("1")}), S("x"))}, new: item{"l": L(N("1.0"), M(map[string]av{"q": N("2")}), S("y"))}, want: "l[1].q changed {\"N\":\"1\"} -> {\"N\":\"2\"}\nl[2] changed {\"S\":\"x\"} -> {\"S\":\"y\"}"},
		{name: "list length changed", old: item{"l": L(N("1"))}, new: item{"l": L(N("1"), N("2"))}, want: `l changed {"L":[{"N":"1"}]} -> {"L":[{"N":"1"},{"N":"2"}]}`},
		{name: "null and bool", old: item{"x": NULL(), "y": BOOL(false)}, new: item{"x": NULL(), "y": BOOL(true)}, want: `y changed {"BOOL":false} -> {"BOOL":true}`},
		{name: "binary", old: item{"b": B("\x00\x01")}, new: item{"b": B("\x00\x02")}, want: `b changed {"B":"AAE="} -> {"B":"AAI="}`},
		{name: "empty map vs missing", old: item{}, new: item{"m": M(map[string]av{})}, want: `m added - -> {"M":{}}`},
		{name: "sorted by path", old: item{"z": S("1"), "a": S("1")}, new: item{"z": S("2"), "a": S("2"), "m": S("new")}, want: "a changed {\"S\":\"1\"} -> {\"S\":\"2\"}\nm added - -> {\"S\":\"new\"}\nz changed {\"S\":\"1\"} -> {\"S\":\"2\"}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := render(t, Changes(tc.old, tc.new))
			if got != tc.want {
				t.Errorf("Changes:\n got: %s\nwant: %s", got, tc.want)
			}
			if ddbvalue.EqualItems(tc.old, tc.new) != (tc.want == "") {
				t.Errorf("EqualItems = %v, want %v", !(tc.want == ""), tc.want == "")
			}
			// Equal items hash alike; different ones differently.
			h1, err1 := Hash(tc.old)
			h2, err2 := Hash(tc.new)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if (h1 == h2) != (tc.want == "") {
				t.Errorf("hash equality = %v, want %v", h1 == h2, tc.want == "")
			}
		})
	}
}

func TestKeyOrderAndDecoding(t *testing.T) {
	t.Parallel()
	type k struct{ pk, sk av }
	// In the order KeyOf must sort them: by partition key, then sort key,
	// byte-wise; a partition key that is a prefix of another sorts first.
	keys := []k{
		{S("A"), S("")},
		{S("A"), S("\x00")},
		{S("A"), S("\x00\x00")},
		{S("A"), S("a")},
		{S("A"), S("b")},
		{S("A\x00"), S("a")},
		{S("AB"), S("a")},
		{S("CUSTOMER#1"), S("ORDER#2024")},
		{S("CUSTOMER#1"), S("PROFILE")},
		{S("CUSTOMER#10"), S("PROFILE")},
		{S("CUSTOMER#2"), S("PROFILE")},
		{S("ünïcode"), S("x")},
	}
	var enc [][]byte
	for _, kk := range keys {
		b, err := KeyOf(item{"PK": kk.pk, "SK": kk.sk, "x": S("y")}, "PK", "SK")
		if err != nil {
			t.Fatal(err)
		}
		enc = append(enc, b)
		got, err := DecodeKey(b)
		if err != nil {
			t.Fatal(err)
		}
		want := Key{PK: kk.pk.(*types.AttributeValueMemberS).Value, SK: kk.sk.(*types.AttributeValueMemberS).Value}
		if got != want {
			t.Errorf("DecodeKey = %q, want %q", got, want)
		}
	}
	if !sort.SliceIsSorted(enc, func(i, j int) bool { return bytes.Compare(enc[i], enc[j]) < 0 }) {
		t.Error("encoded keys are not in (partition, sort) order")
	}
	for i := 1; i < len(enc); i++ {
		same := keys[i].pk.(*types.AttributeValueMemberS).Value == keys[i-1].pk.(*types.AttributeValueMemberS).Value
		if SamePartition(enc[i], enc[i-1]) != same {
			t.Errorf("SamePartition(%q, %q) = %v, want %v", enc[i-1], enc[i], !same, same)
		}
	}

	// Numbers: one number, many spellings.
	a, _ := KeyOf(item{"id": N("1.50")}, "id", "")
	b, _ := KeyOf(item{"id": N("1.5")}, "id", "")
	if !bytes.Equal(a, b) {
		t.Errorf("1.50 and 1.5 give different keys %q %q", a, b)
	}
	if d, _ := DecodeKey(a); d != (Key{PK: "1.5"}) {
		t.Errorf("number key decodes to %+v", d)
	}
	bin, _ := KeyOf(item{"id": B("\x00\xff")}, "id", "")
	if d, _ := DecodeKey(bin); d.PK != "AP8=" {
		t.Errorf("binary key decodes to %+v", d)
	}
	if _, err := KeyOf(item{"PK": S("x")}, "PK", "SK"); err == nil {
		t.Error("missing sort key accepted")
	}
	if _, err := KeyOf(item{"PK": L(), "SK": S("x")}, "PK", "SK"); err == nil {
		t.Error("list partition key accepted")
	}
}

func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	r := Record{Entity: "Customer", Origin: "public.customers customer_id=7", Attrs: item{
		"PK": S("CUSTOMER#7"), "n": N("-1.5e-3"), "b": B("\x00\x01\xff"), "t": BOOL(true), "f": BOOL(false), "z": NULL(),
		"ss": SS("b", "a"), "ns": NS("1", "2"), "bs": BS("x", "\x00"), "empty": S(""),
		"l": L(S("x"), L(), M(map[string]av{"k": N("1")})),
		"m": M(map[string]av{"deep": M(map[string]av{"deeper": L(NULL())})}),
	}}
	b := EncodeRecord(r)
	got, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Entity != r.Entity || got.Origin != r.Origin || !ddbvalue.EqualItems(got.Attrs, r.Attrs) {
		t.Errorf("round trip changed the record:\n got %+v\nwant %+v", got, r)
	}
	c1, _ := Canonical(got.Attrs)
	c2, _ := Canonical(r.Attrs)
	if !bytes.Equal(c1, c2) {
		t.Errorf("canonical JSON differs:\n%s\n%s", c1, c2)
	}
	for i := range len(b) - 1 {
		if _, err := DecodeRecord(b[:i]); err == nil {
			t.Fatalf("truncated record (%d of %d bytes) decoded without error", i, len(b))
		}
	}
}

// Records of any depth decode: a jsonb nested 64 levels once stopped plan
// and verify with "diff: corrupt record".
func TestRecordDeepNesting(t *testing.T) {
	t.Parallel()
	deep := S("x")
	for i := range 200 {
		if i%2 == 0 {
			deep = L(deep)
		} else {
			deep = M(map[string]av{"k": deep})
		}
	}
	r := Record{Entity: "Widget", Origin: "public.widgets id=3", Attrs: item{"PK": S("W#3"), "data": deep}}
	got, err := DecodeRecord(EncodeRecord(r))
	if err != nil {
		t.Fatal(err)
	}
	if !ddbvalue.EqualItems(got.Attrs, r.Attrs) {
		t.Error("the deep record changed in a round trip")
	}
}

// A record that cannot be decoded (a damaged spill file) is named: its key,
// origin and entity.
func TestJoinErrorNamesTheRecord(t *testing.T) {
	t.Parallel()
	s := stream(t, rec("Customer", "C#1", "PROFILE"))
	s.vals[0] = EncodeRecord(Record{Entity: "Customer", Origin: "public.customers customer_id=1", Attrs: item{"PK": S("C#1"), "SK": S("PROFILE")}})
	s.vals[0] = s.vals[0][:len(s.vals[0])-2]
	err := Join(s, nil, func(Pair) error { return nil })
	for _, want := range []string{"expected side", `C#1 | PROFILE`, "public.customers customer_id=1", `entity "Customer"`, "corrupt record"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

// sliceStream is a Sorted over records given in order.
type sliceStream struct {
	keys, vals [][]byte
	i          int
}

func (s *sliceStream) Next() bool    { s.i++; return s.i <= len(s.keys) }
func (s *sliceStream) Key() []byte   { return s.keys[s.i-1] }
func (s *sliceStream) Value() []byte { return s.vals[s.i-1] }
func (s *sliceStream) Err() error    { return nil }

func stream(t *testing.T, recs ...Record) *sliceStream {
	t.Helper()
	s := &sliceStream{}
	for _, r := range recs {
		k, err := KeyOf(r.Attrs, "PK", "SK")
		if err != nil {
			t.Fatal(err)
		}
		s.keys = append(s.keys, k)
		s.vals = append(s.vals, EncodeRecord(r))
	}
	return s
}

func rec(entity, pk, sk string, extra ...string) Record {
	a := item{"PK": S(pk), "SK": S(sk), "type": S(entity)}
	for i := 0; i+1 < len(extra); i += 2 {
		a[extra[i]] = S(extra[i+1])
	}
	return Record{Entity: entity, Attrs: a}
}

func TestJoinAndClassify(t *testing.T) {
	t.Parallel()
	expected := stream(t,
		rec("Customer", "C#1", "PROFILE", "name", "Ann"),
		rec("Order", "C#2", "ORDER#1"),
		rec("Order", "C#2", "ORDER#1"), // duplicate key
		rec("Customer", "C#2", "PROFILE", "name", "Bob"),
		rec("Customer", "C#4", "PROFILE"),
	)
	target := stream(t,
		rec("Customer", "C#1", "PROFILE", "name", "Ann"),
		rec("Customer", "C#2", "PROFILE", "name", "Rob"),
		rec("Order", "C#3", "ORDER#9"),
		rec("Invoice", "C#3", "ZZZ"),
		rec("Customer", "OTHER#1", "PROFILE"), // an owned entity name, but not a key it writes
	)
	owns := func(r Record, key []byte) bool {
		k, err := DecodeKey(key)
		return err == nil && (r.Entity == "Customer" || r.Entity == "Order") && !strings.HasPrefix(k.PK, "OTHER#")
	}
	var got []string
	err := Join(expected, target, func(p Pair) error {
		k, _ := DecodeKey(p.Key)
		kind, ch := Classify(p, owns)
		got = append(got, fmt.Sprintf("%s %s exp=%d tgt=%d changes=%d", k, kind, len(p.Expected), len(p.Target), len(ch)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"C#1 | PROFILE unchanged exp=1 tgt=1 changes=0",
		"C#2 | ORDER#1 create exp=2 tgt=0 changes=0",
		"C#2 | PROFILE change exp=1 tgt=1 changes=1",
		"C#3 | ORDER#9 stale exp=0 tgt=1 changes=0",
		"C#3 | ZZZ foreign exp=0 tgt=1 changes=0",
		"C#4 | PROFILE create exp=1 tgt=0 changes=0",
		"OTHER#1 | PROFILE foreign exp=0 tgt=1 changes=0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("join:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}

	// A nil target (no table) makes everything a create.
	n := 0
	if err := Join(stream(t, rec("Customer", "C#1", "P")), nil, func(p Pair) error {
		if kind, _ := Classify(p, owns); kind != KindCreate {
			t.Errorf("kind %v with no target", kind)
		}
		n++
		return nil
	}); err != nil || n != 1 {
		t.Errorf("nil target: %d pairs, %v", n, err)
	}

	// Unsorted input is an error, not a wrong answer.
	bad := stream(t, rec("Customer", "C#2", "P"), rec("Customer", "C#1", "P"))
	if err := Join(bad, nil, func(Pair) error { return nil }); err == nil {
		t.Error("unsorted stream accepted")
	}
}

func TestSumIsOrderIndependent(t *testing.T) {
	t.Parallel()
	var hs [][32]byte
	for i := range 50 {
		h, err := Hash(item{"PK": S(fmt.Sprint(i)), "v": N(fmt.Sprint(i * 3))})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	var a, b Sum
	for _, h := range hs {
		a.Add(h)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
	for _, h := range hs {
		b.Add(h)
	}
	if a != b {
		t.Errorf("sum depends on order: %s vs %s", a, b)
	}
	// A duplicate changes the sum (XOR would cancel it).
	c := a
	c.Add(hs[0])
	c.Add(hs[0])
	if c == a {
		t.Error("adding an item twice left the sum unchanged")
	}
	var zero Sum
	if zero.String() != strings.Repeat("0", 64) {
		t.Errorf("zero sum %s", zero)
	}
	// Carry propagates across bytes.
	var s Sum
	var ff [32]byte
	for i := range ff {
		ff[i] = 0xff
	}
	s.Add(ff)
	var one [32]byte
	one[31] = 1
	s.Add(one)
	if s != zero {
		t.Errorf("2^256-1 + 1 = %s, want 0 mod 2^256", s)
	}
}

func TestInSample(t *testing.T) {
	t.Parallel()
	n, in := 20000, 0
	for i := range n {
		k, _ := KeyOf(item{"PK": S(fmt.Sprintf("K#%d", i))}, "PK", "")
		a, b := InSample(k, 0.25), InSample(k, 0.25)
		if a != b {
			t.Fatal("InSample is not deterministic")
		}
		if a {
			in++
			if !InSample(k, 0.5) {
				t.Fatal("a key in the 25% sample is not in the 50% sample")
			}
		}
		if !InSample(k, 1) || InSample(k, 0) {
			t.Fatal("p=1 must take every key and p=0 none")
		}
	}
	if frac := float64(in) / float64(n); frac < 0.23 || frac > 0.27 {
		t.Errorf("sample fraction %.3f, want about 0.25", frac)
	}
}

// TestCanonicalMatchesDefinition checks the direct encoder against its
// definition (encoding/json of ddbvalue.JSONItem of the normalized item)
// on random items with every type and awkward strings.
func TestCanonicalMatchesDefinition(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	strs := []string{"", "plain", "quote\"back\\slash", "<tag>&amp;", "tab\tnl\nctl\x01\x1f", "ünï ✓ 李", "bad\xffutf8", "line\u2028sep\u2029", "#", "0"}
	nums := []string{"0", "-0", "1.50", "1e3", "-12.5e-3", "100", "0.000", "123456789012345678901234567890123456"}
	var value func(depth int) av
	value = func(depth int) av {
		pick := func(s []string) string { return s[rng.IntN(len(s))] }
		switch k := rng.IntN(10); {
		case k == 0:
			return S(pick(strs))
		case k == 1:
			return N(pick(nums))
		case k == 2:
			return B(pick(strs))
		case k == 3:
			return BOOL(rng.IntN(2) == 0)
		case k == 4:
			return NULL()
		case k == 5:
			return SS(pick(strs), pick(strs), pick(strs))
		case k == 6:
			return NS(pick(nums), pick(nums))
		case k == 7:
			return BS(pick(strs), pick(strs))
		case k == 8 && depth < 3:
			l := make([]av, rng.IntN(4))
			for i := range l {
				l[i] = value(depth + 1)
			}
			return L(l...)
		case depth < 3:
			m := map[string]av{}
			for range rng.IntN(4) {
				m[pick(strs)] = value(depth + 1)
			}
			return M(m)
		}
		return S(pick(strs))
	}
	for range 2000 {
		it := item{}
		for range 1 + rng.IntN(6) {
			it[strs[rng.IntN(len(strs))]] = value(0)
		}
		fast, _ := Canonical(it)
		slow, err := json.Marshal(ddbvalue.JSONItem(ddbvalue.CanonicalItem(it)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast, slow) {
			t.Fatalf("canonical JSON differs:\n fast %s\n slow %s", fast, slow)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	it := item{"PK": S("CUSTOMER#42"), "SK": S("ORDER#2024-01-02T03:04:05.000000Z#000000000981"), "type": S("Order"),
		"orderId": N("981"), "status": S("OPEN"), "total": N("123.45"), "shipCity": S("Oslo"), "shipCountry": S("NO"),
		"GSI2PK": S("STATUS#OPEN#3"), "GSI2SK": S("2024-01-02T03:04:05.000000Z#000000000981")}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			Hash(it)
		}
	})
	b.Run("definition", func(b *testing.B) {
		for b.Loop() {
			c, _ := json.Marshal(ddbvalue.JSONItem(ddbvalue.CanonicalItem(it)))
			sha256.Sum256(c)
		}
	})
}
