// Package checkpoint reads and writes the state file of a migration run:
// how far each source table has been migrated, so that an interrupted run
// can be resumed.
//
// A source's position is the key of the last row whose items DynamoDB has
// all acknowledged, with every row before it also done (a contiguous
// watermark, not merely the highest key sent). Positions keep the Go types
// the extract package decodes key columns into, with a type tag each, so
// that a resumed read starts exactly after the row it stopped at.
//
// The file holds no secrets: no database URL, no credentials, only the
// mapping's path and hash, the target table and its identity (endpoint
// without credentials, region, ARN, ID, creation time), positions (key
// values of source rows) and counts. It is written atomically (a temporary file in
// the same directory, synced, then renamed over the old one), so a crash at
// any moment leaves the previous state or the new one, never a torn file.
package checkpoint

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pgdynamo/migrate/extract"
)

// Version is the state file format this package writes and reads.
const Version = 1

// Errors callers branch on.
var (
	ErrMappingChanged = errors.New("checkpoint: the mapping changed since the state file was written")
	ErrTableChanged   = errors.New("checkpoint: the state file is for another target table")
)

// State is the content of a state file.
type State struct {
	Version int `json:"version"`
	// Mapping is the mapping file's path as given on the command line, for
	// people; MappingSHA256 (hex) is what a resume checks.
	Mapping       string `json:"mapping"`
	MappingSHA256 string `json:"mappingSHA256"`
	Table         string `json:"table"`
	// Target identifies the table the positions were written to; a resume
	// into another one (CheckTarget) would skip rows it never wrote.
	Target    *Target   `json:"target,omitempty"`
	Complete  bool      `json:"complete"`
	StartedAt time.Time `json:"startedAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Shards are the shard counts computed for "count: auto" indexes; a
	// resumed run reuses them so that items land in the same shards.
	Shards  []Shard  `json:"shards,omitempty"`
	Sources []Source `json:"sources"`
	// RejectFile is the reject file of the run and RejectBytes its length
	// when the positions were recorded: the lines for rows up to the
	// positions. A resumed run truncates the file to that length, since the
	// rows after the positions are read, and rejected, again.
	RejectFile  string `json:"rejectFile,omitempty"`
	RejectBytes int64  `json:"rejectBytes,omitempty"`
	// Export identifies the export a run loads (run --from-export) and
	// the files it takes; its Sources are then the files, and a position
	// is the number of the last line done. Empty for a run that reads
	// the database.
	Export string `json:"export,omitempty"`
	// Schema is, for a sync, the definition of every table its stream
	// reads, as the items in the table were rendered with: a sync compares
	// it with the catalog to follow DDL or to stop on it, also after a
	// restart. Empty for a run.
	Schema []extract.TableSchema `json:"schema,omitempty"`
}

// Shard is the shard count of one index of one entity.
type Shard struct {
	Entity string `json:"entity"`
	Index  string `json:"index"`
	Count  int    `json:"count"`
}

// Source is the progress of one source table.
type Source struct {
	Name string `json:"name"` // schema.table
	// Done says every row of the table is written or rejected.
	Done bool `json:"done"`
	// After is the key of the last row done, in the table's key column
	// order; empty when no row is done yet.
	After Position `json:"after,omitempty"`
	// Rows counts the rows done, over every run of this migration.
	Rows     int64    `json:"rows"`
	Entities []Counts `json:"entities,omitempty"`
	// Table, From and Until describe one key range of a table split for
	// parallel readers: Name is then the range's ("public.orders [2/8]"),
	// Table the table's, and the range holds the rows with keys after
	// From (none: from the first) up to Until included (none: to the
	// last). A resumed run reads the same ranges.
	Table string   `json:"table,omitempty"`
	From  Position `json:"from,omitempty"`
	Until Position `json:"until,omitempty"`
}

// Counts are the items written and the rows rejected for one entity, for
// the rows done, over every run of this migration.
type Counts struct {
	Entity  string `json:"entity"`
	Items   int64  `json:"items"`
	Rejects int64  `json:"rejects"`
}

// Position is a row's key values as extract decodes them: nil, int64,
// string, float64, bool, time.Time, []byte, extract.Decimal, extract.JSON
// or extract.Infinity. In JSON each value is an object with a type tag and
// the value as a string, which round-trips every one of them exactly.
type Position []any

type taggedValue struct {
	Type  string `json:"type"`
	Value string `json:"value,omitempty"`
}

// Type tags of Position values.
const (
	tagNull     = "null"
	tagInt      = "int8"
	tagText     = "text"
	tagFloat    = "float8"
	tagBool     = "bool"
	tagTime     = "timestamp"
	tagBytes    = "bytea"
	tagNumeric  = "numeric"
	tagJSON     = "json"
	tagInfinity = "infinity"
)

// MarshalJSON encodes p as a list of tagged values.
func (p Position) MarshalJSON() ([]byte, error) {
	out := make([]taggedValue, len(p))
	for i, v := range p {
		tv, err := tag(v)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: position value %d: %w", i, err)
		}
		out[i] = tv
	}
	return json.Marshal(out)
}

func tag(v any) (taggedValue, error) {
	switch v := v.(type) {
	case nil:
		return taggedValue{Type: tagNull}, nil
	case int64:
		return taggedValue{tagInt, strconv.FormatInt(v, 10)}, nil
	case string:
		return taggedValue{tagText, v}, nil
	case float64:
		// Shortest text that parses back to the same bits; NaN and ±Inf
		// included.
		return taggedValue{tagFloat, strconv.FormatFloat(v, 'g', -1, 64)}, nil
	case bool:
		return taggedValue{tagBool, strconv.FormatBool(v)}, nil
	case time.Time:
		return taggedValue{tagTime, v.UTC().Format(time.RFC3339Nano)}, nil
	case []byte:
		return taggedValue{tagBytes, base64.StdEncoding.EncodeToString(v)}, nil
	case extract.Decimal:
		return taggedValue{tagNumeric, string(v)}, nil
	case extract.JSON:
		return taggedValue{tagJSON, string(v)}, nil
	case extract.Infinity:
		return taggedValue{tagInfinity, strconv.Itoa(v.Sign)}, nil
	}
	return taggedValue{}, fmt.Errorf("a %T cannot be recorded in a checkpoint", v)
}

// UnmarshalJSON decodes a list of tagged values.
func (p *Position) UnmarshalJSON(data []byte) error {
	var in []taggedValue
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("checkpoint: position: %w", err)
	}
	out := make(Position, len(in))
	for i, tv := range in {
		v, err := untag(tv)
		if err != nil {
			return fmt.Errorf("checkpoint: position value %d: %w", i, err)
		}
		out[i] = v
	}
	*p = out
	return nil
}

func untag(tv taggedValue) (any, error) {
	switch tv.Type {
	case tagNull:
		return nil, nil
	case tagInt:
		return strconv.ParseInt(tv.Value, 10, 64)
	case tagText:
		return tv.Value, nil
	case tagFloat:
		return strconv.ParseFloat(tv.Value, 64)
	case tagBool:
		return strconv.ParseBool(tv.Value)
	case tagTime:
		t, err := time.Parse(time.RFC3339Nano, tv.Value)
		if err != nil {
			return nil, err
		}
		return t.UTC(), nil
	case tagBytes:
		return base64.StdEncoding.DecodeString(tv.Value)
	case tagNumeric:
		return extract.Decimal(tv.Value), nil
	case tagJSON:
		return extract.JSON(tv.Value), nil
	case tagInfinity:
		sign, err := strconv.Atoi(tv.Value)
		if err != nil || (sign != 1 && sign != -1) {
			return nil, fmt.Errorf("infinity sign %q is not 1 or -1", tv.Value)
		}
		return extract.Infinity{Sign: sign}, nil
	}
	return nil, fmt.Errorf("unknown type tag %q", tv.Type)
}

// Hash is the hex SHA-256 of a mapping file's bytes.
func Hash(mapping []byte) string {
	sum := sha256.Sum256(mapping)
	return hex.EncodeToString(sum[:])
}

// Load reads a state file. A missing file is an error wrapping
// fs.ErrNotExist.
func Load(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("checkpoint: %s is not a state file: %w", path, err)
	}
	if s.Version != Version {
		return nil, fmt.Errorf("checkpoint: %s has format version %d; this migrate reads version %d", path, s.Version, Version)
	}
	return &s, nil
}

// Check reports whether s can be resumed by a run of the mapping with the
// given hash into table.
func (s *State) Check(mappingSHA256, table string) error {
	if s.Table != table {
		return fmt.Errorf("%w: it records a migration into %q, not %q", ErrTableChanged, s.Table, table)
	}
	if s.MappingSHA256 != mappingSHA256 {
		return fmt.Errorf("%w (%s: sha256 %.12s… then, %.12s… now)", ErrMappingChanged, s.Mapping, s.MappingSHA256, mappingSHA256)
	}
	return nil
}

// Rows is the number of rows done over all sources.
func (s *State) Rows() int64 {
	var n int64
	for _, src := range s.Sources {
		n += src.Rows
	}
	return n
}

// Save writes s to path atomically, creating the directory if needed. The
// file is readable by its owner only.
func Save(path string, s *State) error {
	c := *s
	c.Version = Version
	data, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("checkpoint: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("checkpoint: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
