package affect

import (
	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/internal/replicate"
	"github.com/pgdynamo/migrate/transform"
)

// Hooks for the tests of package affect_test, which reach PostgreSQL
// through migratetest (and so cannot be package affect: migratetest
// imports the engine, which imports affect).

func (g *Graph) Streamed(src *transform.Source) bool { return g.streamed[src] }

// OwnSource is the source built from table t.
func (g *Graph) OwnSource(t replicate.Table) *transform.Source {
	for _, e := range g.byTable[t] {
		if e.kind == ownEdge {
			return e.src
		}
	}
	return nil
}

// LastStreamed is the last row of src the batch renders from the stream;
// nil when it reads it back (or the change took it away).
func (b *Batch) LastStreamed(src *transform.Source) *extract.Row {
	all := b.streamed[src].all()
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1].row
}

func Describe(c *replicate.Change) string { return describe(c, nil) }
