package ddbvalue

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// UnmarshalItem reads an item in DynamoDB JSON, a JSON object of
// type-tagged values (see DecodeItem). It decodes the JSON in one pass
// (into Go values) and converts that: a pass per nesting level, with
// json.RawMessage and UnmarshalJSON, was three times slower.
func UnmarshalItem(data []byte) (map[string]types.AttributeValue, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a DynamoDB JSON item: null")
	}
	return DecodeItem(m)
}

// DecodeItem converts an item in DynamoDB JSON, as encoding/json decodes
// it into Go values (an object of type-tagged values), into attribute
// values. Every value must be an object with exactly one type tag, NULL
// must be true (DynamoDB refuses NULL false) and B and BS elements
// standard base64.
func DecodeItem(m map[string]any) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		av, err := DecodeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// DecodeValue converts one attribute value with its type tag (see
// DecodeItem).
func DecodeValue(v any) (types.AttributeValue, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, errors.New("an attribute value is an object with exactly one type tag")
	}
	for tag, raw := range m {
		switch tag {
		case "S":
			if s, ok := raw.(string); ok {
				return &types.AttributeValueMemberS{Value: s}, nil
			}
		case "N":
			if s, ok := raw.(string); ok {
				return &types.AttributeValueMemberN{Value: s}, nil
			}
		case "B":
			if s, ok := raw.(string); ok {
				b, err := base64.StdEncoding.DecodeString(s)
				return &types.AttributeValueMemberB{Value: b}, err
			}
		case "BOOL":
			if b, ok := raw.(bool); ok {
				return &types.AttributeValueMemberBOOL{Value: b}, nil
			}
		case "NULL":
			// DynamoDB refuses NULL false ("Null attribute value types
			// must have the value of true"); reading it as NULL would
			// change the file's value without a word.
			if b, ok := raw.(bool); ok {
				if !b {
					return nil, errors.New(`{"NULL": false} is not a DynamoDB value: NULL must be true`)
				}
				return &types.AttributeValueMemberNULL{Value: true}, nil
			}
		case "SS", "NS", "BS":
			list, ok := raw.([]any)
			if !ok {
				break
			}
			ss := make([]string, len(list))
			for i, e := range list {
				if ss[i], ok = e.(string); !ok {
					return nil, fmt.Errorf("%s holds a %T", tag, e)
				}
			}
			switch tag {
			case "SS":
				return &types.AttributeValueMemberSS{Value: ss}, nil
			case "NS":
				return &types.AttributeValueMemberNS{Value: ss}, nil
			}
			bs := make([][]byte, len(ss))
			for i, e := range ss {
				b, err := base64.StdEncoding.DecodeString(e)
				if err != nil {
					return nil, err
				}
				bs[i] = b
			}
			return &types.AttributeValueMemberBS{Value: bs}, nil
		case "L":
			list, ok := raw.([]any)
			if !ok {
				break
			}
			out := make([]types.AttributeValue, len(list))
			for i, e := range list {
				av, err := DecodeValue(e)
				if err != nil {
					return nil, err
				}
				out[i] = av
			}
			return &types.AttributeValueMemberL{Value: out}, nil
		case "M":
			mm, ok := raw.(map[string]any)
			if !ok {
				break
			}
			out, err := DecodeItem(mm)
			if err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberM{Value: out}, nil
		default:
			return nil, fmt.Errorf("unknown type tag %q", tag)
		}
		return nil, fmt.Errorf("type tag %q with a %T", tag, raw)
	}
	panic("unreachable")
}
