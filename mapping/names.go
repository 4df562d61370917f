package mapping

import "fmt"

// DynamoDB's naming rules for tables and indexes (the same for both): 3 to
// 255 characters, each a letter, digit, '_', '-' or '.'. Checked offline so
// that a bad name fails in validate, not after a run has read the source.
const (
	minNameLen = 3
	maxNameLen = 255
)

// TableNameProblem says what is wrong with a DynamoDB table or index name,
// or returns "" when DynamoDB accepts it. what is "table" or "index".
// Callers that take a table name from elsewhere (a --table flag) check it
// with this too.
func TableNameProblem(what, name string) string {
	n := len(name) // the allowed characters are all one byte
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
		default:
			return fmt.Sprintf("%s name %q: character %q at offset %d is not allowed (DynamoDB allows letters, digits, '_', '-' and '.')", what, name, r, i)
		}
	}
	if n < minNameLen || n > maxNameLen {
		return fmt.Sprintf("%s name %q has %d characters; DynamoDB needs %d to %d", what, name, n, minNameLen, maxNameLen)
	}
	return ""
}

func (p *parser) checkName(what, name string, at Pos) {
	if name == "" {
		return // reported as missing or empty already
	}
	if msg := TableNameProblem(what, name); msg != "" {
		p.r.errorf(at, "%s", msg)
	}
}
