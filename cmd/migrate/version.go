package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pgdynamo/migrate/internal/buildinfo"
)

func init() { register(newVersionCmd) }

// buildTime is the time the binary was built, set by release builds with
// -ldflags "-X main.buildTime=2025-01-02T03:04:05Z" (see Makefile and
// .goreleaser.yaml). A plain `go install` leaves it empty.
var buildTime string

// revision is the commit, set by `make build` and `make docker` with
// -ldflags "-X main.revision=…", for toolchains that could not ask git.
var revision string

func currentVersion() buildinfo.Info { return buildinfo.Current(revision, buildTime) }

// setVersion gives the root command its --version flag.
func setVersion(root *cobra.Command) {
	root.Version = currentVersion().Short("migrate")
	root.SetVersionTemplate("{{.Version}}\n")
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and build time of this binary",
		Long:  longHelp("version"),
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(g.stdout, currentVersion().Long())
			return err
		},
	}
}
