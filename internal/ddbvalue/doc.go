// Package ddbvalue is the one home of DynamoDB's value semantics, so that
// every command that writes, reads, sizes, compares or prints a value
// agrees with every other:
//
//   - numbers: the canonical text of a number and its limits (38
//     significant digits, magnitudes 1e-130 to 9.99e125), and numeric
//     comparison without floating point ([Number], [CanonicalNumber],
//     [CompareNumbers]);
//   - keys: the order DynamoDB gives sort keys (N by value, S by the bytes
//     of its UTF-8, B by bytes) and a byte encoding of key values in which
//     equal DynamoDB keys are equal bytes ([CompareKeys], [AppendKeyPart]);
//   - sizes: item and attribute sizes by "Item sizes and formats" in the
//     DynamoDB developer guide ([ItemSize], [ValueSize], [NumberSize]);
//   - DynamoDB JSON, the form of the low-level API and of Export/Import
//     to and from S3, both ways ([AppendItem], [AppendCanonicalItem],
//     [JSONItem], [DecodeItem]).
//
// It is pure: it imports only the standard library and the SDK's
// DynamoDB types.
package ddbvalue
