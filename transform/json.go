package transform

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// JSONValue renders an attribute value in DynamoDB's JSON form with type
// tags ({"S": "x"}, {"N": "1.5"}, {"M": {...}}), the canonical text used by
// golden files, reject files and reports (see ddbvalue.JSONValue).
// encoding/json sorts map keys, so the output is deterministic.
func JSONValue(av types.AttributeValue) map[string]any { return ddbvalue.JSONValue(av) }

// JSONItem renders a whole item with JSONValue.
func JSONItem(attrs map[string]types.AttributeValue) map[string]any {
	return ddbvalue.JSONItem(attrs)
}

// MarshalItem is the JSON of JSONItem.
func MarshalItem(attrs map[string]types.AttributeValue) ([]byte, error) {
	return ddbvalue.MarshalItem(attrs)
}
