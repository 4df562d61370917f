package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgdynamo/migrate/extract"
	"github.com/pgdynamo/migrate/mapping"
)

// loadMapping reads and parses a mapping file; syntax problems are a usage
// error (exit 2) carrying every diagnostic.
func loadMapping(path string) (*mapping.Mapping, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("read mapping: %w", err)
	}
	return parseMapping(path, data)
}

// parseMapping parses mapping bytes already read, so that a caller that
// also hashes them runs exactly what it hashed.
func parseMapping(path string, data []byte) (*mapping.Mapping, error) {
	m, err := mapping.Parse(path, data)
	if err != nil {
		var ds mapping.Diagnostics
		if errors.As(err, &ds) {
			return nil, usageError{ds}
		}
		return nil, usageError{err}
	}
	return m, nil
}

// schemasOf lists the source schemas a mapping reads.
func schemasOf(m *mapping.Mapping) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range m.Entities {
		if !seen[e.Schema] {
			seen[e.Schema] = true
			out = append(out, e.Schema)
		}
	}
	return out
}

// checkAgainst reads the catalog through the snapshot and validates the
// mapping against it.
func checkAgainst(ctx context.Context, snap *extract.Snapshot, m *mapping.Mapping) (*mapping.Catalog, error) {
	cat, err := snap.Catalog(ctx, schemasOf(m))
	if err != nil {
		return nil, err
	}
	if ds := mapping.Check(m, cat); ds != nil {
		return nil, usageError{ds}
	}
	return cat, nil
}

// pgURL returns the flag value or the environment's.
func pgURL(flag string) string {
	for _, v := range []string{flag, os.Getenv("MIGRATE_PG_URL"), os.Getenv("DATABASE_URL")} {
		if v != "" {
			return v
		}
	}
	return ""
}

// openSnapshot connects and starts the read-only snapshot transaction.
func openSnapshot(ctx context.Context, url string) (*pgx.Conn, *extract.Snapshot, error) {
	conn, err := extract.Connect(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	snap, err := extract.Begin(ctx, conn)
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, nil, err
	}
	return conn, snap, nil
}

func closeSnapshot(ctx context.Context, conn *pgx.Conn, snap *extract.Snapshot) {
	ctx = context.WithoutCancel(ctx)
	_ = snap.Close(ctx)
	_ = conn.Close(ctx)
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}
