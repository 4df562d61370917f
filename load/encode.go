package load

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/internal/ddbvalue"
)

// The writer encodes each item's part of the BatchWriteItem request body
// itself, once, when it accepts the item, in the same walk that measures
// the item's size and finds nil values: the SDK's serializer would walk
// every item again on every call (see "Request bodies" in the package
// documentation). The encoding is the SDK's (ddbvalue.AppendItem).

// appendPutRequest appends {"PutRequest":{"Item":{...}}} for attrs to dst
// and returns it with the item's size by DynamoDB's rules (ItemSize).
func appendPutRequest(dst []byte, attrs map[string]types.AttributeValue) ([]byte, int, error) {
	dst = append(dst, `{"PutRequest":{"Item":`...)
	dst, size, err := ddbvalue.AppendItem(dst, attrs)
	return append(dst, "}}"...), size, err
}

// appendDeleteRequest appends {"DeleteRequest":{"Key":{...}}} for the key
// attributes of attrs.
func appendDeleteRequest(dst []byte, attrs map[string]types.AttributeValue, pk, sk string) ([]byte, error) {
	dst = append(dst, `{"DeleteRequest":{"Key":{`...)
	var err error
	for i, name := range []string{pk, sk} {
		if name == "" {
			continue
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = ddbvalue.AppendString(dst, name)
		dst = append(dst, ':')
		var e error
		dst, _, e = ddbvalue.AppendValue(dst, attrs[name])
		if err == nil {
			err = e
		}
	}
	return append(dst, "}}}"...), err
}
