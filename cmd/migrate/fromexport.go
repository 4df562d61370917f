package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pgdynamo/migrate/contract"
	"github.com/pgdynamo/migrate/engine"
)

// fromExportOpts are run's flags for loading an export (run --from-export)
// instead of reading the database.
type fromExportOpts struct {
	fromExport string
	files      string // k/N
	s3         engine.ExportS3
}

func (o *fromExportOpts) register(f *pflag.FlagSet) {
	f.StringVar(&o.fromExport, "from-export", "", "load this export (a directory or s3://bucket/prefix, see migrate export) instead of reading --pg")
	f.StringVar(&o.files, "files", "", "with --from-export: load only share k of N of its files (k/N; give each of N machines its own k)")
	registerS3(f, &o.s3)
}

func (o *fromExportOpts) validate() error {
	if o.files != "" {
		if o.fromExport == "" {
			return usagef("run: --files applies only with --from-export")
		}
		if _, _, err := o.share(); err != nil {
			return err
		}
	}
	return nil
}

// share parses --files k/N (default 1/1).
func (o *fromExportOpts) share() (k, n int, err error) {
	if o.files == "" {
		return 1, 1, nil
	}
	ks, ns, ok := strings.Cut(o.files, "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	if !ok || kerr != nil || nerr != nil || n < 1 || k < 1 || k > n {
		return 0, 0, usagef("run: --files wants k/N with 1 <= k <= N, such as 2/8, not %q", o.files)
	}
	return k, n, nil
}

// defaultState is the state file of a load of an export, apart from a
// run's: one per share.
func (o *fromExportOpts) defaultState(table string) string {
	name := table + ".state.json"
	if o.fromExport != "" {
		k, n, _ := o.share()
		name = fmt.Sprintf("%s.from-export.%dof%d.state.json", table, k, n)
	}
	return filepath.Join(engine.DefaultStateDir, name)
}

// source opens the export and takes the share, or returns nil without
// --from-export.
func (o *fromExportOpts) source(ctx context.Context, g *globals, region string) (contract.Source, error) {
	if o.fromExport == "" {
		return nil, nil
	}
	k, n, _ := o.share()
	s3 := o.s3
	s3.Region = region
	return engine.OpenExport(ctx, engine.OpenExportConfig{From: o.fromExport, S3: s3, Share: k, Shares: n, Logger: g.logger})
}
