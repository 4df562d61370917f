package engine

import (
	"errors"
	"fmt"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/mapping"
)

// Errors callers branch on. A verb's error wraps at most one of them;
// mapping problems come as mapping.Diagnostics.
var (
	// ErrConfig is wrapped by every Config.Validate error: the caller's
	// settings are wrong, nothing was read or written. It is
	// contract.ErrConfig, which targets wrap too.
	ErrConfig = contract.ErrConfig
	// ErrState is wrapped when the state file forbids the run as asked
	// (resume without a state file, a changed mapping, an unfinished run
	// without a choice): nothing was read or written. It is
	// contract.ErrState.
	ErrState = contract.ErrState
	// ErrNothingToResume is returned by a resumed Run whose state file
	// records a completed run: nothing was read or written.
	ErrNothingToResume = errors.New("engine: nothing to resume: the recorded run completed")
	// ErrInterrupted is wrapped when the context ended (a signal) and the
	// verb stopped early; for Run the checkpoint is saved. It is
	// contract.ErrInterrupted.
	ErrInterrupted = contract.ErrInterrupted
	// ErrTooManyRejects is wrapped by a Run that completed with more
	// rejects than RunConfig.MaxRejects allows.
	ErrTooManyRejects = errors.New("engine: more rejects than allowed")
	// ErrBadRow is wrapped when a run with OnErrorFail stopped at a row
	// that cannot be written (the rows before it are written and
	// checkpointed); OnErrorReject would have rejected it and gone on.
	ErrBadRow = errors.New("engine: bad row")
	// ErrTable is wrapped when the target table cannot serve the mapping
	// (missing, or its keys differ). It is contract.ErrTable.
	ErrTable = contract.ErrTable
)

// kindError is an error of one of the kinds above whose message is only
// its own: errors.Is finds the kind, the reader sees no "engine:" prefix.
type kindError struct {
	kind, err error
}

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// badRow is a bad-row failure whose message describes the row and whose
// chain holds ErrBadRow and the row's own error (a *contract.ItemError or a
// *transform.RowError), so that callers can tell, e.g., a duplicate key.
type badRow struct {
	msg   string
	cause error
}

func (e *badRow) Error() string   { return e.msg }
func (e *badRow) Unwrap() []error { return []error{ErrBadRow, e.cause} }

// kinded marks err as being of kind.
func kinded(kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: kind, err: err}
}

func configErrorf(format string, args ...any) error {
	return kinded(ErrConfig, fmt.Errorf(format, args...))
}

func stateErrorf(format string, args ...any) error {
	return kinded(ErrState, fmt.Errorf(format, args...))
}

// plural renders "1 row", "2 rows", "3 entities".
func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if len(word) > 1 && word[len(word)-1] == 'y' {
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// FieldError is a problem with the value of a Config field (see
// contract.FieldError). Every FieldError is an ErrConfig.
type FieldError = contract.FieldError

func fieldf(verb, field, format string, args ...any) error {
	return &FieldError{Verb: verb, Field: field, Problem: fmt.Sprintf(format, args...)}
}

// checkName checks a table or index name (what) that a caller gives, as a
// FieldError of verb's field; "" (the mapping's, or none) passes.
func checkName(verb, field, what, name string) error {
	if name == "" {
		return nil
	}
	if msg := mapping.TableNameProblem(what, name); msg != "" {
		return fieldf(verb, field, ": %s", msg)
	}
	return nil
}
