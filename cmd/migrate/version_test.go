package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Both spellings print what this test binary's build info says.
func TestVersionCommands(t *testing.T) {
	t.Parallel()
	v := currentVersion()
	out, errOut, code := runCLI(t, "--version")
	if code != exitOK || out != v.Short("migrate")+"\n" {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, v.Short("migrate"))
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
