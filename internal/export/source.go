package export

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"

	"github.com/pgdynamo/migrate/contract"
)

// Source is a complete export opened for reading: what `run --from-export`
// loads into a table (a contract.Source) and what import imports.
type Source struct {
	st       store
	Manifest *Manifest
	sha      string // of manifest.json
	files    []File // the files taken (Select)
	k, n     int
}

var _ contract.Source = (*Source)(nil)

// Open reads the manifest of the export at st. An export that is not
// complete (no manifest yet) is refused: resume it first.
func Open(ctx context.Context, st Store) (*Source, error) {
	m, data, err := readManifest(ctx, st.store)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, kindedConfig(fmt.Errorf("%s holds no complete export (no %s): finish the export first (migrate export ... --resume)", st, manifestName))
	}
	if err != nil {
		return nil, kindedConfig(err)
	}
	if !m.Complete {
		return nil, kindedConfig(fmt.Errorf("%s: %w", st, errNotComplete))
	}
	sum := sha256.Sum256(data)
	return &Source{st: st.store, Manifest: m, sha: hex.EncodeToString(sum[:]), files: m.Files, k: 1, n: 1}, nil
}

// Select takes the k-th of n disjoint shares of the files (1 <= k <= n):
// files 1, 1+n, 1+2n... for k = 1, and so on, so that n machines, each
// given its own k, load every file exactly once between them.
func (s *Source) Select(k, n int) error {
	if n < 1 || k < 1 || k > n {
		return kindedConfig(fmt.Errorf("export: files %d/%d: want k/N with 1 <= k <= N", k, n))
	}
	s.k, s.n = k, n
	s.files = nil
	for i, f := range s.Manifest.Files {
		if i%n == k-1 {
			s.files = append(s.files, f)
		}
	}
	if total := len(s.Manifest.Files); len(s.files) == 0 && total > 0 {
		// A machine told to load a share that holds no file would load
		// nothing and succeed, and nobody would learn that N was wrong.
		return kindedConfig(fmt.Errorf("export: files %d/%d: the export has %d file(s), so share %d of %d holds none; split it into at most %d shares",
			k, n, total, k, n, total))
	}
	return nil
}

// Taken returns the files taken.
func (s *Source) Taken() []File { return s.files }

// ID names the export (by its manifest's hash) and the share taken.
func (s *Source) ID() string {
	return fmt.Sprintf("%s (manifest sha256 %.16s, files %d/%d)", s.st.where(), s.sha, s.k, s.n)
}

// MappingSHA256 is the hash of the mapping the export was made with.
func (s *Source) MappingSHA256() string { return s.Manifest.MappingSHA256 }

// Files lists the files taken, for engine.Run.
func (s *Source) Files() []contract.SourceFile {
	out := make([]contract.SourceFile, len(s.files))
	for i, f := range s.files {
		ents := map[string]int64{}
		for _, e := range f.Entities {
			ents[e.Entity] = e.Items
		}
		out[i] = contract.SourceFile{Name: f.Name, Items: f.Items, Entities: ents}
	}
	return out
}

// maxLine bounds one line: a 400 KB item is at most a few MB of JSON.
const maxLine = 64 << 20

// Items reads a file's items after line after. The whole file is read (a
// resumed file from its start, skipping lines), and at its end its
// SHA-256 and line count are checked against the manifest: a changed or
// truncated file is an error, after the items read from it.
func (s *Source) Items(ctx context.Context, name string, after int64) iter.Seq2[contract.SourceItem, error] {
	return func(yield func(contract.SourceItem, error) bool) {
		var want *File
		for i := range s.Manifest.Files {
			if s.Manifest.Files[i].Name == name {
				want = &s.Manifest.Files[i]
			}
		}
		if want == nil {
			yield(contract.SourceItem{}, fmt.Errorf("export: %s is not a file of the export", name))
			return
		}
		raw, err := s.st.get(ctx, name)
		if err != nil {
			yield(contract.SourceItem{}, err)
			return
		}
		defer raw.Close()
		sha := sha256.New()
		tee := io.TeeReader(raw, sha)
		z, err := decompressor(bufio.NewReaderSize(tee, 1<<20), compressionOf(s.Manifest.Compression))
		if err != nil {
			yield(contract.SourceItem{}, fmt.Errorf("export: %s: %w", name, err))
			return
		}
		defer z.Close()
		sc := bufio.NewScanner(z)
		sc.Buffer(make([]byte, 0, 1<<20), maxLine)
		var n int64
		for sc.Scan() {
			n++
			if n <= after {
				continue
			}
			attrs, err := decodeLine(trimLine(sc.Bytes()))
			if err != nil {
				yield(contract.SourceItem{}, fmt.Errorf("export: %s line %d: %w", name, n, err))
				return
			}
			if !yield(contract.SourceItem{Line: n, Attrs: attrs}, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(contract.SourceItem{}, fmt.Errorf("export: read %s: %w", name, err))
			return
		}
		if _, err := io.Copy(io.Discard, tee); err != nil {
			yield(contract.SourceItem{}, fmt.Errorf("export: read %s: %w", name, err))
			return
		}
		if got := hex.EncodeToString(sha.Sum(nil)); got != want.SHA256 || n != want.Items {
			yield(contract.SourceItem{}, fmt.Errorf("export: %s does not match the manifest: %d lines, sha256 %.12s…; the manifest says %d lines, sha256 %.12s…", name, n, got, want.Items, want.SHA256))
		}
	}
}

// compressionOf maps ImportTable's compression name back to ours.
func compressionOf(importName string) string {
	for k, v := range importCompression {
		if v == importName {
			return k
		}
	}
	return importName
}
