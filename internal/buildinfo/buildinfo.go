// Package buildinfo says what a binary knows of its own build: the module
// version, VCS revision and commit time the Go toolchain records, and the
// revision and build time release builds set with -ldflags.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `migrate version` prints.
type Info struct {
	Version   string // module version: v1.2.3 from `go install …@v1.2.3`, "(devel)" from a checkout
	Revision  string // VCS revision, "" when built without VCS information
	Modified  bool   // the working tree had uncommitted changes
	Commit    string // the revision's commit time (RFC 3339), "" when unknown
	Built     string // build time, as the release build set it
	GoVersion string
	Platform  string
}

// Current reads this binary's build info. revision and built are what the
// build set with -ldflags ("" when it did not): Go's own VCS stamp is
// missing where the toolchain could not ask git, and it records the
// commit's time, not the build's. Go's stamp wins when both are there.
func Current(revision, built string) Info {
	bi, ok := debug.ReadBuildInfo()
	return Read(bi, ok, revision, built)
}

// Read is Current for given build info (ok false: none).
func Read(bi *debug.BuildInfo, ok bool, revision, built string) Info {
	v := Info{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Built: built}
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

// Short is one line: the program's name, the version, the revision unless
// the version names it, and the build (or else commit) time.
func (v Info) Short(program string) string {
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
	return program + " " + strings.Join(parts, " ")
}

// Long is one fact a line, saying what is unknown and why.
func (v Info) Long() string {
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

// Ref is the git ref the binary's sources are published at: the tag of a
// release (v1.2.3, v1.2.3-rc.1), else main (a pseudo-version or a
// development build).
func (v Info) Ref() string {
	if !strings.HasPrefix(v.Version, "v") || strings.Contains(v.Version, "+") {
		return "main"
	}
	// Pseudo-versions end in -yyyymmddhhmmss-abcdefabcdef.
	parts := strings.Split(v.Version, "-")
	if len(parts) >= 3 && len(parts[len(parts)-1]) == 12 {
		return "main"
	}
	return v.Version
}
