package contract

import (
	"errors"
	"strings"
)

// Error kinds a target, a source or a verb wraps (with its own message) so
// that callers branch on them with errors.Is. Package engine exports the
// same values under the same names.
var (
	// ErrConfig: the caller's settings are wrong; nothing was read or
	// written.
	ErrConfig = errors.New("engine: invalid configuration")
	// ErrState: the state file (or what a target holds from an earlier
	// run) forbids the run as asked; nothing was read or written.
	ErrState = errors.New("engine: the state file does not allow this run")
	// ErrTable: the target table cannot serve the mapping (missing, or
	// its keys differ).
	ErrTable = errors.New("engine: the target table does not fit the mapping")
	// ErrInterrupted: the context ended (a signal) and the work stopped
	// early.
	ErrInterrupted = errors.New("engine: interrupted")
)

// FieldError is a problem with the value of a Config field: Field names
// it as the Config does ("OnError", "Writer.MaxWCU", "Endpoint"), Env,
// when set, is the environment variable the value came from in the
// field's place (the AWS SDK reads some, such as AWS_ENDPOINT_URL_S3, when
// the field is empty), and Problem is the rest of the sentence, which may
// name other fields. A caller that sets the field from its own input,
// such as a command-line flag, can say the same in that input's name.
// Every FieldError is an ErrConfig.
type FieldError struct {
	Verb  string // who checked: "run", "sync", "load", ...
	Field string
	Env   string
	// Problem begins with ": " when it describes the value rather than
	// finishing a sentence whose subject is the field.
	Problem string
}

// Error says the problem in the Config's terms: "run: OnError must be
// ...", or "run: Table: table name ..." for a Problem that begins with
// ": ".
func (e *FieldError) Error() string {
	name := e.Field
	if e.Env != "" {
		name = "$" + e.Env
	}
	if strings.HasPrefix(e.Problem, ":") {
		return e.Verb + ": " + name + e.Problem
	}
	return e.Verb + ": " + name + " " + e.Problem
}

// Is reports whether target is ErrConfig.
func (e *FieldError) Is(target error) bool { return target == ErrConfig }

// FieldErrors lists the FieldErrors of err, a Validate's errors as
// errors.Join joins them, in order.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(e error) {
		if fe, ok := e.(*FieldError); ok {
			out = append(out, fe)
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return out
}
