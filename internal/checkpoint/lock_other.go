//go:build !unix

package checkpoint

import (
	"errors"
	"os"
)

// tryLock fails where flock is not available: running without the lock
// would let two runs share a state file silently.
func tryLock(*os.File) (bool, error) {
	return false, errors.New("locking state files is not supported on this operating system")
}

func unlock(*os.File) error { return nil }
