package ddbvalue

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// JSONValue renders an attribute value in DynamoDB's JSON form with type
// tags ({"S": "x"}, {"N": "1.5"}, {"M": {...}}), the canonical text used by
// golden files, reject files and reports. encoding/json sorts map keys, so
// the output is deterministic.
func JSONValue(av types.AttributeValue) map[string]any {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *types.AttributeValueMemberSS:
		s := append([]string(nil), v.Value...)
		sort.Strings(s)
		return map[string]any{"SS": s}
	case *types.AttributeValueMemberNS:
		s := append([]string(nil), v.Value...)
		sort.Strings(s)
		return map[string]any{"NS": s}
	case *types.AttributeValueMemberBS:
		s := make([]string, len(v.Value))
		for i, b := range v.Value {
			s[i] = base64.StdEncoding.EncodeToString(b)
		}
		sort.Strings(s)
		return map[string]any{"BS": s}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = JSONValue(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": JSONItem(v.Value)}
	}
	return map[string]any{"?": fmt.Sprintf("%T", av)}
}

// JSONItem renders a whole item with JSONValue.
func JSONItem(attrs map[string]types.AttributeValue) map[string]any {
	out := make(map[string]any, len(attrs))
	for k, v := range attrs {
		out[k] = JSONValue(v)
	}
	return out
}

// MarshalItem is the JSON of JSONItem: attribute names and sets sorted,
// numbers as written.
func MarshalItem(attrs map[string]types.AttributeValue) ([]byte, error) {
	return json.Marshal(JSONItem(attrs))
}
