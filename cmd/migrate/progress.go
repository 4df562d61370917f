package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// entityStats counts one entity's progress in this run. written counts
// acknowledged items only (it is updated from the writer's Ack callbacks).
type entityStats struct {
	name, source       string
	rows, rejects      atomic.Int64
	written            atomic.Int64
	started, lastWrite atomic.Int64 // unix nanos
}

func (s *entityStats) touch(field *atomic.Int64) { field.Store(time.Now().UnixNano()) }

// line renders the entity's progress: rows read (of the estimate), items
// written, items/s and the ETA of its source table.
func (s *entityStats) line(estimate int64) string {
	rows, written := s.rows.Load(), s.written.Load()
	st := s.started.Load()
	if st == 0 {
		return "waiting"
	}
	elapsed := time.Since(time.Unix(0, st)).Seconds()
	text := fmt.Sprintf("rows %d", rows)
	if estimate > 0 {
		text += fmt.Sprintf(" of ~%d", estimate)
	}
	text += fmt.Sprintf(", items %d", written)
	if elapsed > 0 {
		text += fmt.Sprintf(", %.0f items/s", float64(written)/elapsed)
	}
	if r := s.rejects.Load(); r > 0 {
		text += fmt.Sprintf(", %d rejected", r)
	}
	if eta, ok := s.eta(estimate, elapsed); ok {
		text += ", ETA " + eta.Round(time.Second).String()
	}
	return text
}

// eta extrapolates the rows still to read at the rate seen so far.
func (s *entityStats) eta(estimate int64, elapsed float64) (time.Duration, bool) {
	rows := s.rows.Load()
	if estimate <= rows || rows == 0 || elapsed <= 0 {
		return 0, false
	}
	rate := float64(rows) / elapsed
	return time.Duration(float64(estimate-rows) / rate * float64(time.Second)), true
}

// progress reports a run's progress while it runs: bars on a terminal, a
// log line every logEvery otherwise, nothing with --quiet.
type progress struct {
	entities  []*entityStats
	estimates map[string]int64 // by source table
	logger    *slog.Logger
	bars      *mpb.Progress
	bar       []*mpb.Bar
	stopOnce  sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

// logEvery is how often progress is logged when stderr is not a terminal.
var logEvery = 5 * time.Second

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// startProgress starts reporting. With bars, the returned logger writes
// above them; otherwise it is logger itself.
func startProgress(stderr io.Writer, quiet bool, logger *slog.Logger, level slog.Leveler, entities []*entityStats, estimates map[string]int64) (*progress, *slog.Logger) {
	p := &progress{entities: entities, estimates: estimates, logger: logger, done: make(chan struct{})}
	switch {
	case quiet:
		return p, logger
	case isTerminal(stderr):
		p.bars = mpb.New(mpb.WithOutput(stderr), mpb.WithWidth(30), mpb.WithRefreshRate(250*time.Millisecond))
		width := 0
		for _, e := range entities {
			width = max(width, len(e.name))
		}
		for _, e := range entities {
			est := estimates[e.source]
			p.bar = append(p.bar, p.bars.New(0, mpb.BarStyle(),
				mpb.PrependDecorators(decor.Name(e.name, decor.WC{W: width + 1, C: decor.DindentRight})),
				mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return e.line(est) })),
			))
		}
		p.wg.Go(p.updateBars)
		logger = slog.New(slog.NewTextHandler(p.bars, &slog.HandlerOptions{Level: level}))
		return p, logger
	default:
		p.wg.Go(p.logLines)
		return p, logger
	}
}

func (p *progress) updateBars() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		for i, e := range p.entities {
			rows := e.rows.Load()
			p.bar[i].SetTotal(max(p.estimates[e.source], rows), false)
			p.bar[i].SetCurrent(rows)
		}
		select {
		case <-p.done:
			return
		case <-t.C:
		}
	}
}

func (p *progress) logLines() {
	t := time.NewTicker(logEvery)
	defer t.Stop()
	last := map[string]string{}
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		for _, e := range p.entities {
			if e.started.Load() == 0 {
				continue
			}
			est := p.estimates[e.source]
			l := e.line(est)
			if last[e.name] == fmt.Sprint(e.rows.Load(), e.written.Load(), e.rejects.Load()) {
				continue // nothing moved since the last line
			}
			last[e.name] = fmt.Sprint(e.rows.Load(), e.written.Load(), e.rejects.Load())
			p.logger.Info("progress "+e.name+": "+l, "entity", e.name, "rows", e.rows.Load(), "items", e.written.Load(), "rejects", e.rejects.Load())
		}
	}
}

// stop ends reporting; bars are completed (finished) or left where they
// are, and removed from the screen's live area.
func (p *progress) stop(finished bool) {
	p.stopOnce.Do(func() {
		close(p.done)
		p.wg.Wait()
		if p.bars == nil {
			return
		}
		for i, e := range p.entities {
			p.bar[i].SetCurrent(e.rows.Load())
			if finished {
				p.bar[i].SetTotal(-1, true)
			} else {
				p.bar[i].Abort(false)
			}
		}
		p.bars.Wait()
	})
}
