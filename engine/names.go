package engine

import (
	"github.com/pgdynamo/migrate/internal/affect"
	"github.com/pgdynamo/migrate/internal/prove"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/internal/report"
)

// Names for the types of the verbs' results and configurations that
// internal packages define, so that a caller can name them; each is
// documented where it is defined, and shown by `go doc` there.
type (
	// PlanResult is what Plan found: per entity, the items to create,
	// change and leave stale, the capacity estimate and the shard counts.
	PlanResult = report.Plan
	// VerifyResult is what Verify found: per entity, the counts and
	// content hashes of both sides, and every differing item.
	VerifyResult = report.Verify
	// ProveResult is Prove's answer per access pattern: the parameter
	// sets tried, matched and mismatched, and the first difference.
	ProveResult = prove.Result
	// ProveOptions are the patterns Prove asks and how it samples their
	// parameters: the Config field of ProveConfig.
	ProveOptions = prove.Config
	// LSN is a position in the source's write-ahead log.
	LSN = replicate.LSN
	// Slot is a replication slot as the source reports it.
	Slot = replicate.Slot
	// Fanout is the items one source change affected, by kind.
	Fanout = affect.Fanout
)
