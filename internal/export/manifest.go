package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/pgdynamo/migrate/internal/diff"
)

// ManifestFormat is the value of Manifest.Format. It changes only when a
// field is removed, renamed or changes meaning; fields may be added.
const ManifestFormat = "migrate.export/v1"

// Manifest describes a complete export: manifest.json at the top of its
// directory or prefix. The data files are under data/, the prefix
// ImportTable reads; parts/ holds one record per data file, written as
// the file was committed (what a resumed export continues from).
type Manifest struct {
	Format   string `json:"format"`   // ManifestFormat
	Complete bool   `json:"complete"` // every source row is exported (or rejected)
	// Mapping is the mapping file as given; MappingSHA256 the hash of its
	// bytes, which import and run --from-export check.
	Mapping       string `json:"mapping"`
	MappingSHA256 string `json:"mappingSHA256"`
	// Table is the mapping's target table, the default name of the
	// imported one.
	Table string `json:"table"`
	// InputFormat and Compression are ImportTable's InputFormat and
	// InputCompressionType for the files.
	InputFormat string `json:"inputFormat"` // DYNAMODB_JSON
	Compression string `json:"compression"` // GZIP, ZSTD or NONE
	// DataPrefix is where the data files are, relative to the manifest:
	// ImportTable's S3KeyPrefix is the export's prefix plus this.
	DataPrefix string `json:"dataPrefix"`
	// Snapshots are the start times of the source snapshots the items
	// were read in (by the database's clock): one, or one per run when
	// the export was resumed (each file's record says which).
	Snapshots   []time.Time `json:"snapshots"`
	StartedAt   time.Time   `json:"startedAt"`
	CompletedAt time.Time   `json:"completedAt"`

	// Items, Bytes (as stored) and UncompressedBytes (what Import from S3
	// bills) over all files.
	Items             int64 `json:"items"`
	Bytes             int64 `json:"bytes"`
	UncompressedBytes int64 `json:"uncompressedBytes"`
	// Rows are the source rows done and Rejects the bad rows left out
	// (see the run's reject file), over all runs of the export.
	Rows    int64 `json:"rows"`
	Rejects int64 `json:"rejects"`
	// Entities has the items and content hash per entity, by name, and ContentHash
	// the hash of all items: the sum modulo 2^256 of the SHA-256 of each
	// item's canonical JSON, what `migrate verify` computes per entity for
	// the source and the table.
	Entities    []EntityCount `json:"entities"`
	ContentHash string        `json:"contentHash"`
	Files       []File        `json:"files"`
}

// File is one data file.
type File struct {
	Name              string        `json:"name"` // relative to the manifest: data/part-000001.json.gz
	Items             int64         `json:"items"`
	Entities          []EntityCount `json:"entities"`
	Bytes             int64         `json:"bytes"` // as stored (compressed)
	UncompressedBytes int64         `json:"uncompressedBytes"`
	SHA256            string        `json:"sha256"` // of the stored bytes, hex
	// Snapshot is the start of the source snapshot its items were read in.
	Snapshot time.Time `json:"snapshot"`
	// Acknowledged is how many items the run counted as done when the file
	// was committed: Items plus duplicates skipped (--on-duplicate skip).
	// A resumed export keeps the files whose running total of
	// Acknowledged is what its state file records.
	Acknowledged int64 `json:"acknowledged"`
}

// EntityCount is the items of one entity and their content hash.
type EntityCount struct {
	Entity      string `json:"entity"`
	Items       int64  `json:"items"`
	ContentHash string `json:"contentHash"`
}

// partRecord is what parts/<file>.json holds: the file, and what it
// belongs to.
type partRecord struct {
	File
	MappingSHA256 string `json:"mappingSHA256"`
}

// totals sums the files into the manifest's totals.
func (m *Manifest) totals() error {
	m.Items, m.Bytes, m.UncompressedBytes = 0, 0, 0
	m.Snapshots = nil
	sums := map[string]*diff.Sum{}
	counts := map[string]int64{}
	var order []string
	var all diff.Sum
	for _, f := range m.Files {
		m.Items += f.Items
		m.Bytes += f.Bytes
		m.UncompressedBytes += f.UncompressedBytes
		if !slices.ContainsFunc(m.Snapshots, f.Snapshot.Equal) {
			m.Snapshots = append(m.Snapshots, f.Snapshot)
		}
		for _, e := range f.Entities {
			s, err := diff.ParseSum(e.ContentHash)
			if err != nil {
				return fmt.Errorf("export: %s: entity %s: %w", f.Name, e.Entity, err)
			}
			if sums[e.Entity] == nil {
				sums[e.Entity] = &diff.Sum{}
				order = append(order, e.Entity)
			}
			sums[e.Entity].AddSum(s)
			counts[e.Entity] += e.Items
			all.AddSum(s)
		}
	}
	m.Entities = m.Entities[:0]
	slices.Sort(order) // files hold entities in any order (parallel readers)
	for _, e := range order {
		m.Entities = append(m.Entities, EntityCount{Entity: e, Items: counts[e], ContentHash: sums[e].String()})
	}
	m.ContentHash = all.String()
	return nil
}

// readManifest reads the manifest of an export and its bytes.
func readManifest(ctx context.Context, st store) (*Manifest, []byte, error) {
	r, err := st.get(ctx, manifestName)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("export: read %s: %w", manifestName, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, nil, fmt.Errorf("export: %s/%s is not an export manifest: %w", st.where(), manifestName, err)
	}
	if m.Format != ManifestFormat {
		return nil, nil, fmt.Errorf("export: %s/%s has format %q; this migrate reads %q", st.where(), manifestName, m.Format, ManifestFormat)
	}
	return &m, data, nil
}

func marshalIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
