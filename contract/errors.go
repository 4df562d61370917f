package contract

import "errors"

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
