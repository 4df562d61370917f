package render

import (
	"encoding/json"
	"io"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/engine"
	"github.com/pgdynamo/migrate/transform"
)

// Values of query's --output.
const (
	OutputJSON         = "json"          // plain JSON: numbers exact, binary in base64
	OutputDynamoDBJSON = "dynamodb-json" // DynamoDB's typed JSON ({"S": ...})
)

// Items prints items one JSON object a line, as output says.
func Items(w io.Writer, output string, items []map[string]types.AttributeValue) error {
	p := &printer{w: w}
	if output == OutputDynamoDBJSON {
		for _, it := range items {
			b, err := transform.MarshalItem(it)
			if err != nil {
				return err
			}
			p.f("%s\n", b)
		}
		return p.err
	}
	var plain []map[string]any
	if err := engine.UnmarshalItems(items, &plain); err != nil {
		return err
	}
	for _, it := range plain {
		b, err := json.Marshal(jsonNumbers(it))
		if err != nil {
			return err
		}
		p.f("%s\n", b)
	}
	return p.err
}

// jsonNumbers replaces the exact numbers attributevalue decodes
// (attributevalue.Number) by json.Number, so that they print as JSON
// numbers with every digit.
func jsonNumbers(v any) any {
	switch v := v.(type) {
	case attributevalue.Number:
		return json.Number(v)
	case map[string]any:
		for k, e := range v {
			v[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = jsonNumbers(e)
		}
	case []attributevalue.Number:
		out := make([]json.Number, len(v))
		for i, n := range v {
			out[i] = json.Number(n)
		}
		return out
	}
	return v
}

// RequestJSON renders an SDK request as the API documents it: field names
// as on the wire, unset fields left out.
func RequestJSON(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return err
	}
	if data, err = json.MarshalIndent(dropNulls(tree), "", "  "); err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

func dropNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			v[k] = dropNulls(e)
		}
	case []any:
		for i, e := range v {
			v[i] = dropNulls(e)
		}
	}
	return v
}
