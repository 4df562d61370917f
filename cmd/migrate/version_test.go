package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	t.Parallel()
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	cases := []struct {
		name      string
		bi        *debug.BuildInfo
		ok        bool
		short     string
		longLines []string
	}{
		{
			name:      "no build info",
			short:     "migrate (unknown)",
			longLines: []string{"version   (unknown)", "revision  unknown (built without VCS information, e.g. -buildvcs=false)", "commit    unknown"},
		},
		{
			name:      "go install of a tag",
			bi:        &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}, Settings: settings("GOOS", "darwin", "GOARCH", "arm64")},
			ok:        true,
			short:     "migrate v1.4.0",
			longLines: []string{"version   v1.4.0", "go        go1.26.8", "platform  darwin/arm64"},
		},
		{
			name: "checkout with changes",
			bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: settings(
				"vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "true")},
			ok:    true,
			short: "migrate (devel) 0123456789ab-dirty committed 2025-01-02T03:04:05Z",
			longLines: []string{
				"revision  0123456789abcdef0123456789abcdef01234567 (with uncommitted changes)",
				"commit    2025-01-02T03:04:05Z",
			},
		},
		{
			name: "pseudo-version names the revision once",
			bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20250102030405-0123456789ab"}, Settings: settings(
				"vcs.revision", "0123456789abcdef0123456789abcdef01234567", "vcs.time", "2025-01-02T03:04:05Z", "vcs.modified", "false")},
			ok:        true,
			short:     "migrate v0.0.0-20250102030405-0123456789ab committed 2025-01-02T03:04:05Z",
			longLines: []string{"revision  0123456789abcdef0123456789abcdef01234567"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := readVersion(tc.bi, tc.ok)
			if got := v.short(); got != tc.short {
				t.Errorf("short() = %q, want %q", got, tc.short)
			}
			long := v.long()
			for _, want := range tc.longLines {
				if !strings.Contains(long, want+"\n") {
					t.Errorf("long() lacks line %q:\n%s", want, long)
				}
			}
		})
	}
}

// Both spellings print what this test binary's build info says.
func TestVersionCommands(t *testing.T) {
	t.Parallel()
	v := currentVersion()
	out, errOut, code := runCLI(t, "--version")
	if code != exitOK || out != v.short()+"\n" {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, v.short())
	}
	out, errOut, code = runCLI(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "version   "+v.Version+"\n") || !strings.Contains(out, "platform  "+runtime.GOOS+"/"+runtime.GOARCH+"\n") {
		t.Errorf("version: exit %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}
}

// A built binary reports what the toolchain recorded in it, as `go version
// -m` reads it, and the build time a release build passes with -ldflags.
func TestVersionOfBuiltBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "migrate")
	const built = "2025-01-02T03:04:05Z"
	build := exec.CommandContext(t.Context(), "go", "build", "-buildvcs=auto", "-ldflags", "-X main.buildTime="+built, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta, err := exec.CommandContext(t.Context(), "go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]string{}
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			recorded["version"] = f[2]
		case len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs."):
			k, v, _ := strings.Cut(f[1], "=")
			recorded[k] = v
		}
	}
	out, err := exec.CommandContext(t.Context(), bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"version   " + recorded["version"], "built     " + built}
	if rev := recorded["vcs.revision"]; rev != "" {
		want = append(want, "revision  "+rev, "commit    "+recorded["vcs.time"])
	} else {
		// A git worktree (not a clone) gets no VCS stamp from this Go.
		t.Logf("the toolchain recorded no VCS information here")
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("migrate version lacks %q:\n%s\n(go version -m:\n%s)", w, out, meta)
		}
	}
	short, err := exec.CommandContext(t.Context(), bin, "--version").Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(short)), "built "+built) {
		t.Errorf("migrate --version = %q, %v", short, err)
	}
}
