package render

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
)

// ProgressConfig says where a RunProgress draws.
type ProgressConfig struct {
	// Stdout gets the shard counts; Stderr the bars, when it is a
	// terminal.
	Stdout, Stderr io.Writer
	// Logger logs progress lines when there are no bars; NewLogger makes
	// the logger that writes above the bars when there are.
	Logger    *slog.Logger
	NewLogger func(io.Writer) *slog.Logger
	// Quiet: no bars, no progress lines.
	Quiet bool
}

// RunProgress draws a run's progress, as the engine reports it: bars on a
// terminal, a log line per entity every logEvery otherwise, nothing when
// quiet. It is the migrate command's contract.Observer.
type RunProgress struct {
	stdout io.Writer
	logger *slog.Logger // writes above the bars when there are bars
	quiet  bool

	bars *mpb.Progress
	mu   sync.Mutex
	bar  []*mpb.Bar
	last contract.Progress
	// lastLog is when progress was last logged, and what it said per entity.
	lastLog  time.Time
	lastLine map[string]string
	stopOnce sync.Once
}

// logEvery is how often progress is logged when stderr is not a terminal.
var logEvery = 5 * time.Second

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// NewRunProgress starts drawing, with bars when c.Stderr is a terminal.
func NewRunProgress(c ProgressConfig) *RunProgress {
	p := &RunProgress{stdout: c.Stdout, logger: c.Logger, quiet: c.Quiet, lastLog: time.Now(), lastLine: map[string]string{}}
	if !c.Quiet && isTerminal(c.Stderr) {
		p.bars = mpb.New(mpb.WithOutput(c.Stderr), mpb.WithWidth(30), mpb.WithRefreshRate(250*time.Millisecond))
		p.logger = c.NewLogger(p.bars)
	}
	return p
}

// Logger is the logger that writes without breaking the bars.
func (p *RunProgress) Logger() *slog.Logger { return p.logger }

// Started prints the shard counts and sets up one bar per entity.
func (p *RunProgress) Started(s contract.RunStart) {
	for _, r := range s.Shards {
		fmt.Fprintln(p.stdout, r)
	}
	if p.bars == nil {
		return
	}
	width := 0
	for _, e := range s.Entities {
		width = max(width, len(e.Entity))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, e := range s.Entities {
		p.bar = append(p.bar, p.bars.New(0, mpb.BarStyle(),
			mpb.PrependDecorators(decor.Name(e.Entity, decor.WC{W: width + 1, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
				p.mu.Lock()
				defer p.mu.Unlock()
				if i < len(p.last.Entities) {
					return EntityLine(p.last.Entities[i])
				}
				return "waiting"
			})),
		))
	}
}

// Progress updates the bars, or logs a line per entity that moved.
func (p *RunProgress) Progress(pr contract.Progress) {
	p.mu.Lock()
	p.last = pr
	bars := p.bar
	p.mu.Unlock()
	switch {
	case p.quiet:
	case p.bars != nil:
		for i, e := range pr.Entities {
			if i < len(bars) {
				bars[i].SetTotal(max(e.Estimate, e.RowsRead), false)
				bars[i].SetCurrent(e.ItemsWritten + e.Rejects)
			}
		}
	case time.Since(p.lastLog) >= logEvery && !pr.Done:
		p.lastLog = time.Now()
		for _, e := range pr.Entities {
			if e.Started.IsZero() {
				continue
			}
			moved := fmt.Sprint(e.RowsRead, e.ItemsWritten, e.Rejects)
			if p.lastLine[e.Entity] == moved {
				continue // nothing moved since the last line
			}
			p.lastLine[e.Entity] = moved
			p.logger.Info("progress "+e.Entity+": "+EntityLine(e), "entity", e.Entity, "rows", e.RowsRead, "items", e.ItemsWritten, "rejects", e.Rejects)
		}
	}
}

// Interrupted says what happens after the first signal.
func (p *RunProgress) Interrupted() {
	p.logger.Warn("interrupted: reading stopped; waiting for the items already read to be written, then saving the checkpoint")
}

// Stop ends drawing; bars are completed (finished) or left where they are,
// and removed from the screen's live area.
func (p *RunProgress) Stop(finished bool) {
	p.stopOnce.Do(func() {
		if p.bars == nil {
			return
		}
		p.mu.Lock()
		bars, last := p.bar, p.last
		p.mu.Unlock()
		for i, b := range bars {
			if i < len(last.Entities) {
				b.SetCurrent(last.Entities[i].ItemsWritten + last.Entities[i].Rejects)
			}
			if finished {
				b.SetTotal(-1, true)
			} else {
				b.Abort(false)
			}
		}
		p.bars.Wait()
	})
}

// EntityLine renders an entity's progress, by what the target
// acknowledged: items written (of the rows expected), items/s, rejects,
// rows read ahead of the writes, and the ETA.
func EntityLine(e contract.EntityProgress) string {
	if e.Started.IsZero() {
		return "waiting"
	}
	elapsed := time.Since(e.Started).Seconds()
	text := fmt.Sprintf("items %d", e.ItemsWritten)
	if total := max(e.Estimate, e.RowsRead); total > 0 {
		text += fmt.Sprintf(" of ~%d", total)
	}
	if elapsed > 0 {
		text += fmt.Sprintf(", %.0f items/s", float64(e.ItemsWritten)/elapsed)
	}
	if e.Rejects > 0 {
		text += fmt.Sprintf(", %d rejected", e.Rejects)
	}
	text += fmt.Sprintf(", %d rows read", e.RowsRead)
	if eta, ok := entityETA(e, elapsed); ok {
		text += ", ETA " + eta.Round(time.Second).String()
	}
	return text
}

// entityETA extrapolates the items still to write at the rate of
// acknowledgements so far, until the last one is written.
func entityETA(e contract.EntityProgress, elapsed float64) (time.Duration, bool) {
	done := e.ItemsWritten + e.Rejects
	total := max(e.Estimate, e.RowsRead)
	if total <= done || done == 0 || elapsed <= 0 {
		return 0, false
	}
	rate := float64(done) / elapsed
	return time.Duration(float64(total-done) / rate * float64(time.Second)), true
}

// SyncObserver is sync's engine.SyncObserver: it prints the slot at once,
// the initial load's progress, and a status line every status interval.
type SyncObserver struct {
	*RunProgress
	Stderr io.Writer
	// DropCmd is the command that removes the slot, printed with it.
	DropCmd string
}

var _ engine.SyncObserver = (*SyncObserver)(nil)

// Slot prints the slot and publication, created or reused.
func (s *SyncObserver) Slot(info engine.SlotInfo) { _ = SlotInfo(s.Stderr, info, s.DropCmd) }

// Status logs a status line, unless quiet or the sync is done (its end is
// printed by the command).
func (s *SyncObserver) Status(st engine.SyncStatus) {
	if s.quiet || st.Done {
		return
	}
	s.logger.Info("sync: " + SyncStatusLine(st))
}
