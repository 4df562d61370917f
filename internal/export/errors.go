package export

import (
	"errors"

	"github.com/pgdynamo/migrate/contract"
)

// kindError is an error of one of the contract's kinds (ErrConfig, ErrState,
// ErrTable), so that callers branch on it as on the engine's own, without
// the kind's text in the message.
type kindError struct{ kind, err error }

func (e *kindError) Error() string   { return e.err.Error() }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

func kinded(kind, err error) error {
	if err == nil {
		return nil
	}
	return &kindError{kind: kind, err: err}
}

func kindedConfig(err error) error { return kinded(contract.ErrConfig, err) }
func kindedState(err error) error  { return kinded(contract.ErrState, err) }

var errNotComplete = errors.New("export: the export is not complete")
