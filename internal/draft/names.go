package draft

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"

	"github.com/jinzhu/inflection"
)

// words splits an identifier into lower-case words at non-alphanumeric
// characters and at lower-to-upper case changes: "order_items" and
// "OrderItems" both give [order items].
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// singular makes one English word singular with an inflection library's
// rules (customers → customer, addresses → address, warehouses →
// warehouse, people → person, statuses → status), not a suffix rule of
// our own.
func singular(w string) string {
	if len(w) <= 2 {
		return w // "id", "os": not plurals
	}
	return inflection.Singular(w)
}

// entityName is the CamelCase singular of a table name: order_items →
// OrderItem. The last word is made singular ("job_history" stays
// JobHistory).
func entityName(table string) string {
	ws := words(table)
	if len(ws) == 0 {
		return "Entity"
	}
	ws[len(ws)-1] = singular(ws[len(ws)-1])
	var b strings.Builder
	for _, w := range ws {
		r := []rune(w)
		b.WriteString(strings.ToUpper(string(r[0])) + string(r[1:]))
	}
	name := b.String()
	if !unicode.IsLetter([]rune(name)[0]) {
		name = "T" + name
	}
	return name
}

// keyPrefix is the upper-case, underscore-joined form of a name used as a
// key prefix: OrderItem → ORDER_ITEM, shipping_address_id → SHIPPING_ADDRESS.
func keyPrefix(name string) string {
	ws := words(name)
	if n := len(ws); n > 1 && ws[n-1] == "id" {
		ws = ws[:n-1]
	}
	return strings.ToUpper(strings.Join(ws, "_"))
}

// lowerCamel is an attribute name for a table: order_items → orderItems.
func lowerCamel(table string) string {
	ws := words(table)
	var b strings.Builder
	for i, w := range ws {
		if i == 0 {
			b.WriteString(w)
			continue
		}
		r := []rune(w)
		b.WriteString(strings.ToUpper(string(r[0])) + string(r[1:]))
	}
	return b.String()
}

// human is a name for people: order_items → "order items"; singular makes
// the last word singular.
func human(name string, single bool) string {
	ws := words(name)
	if single && len(ws) > 0 {
		ws[len(ws)-1] = singular(ws[len(ws)-1])
	}
	return strings.Join(ws, " ")
}

// article is "a" or "an" for a phrase, by its first sound as well as a
// spelling rule can tell: an order, a user, a unit.
func article(phrase string) string {
	vowel := phrase != "" && strings.ContainsRune("aeiou", rune(phrase[0]))
	for _, p := range []string{"us", "uni", "ut", "eu", "one"} {
		if strings.HasPrefix(phrase, p) {
			vowel = false
		}
	}
	if vowel {
		return "an " + phrase
	}
	return "a " + phrase
}

var plainScalar = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// yamlKeywords are plain scalars YAML would read as something other than
// a string (YAML 1.1 and 1.2 alike).
var yamlKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("y yes n no true false on off null") {
		for _, v := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
			yamlKeywords[v] = true
		}
	}
}

// scalar writes s as a YAML scalar: plain when that reads back as the same
// string (also inside flow collections), else double-quoted. A JSON string
// is a valid YAML double-quoted scalar.
func scalar(s string) string {
	if plainScalar.MatchString(s) && !yamlKeywords[s] {
		return s
	}
	return quoted(s)
}

// quoted writes s as a double-quoted YAML scalar.
func quoted(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// placeholderSafe reports whether a column name can appear in a key
// template placeholder.
func placeholderSafe(col string) bool {
	if col == "" {
		return false
	}
	for _, r := range col {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$' || r == '.') {
			return false
		}
	}
	return true
}
