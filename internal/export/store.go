package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Where returns the destination (or source) of an export: a local
// directory, or s3://bucket/prefix.
type Where struct {
	Dir            string // a local directory, or ""
	Bucket, Prefix string // s3://Bucket/Prefix, Prefix without slashes at either end
}

// ParseWhere reads "s3://bucket/prefix" or a local directory path.
func ParseWhere(s string) (Where, error) {
	rest, ok := strings.CutPrefix(s, "s3://")
	if !ok {
		if s == "" {
			return Where{}, errors.New("export: no destination: give a directory or s3://bucket/prefix")
		}
		if strings.Contains(s, "://") {
			return Where{}, fmt.Errorf("export: %q: only local directories and s3://bucket/prefix are supported", s)
		}
		return Where{Dir: s}, nil
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return Where{}, fmt.Errorf("export: %q has no bucket: use s3://bucket/prefix", s)
	}
	return Where{Bucket: bucket, Prefix: strings.Trim(prefix, "/")}, nil
}

// IsS3 says the place is in S3.
func (w Where) IsS3() bool { return w.Bucket != "" }

func (w Where) String() string {
	if w.IsS3() {
		if w.Prefix == "" {
			return "s3://" + w.Bucket
		}
		return "s3://" + w.Bucket + "/" + w.Prefix
	}
	return w.Dir
}

// key is the S3 key of a name under the prefix.
func (w Where) key(name string) string {
	if w.Prefix == "" {
		return name
	}
	return w.Prefix + "/" + name
}

// The layout of an export, under its directory or prefix.
const (
	dataDir      = "data"          // the DYNAMODB_JSON files: the prefix ImportTable reads
	partsDir     = "parts"         // one record per committed data file, written as it commits
	manifestName = "manifest.json" // the whole export, written when it completes
	tempDir      = ".tmp"          // local destinations: files being written
)

// store is where an export's files live.
type store interface {
	// create starts a file whose content appears under name only when
	// commit returns nil; abort discards it.
	create(ctx context.Context, name string) (pendingFile, error)
	// put writes a small file atomically.
	put(ctx context.Context, name string, data []byte) error
	// get opens a file; a missing one is an error wrapping fs.ErrNotExist.
	get(ctx context.Context, name string) (io.ReadCloser, error)
	// list returns the names of the files in a directory, sorted.
	list(ctx context.Context, dir string) ([]string, error)
	remove(ctx context.Context, name string) error
	// cleanup discards what crashed writers left behind (temporary files,
	// unfinished multipart uploads).
	cleanup(ctx context.Context) error
	where() Where
}

// pendingFile is a file being written.
type pendingFile interface {
	io.Writer
	commit() error
	abort()
}

// localStore is a directory.
type localStore struct{ w Where }

func (s localStore) where() Where { return s.w }

func (s localStore) path(name string) string { return filepath.Join(s.w.Dir, filepath.FromSlash(name)) }

func (s localStore) create(_ context.Context, name string) (pendingFile, error) {
	dir := s.path(tempDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	f, err := os.CreateTemp(dir, path.Base(name)+".*")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &localFile{f: f, final: s.path(name)}, nil
}

// localFile commits by fsync and rename: after a crash the file is either
// complete under its name or absent.
type localFile struct {
	f     *os.File
	final string
}

func (l *localFile) Write(p []byte) (int, error) { return l.f.Write(p) }

func (l *localFile) commit() error {
	if err := l.f.Sync(); err != nil {
		l.abort()
		return fmt.Errorf("export: sync %s: %w", l.f.Name(), err)
	}
	if err := l.f.Close(); err != nil {
		os.Remove(l.f.Name())
		return fmt.Errorf("export: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(l.final), 0o755); err != nil {
		os.Remove(l.f.Name())
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(l.f.Name(), l.final); err != nil {
		os.Remove(l.f.Name())
		return fmt.Errorf("export: %w", err)
	}
	syncDir(filepath.Dir(l.final))
	return nil
}

func (l *localFile) abort() {
	l.f.Close()
	os.Remove(l.f.Name())
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func (s localStore) put(ctx context.Context, name string, data []byte) error {
	f, err := s.create(ctx, name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.abort()
		return fmt.Errorf("export: write %s: %w", name, err)
	}
	return f.commit()
}

func (s localStore) get(_ context.Context, name string) (io.ReadCloser, error) {
	f, err := os.Open(s.path(name))
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return f, nil
}

func (s localStore) list(_ context.Context, dir string) ([]string, error) {
	entries, err := os.ReadDir(s.path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, path.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s localStore) remove(_ context.Context, name string) error {
	if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

func (s localStore) cleanup(context.Context) error {
	if err := os.RemoveAll(s.path(tempDir)); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// Store is an export's directory or S3 prefix, for TargetConfig.
type Store struct{ store }

// NewStore opens where for writing or reading: a local directory, or
// s3://bucket/prefix through client (required then; nil otherwise).
func NewStore(w Where, client S3, upload UploadOptions) (Store, error) {
	if !w.IsS3() {
		return Store{localStore{w}}, nil
	}
	if client == nil {
		return Store{}, fmt.Errorf("export: %s needs an S3 client", w)
	}
	return Store{newS3Store(w, client, upload)}, nil
}

// String is the place, as given.
func (s Store) String() string { return s.where().String() }
