package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/pgdynamo/migrate/internal/checkpoint"
)

// previousRun decides, from the state file at path, whether the run starts
// fresh (nil) or continues a previous one, or must refuse:
//
//   - no state file: a fresh run; with resume, a state error.
//   - fresh: a fresh run, whatever the file holds (it is overwritten).
//   - resume: the recorded run, if it is for the same mapping (hash) and
//     table; ErrNothingToResume if it is complete.
//   - neither: a fresh run if the recorded one is complete; otherwise a
//     state error naming both options, so that an unfinished run is never
//     restarted or continued by accident.
func previousRun(log *slog.Logger, path, hash, table string, resume, fresh bool) (*checkpoint.State, error) {
	st, err := checkpoint.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if resume {
			return nil, stateErrorf("run --resume: there is no state file %s, so nothing to resume (run without --resume to start, or name the file with --state)", path)
		}
		return nil, nil
	case err != nil && fresh:
		return nil, nil
	case err != nil:
		return nil, stateErrorf("run: %v; pass --fresh to start over and overwrite it", err)
	case fresh:
		log.Info("--fresh: starting over; the state file is overwritten", "state", path)
		return nil, nil
	case resume:
		if err := st.Check(hash, table); err != nil {
			return nil, stateErrorf("run --resume: cannot continue the run recorded in %s: %v; pass --fresh instead of --resume to start over (items already written are overwritten, not duplicated)", path, err)
		}
		if st.Complete {
			return st, kinded(ErrNothingToResume, fmt.Errorf("nothing to resume: the run recorded in %s completed (%s); pass --fresh to run it again", path, st.UpdatedAt.Format(time.RFC3339)))
		}
		return st, nil
	case st.Complete:
		log.Info("the run recorded in the state file is complete; starting a new run", "state", path)
		return nil, nil
	}
	what := fmt.Sprintf("an unfinished run into table %q (%s done, last saved %s)", st.Table, plural(st.Rows(), "row"), st.UpdatedAt.Format(time.RFC3339))
	if err := st.Check(hash, table); err != nil {
		what += fmt.Sprintf(" that --resume could not continue: %v", err)
	}
	return nil, stateErrorf("run: %s holds %s: pass --resume to continue it, or --fresh to start over and overwrite the state file", path, what)
}
