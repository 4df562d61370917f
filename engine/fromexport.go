package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/internal/checkpoint"
	"github.com/pgdynamo/migrate/mapping"
	"github.com/pgdynamo/migrate/transform"
)

// exportEntity is the entity of an item whose entity attribute is missing.
const exportEntity = "(none)"

// runExport is Run for RunConfig.Export: the files of the export are the
// sources, their lines the rows, each with one item. Everything after
// reading is Run's: the target, the writer's checks, the watermark,
// checkpoints, rejects and the result.
func runExport(ctx context.Context, cfg RunConfig, start time.Time) (*RunResult, error) {
	m, log, exp := cfg.Mapping, cfg.Logger, cfg.Export
	reject := cfg.OnError == OnErrorReject
	if got := exp.MappingSHA256(); got != m.Digest {
		return nil, configErrorf("run: the export was made with another mapping (sha256 %.12s…, and %s has %.12s…): load it with the mapping it was made with", got, m.File, m.Digest)
	}
	if _, ok := cfg.Target.(contract.Starter); ok {
		return nil, configErrorf("run: an export is loaded into a table, not into another export")
	}
	prev, err := previousRun(log, cfg.StateFile, m.Digest, cfg.Table, cfg.Resume, cfg.Fresh)
	if err != nil {
		return nil, err
	}
	if prev != nil && prev.Export != exp.ID() {
		return nil, stateErrorf("run --resume: %s records the load of %s, not of %s; pass --fresh instead of --resume to start over", cfg.StateFile, describeExport(prev.Export), exp.ID())
	}
	target := cfg.Target
	if target == nil {
		target = newTableTarget(cfg, prev)
	}
	info, err := target.Open(ctx)
	if err != nil {
		return nil, err
	}

	files := exp.Files()
	r := &runner{cfg: cfg, log: log, reject: reject, stats: map[string]*entityStats{}, bySource: map[string][]*entityStats{}, targetKind: info.Kind}
	estimates := map[string]int64{}
	var names, entities []string
	for _, e := range m.Entities {
		entities = append(entities, e.Name)
	}
	for _, f := range files {
		names = append(names, f.Name)
		for e, n := range f.Entities {
			estimates[e] += n
			if !contains(entities, e) {
				entities = append(entities, e)
			}
		}
	}
	entities = append(entities, exportEntity)
	for _, e := range entities {
		es := &entityStats{name: e, source: "export", estimate: estimates[e]}
		r.stats[e] = es
		if e != exportEntity || estimates[e] > 0 {
			r.order = append(r.order, es)
		}
	}

	var rejects *rejectFile
	if reject {
		keep := int64(-1)
		if prev != nil && prev.RejectFile == cfg.RejectFile {
			keep = prev.RejectBytes
		}
		if rejects, err = openRejectFile(cfg.RejectFile, keep, log); err != nil {
			return nil, err
		}
		defer rejects.close()
	}
	r.wm = newWatermark(names, rejects, pendingLimit(target, cfg.MaxPendingRows))
	// An export's items carry no proof that their keys are unique: every
	// entity's are checked, as Run does for the keys it cannot prove.
	if r.keys, err = newKeyCheck(m, mapping.KeyProof{}, entities, cfg.TempDir); err != nil {
		return nil, err
	}
	defer r.keys.close()
	state := &checkpoint.State{
		Mapping: m.File, MappingSHA256: m.Digest, Table: cfg.Table,
		StartedAt: start.UTC(), RejectFile: cfg.RejectFile, Export: exp.ID(), Target: targetCheckpoint(info),
	}
	after, done := map[string]int64{}, map[string]bool{}
	if prev != nil {
		state.StartedAt = prev.StartedAt
		for _, s := range prev.Sources {
			r.wm.restore(s)
			done[s.Name] = s.Done
			if len(s.After) == 1 {
				after[s.Name], _ = s.After[0].(int64)
			}
		}
		log.Info("resuming", "state", cfg.StateFile, "lines done", prev.Rows())
	}
	save := func(complete bool) (mark, error) {
		mk := r.wm.snapshot()
		if mk.err != nil {
			return mk, mk.err
		}
		state.Sources, state.RejectBytes = mk.sources, mk.rejectBytes
		state.Complete = complete && mk.complete
		state.UpdatedAt = time.Now().UTC()
		return mk, checkpoint.Save(cfg.StateFile, state)
	}
	if _, err := save(false); err != nil {
		return nil, err
	}

	res := &RunResult{
		Version: 1, Mapping: m.File, MappingSHA256: m.Digest, Table: cfg.Table, Target: info,
		StateFile: cfg.StateFile, RejectFile: cfg.RejectFile, Resumed: prev != nil, StartedAt: start.UTC(),
	}
	begin := contract.RunStart{Table: cfg.Table, Target: info, StateFile: cfg.StateFile, Resumed: prev != nil}
	for _, es := range r.order {
		begin.Entities = append(begin.Entities, es.progress())
	}
	cfg.Observer.Started(begin)
	stopProgress := r.reportProgress(start)

	r.read = func(ctx context.Context, out chan<- contract.Item) error {
		for _, f := range files {
			if done[f.Name] {
				continue
			}
			for it, err := range exp.Items(ctx, f.Name, after[f.Name]) {
				if err != nil {
					return err
				}
				if err := r.sendExportItem(ctx, f.Name, it, out); err != nil {
					return err
				}
			}
		}
		r.wm.finishReading()
		return nil
	}
	ls, failure := r.pipeline(ctx, target, nil, nil, save)
	// Duplicates found now were written: the load is complete, and wrong.
	var duplicates error
	if failure == nil && ctx.Err() == nil {
		duplicates = r.checkKeys()
	}
	mk, err := save(failure == nil)
	if err != nil {
		failure = errors.Join(failure, fmt.Errorf("save checkpoint: %w", err))
	}
	stopProgress()
	return r.result(ctx, res, ls, mk, failure, duplicates, start)
}

// sendExportItem registers one line with the watermark and sends its item.
func (r *runner) sendExportItem(ctx context.Context, file string, it contract.SourceItem, out chan<- contract.Item) error {
	entity := exportEntity
	if av, ok := it.Attrs[r.cfg.Mapping.EntityAttribute].(*types.AttributeValueMemberS); ok && r.stats[av.Value] != nil {
		entity = av.Value
	}
	es := r.stats[entity]
	es.rows.Add(1)
	if es.started.Load() == 0 {
		es.touch(&es.started)
	}
	key := fmt.Sprintf("line %d", it.Line)
	rm, err := r.wm.add(ctx, file, []any{it.Line}, nil, []string{entity}, nil)
	if err != nil {
		return err
	}
	item := contract.Item{Attrs: it.Attrs, Origin: contract.Origin{Entity: entity, Table: file, SourceKey: key}}
	item.Ack = r.acker(item, es, rm)
	if r.reject {
		item.Fail = func(ie *contract.ItemError) {
			r.wm.reject(rm, entity, exportReject(ie, it.Attrs))
			r.rejected(entity, ie)
		}
	} else {
		item.Fail = r.failStop
	}
	select {
	case out <- item:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// exportReject is the reject line of an item of an export: its row is the
// item itself, as DynamoDB JSON.
func exportReject(e *contract.ItemError, attrs map[string]types.AttributeValue) RejectLine {
	l := itemReject(nil, nil, nil, e) // an export item has no source column
	if data, err := transform.MarshalItem(attrs); err == nil {
		l.Row = json.RawMessage(data)
	}
	return l
}

// result settles a run's outcome: its counts, status and error. It is the
// end of runExport, and what Run does after its pipeline.
// duplicates is what the duplicate-key check of a run that wrote every
// item found (see keyCheck), if anything.
func (r *runner) result(ctx context.Context, res *RunResult, ls contract.Stats, mk mark, failure, duplicates error, start time.Time) (*RunResult, error) {
	cfg := r.cfg
	complete := failure == nil && mk.complete
	res.fill(r.order, ls, time.Since(start))
	for _, s := range mk.sources {
		res.AllRuns.Rows += s.Rows
		for _, c := range s.Entities {
			res.AllRuns.Items += c.Items
			res.AllRuns.Rejects += c.Rejects
		}
	}
	var result error
	switch {
	case complete && duplicates != nil:
		result = duplicates
		res.Status = StatusFailed
	case complete && r.reject && cfg.MaxRejects >= 0 && res.AllRuns.Rejects > int64(cfg.MaxRejects):
		result = kinded(ErrTooManyRejects, fmt.Errorf("%s, more than --max-rejects %d allows; see %s", plural(res.AllRuns.Rejects, "reject"), cfg.MaxRejects, cfg.RejectFile))
		res.Status = StatusComplete
	case complete:
		res.Status = StatusComplete
	case failure == nil && ctx.Err() != nil:
		result = kinded(ErrInterrupted, fmt.Errorf("run interrupted; progress is saved in %s. Resume with:\n  %s", cfg.StateFile, cfg.ResumeCommand))
		res.Status = StatusInterrupted
	default:
		if failure == nil {
			failure = errors.New("run ended before every row was written") // not expected: the walk ended without an error
		}
		result = fmt.Errorf("%w\nprogress up to the last acknowledged row is saved in %s; after fixing the cause, resume with:\n  %s", failure, cfg.StateFile, cfg.ResumeCommand)
		res.Status = StatusFailed
	}
	if result != nil {
		res.Error = result.Error()
	}
	return res, result
}

// describeExport names the export a state file records, for messages.
func describeExport(id string) string {
	if id == "" {
		return "the database (a run without --from-export)"
	}
	return id
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
