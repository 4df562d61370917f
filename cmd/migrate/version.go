package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() { register(newVersionCmd) }

// buildTime is the time the binary was built, set by release builds with
// -ldflags "-X main.buildTime=2025-01-02T03:04:05Z" (see Makefile and
// .goreleaser.yaml). Go's build info records the commit's time, not the
// build's; a plain `go install` leaves this empty.
var buildTime string

// revision is the commit, set by `make build` and `make docker` with
// -ldflags "-X main.revision=…": Go's own VCS stamp is missing where the
// toolchain could not ask git. Go's stamp wins when both are there.
var revision string

// versionInfo is what `migrate version` prints, read from the build info
// the Go toolchain embeds in every binary.
type versionInfo struct {
	Version   string // module version: v1.2.3 from `go install …@v1.2.3`, "(devel)" from a checkout
	Revision  string // VCS revision, "" when built without VCS information
	Modified  bool   // the working tree had uncommitted changes
	Commit    string // the revision's commit time (RFC 3339), "" when unknown
	Built     string // build time, from buildTime
	GoVersion string
	Platform  string
}

func readVersion(bi *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Built: buildTime}
	if !ok || bi == nil {
		v.Revision, v.Modified = strings.CutSuffix(revision, "-dirty")
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Commit = s.Value
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos != "" && goarch != "" {
		v.Platform = goos + "/" + goarch
	}
	if v.Revision == "" && revision != "" {
		v.Revision, v.Modified = strings.CutSuffix(revision, "-dirty")
	}
	return v
}

// short is the one line of `migrate --version`.
func (v versionInfo) short() string {
	parts := []string{v.Version}
	// A pseudo-version (v0.0.0-20250102030405-abcdef123456) already names
	// the revision.
	if rev := v.Revision[:min(12, len(v.Revision))]; rev != "" && !strings.Contains(v.Version, rev) {
		if v.Modified {
			rev += "-dirty"
		}
		parts = append(parts, rev)
	}
	if v.Built != "" {
		parts = append(parts, "built "+v.Built)
	} else if v.Commit != "" {
		parts = append(parts, "committed "+v.Commit)
	}
	return "migrate " + strings.Join(parts, " ")
}

// long is the output of `migrate version`: one fact a line.
func (v versionInfo) long() string {
	var b strings.Builder
	row := func(k, val string) { fmt.Fprintf(&b, "%-9s %s\n", k, val) }
	row("version", v.Version)
	rev := v.Revision
	switch {
	case rev == "":
		rev = "unknown (built without VCS information, e.g. -buildvcs=false)"
	case v.Modified:
		rev += " (with uncommitted changes)"
	}
	row("revision", rev)
	row("commit", or(v.Commit, "unknown"))
	row("built", or(v.Built, "unknown (set by release builds)"))
	row("go", v.GoVersion)
	row("platform", v.Platform)
	return b.String()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func currentVersion() versionInfo { return readVersion(debug.ReadBuildInfo()) }

// setVersion gives the root command its --version flag.
func setVersion(root *cobra.Command) {
	root.Version = currentVersion().short()
	root.SetVersionTemplate("{{.Version}}\n")
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and build time of this binary",
		Long: `version prints what the Go toolchain recorded in this binary: the module
version (v1.2.3 when installed with "go install …@v1.2.3", "(devel)" when
built from a checkout), the VCS revision and its commit time, the build
time of release builds, the Go version and the platform. "migrate --version"
prints the same on one line.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(g.stdout, currentVersion().long())
			return err
		},
	}
}
