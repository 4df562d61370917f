package buildinfo

import (
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
			v := Read(tc.bi, tc.ok, "", "")
			if got := v.Short("migrate"); got != tc.short {
				t.Errorf("Short() = %q, want %q", got, tc.short)
			}
			long := v.Long()
			for _, want := range tc.longLines {
				if !strings.Contains(long, want+"\n") {
					t.Errorf("Long() lacks line %q:\n%s", want, long)
				}
			}
		})
	}
}

// Ref is the tag of a release, main for anything else.
func TestRef(t *testing.T) {
	t.Parallel()
	for version, ref := range map[string]string{
		"v1.2.3": "v1.2.3", "v1.2.3-rc.1": "v1.2.3-rc.1", "(devel)": "main", "(unknown)": "main",
		"v0.0.0-20250102030405-0123456789ab":       "main",
		"v1.2.4-0.20250102030405-0123456789ab":     "main",
		"v0.0.0-20250102030405-0123456789ab+dirty": "main",
	} {
		if got := (Info{Version: version}).Ref(); got != ref {
			t.Errorf("version %s: ref %s, want %s", version, got, ref)
		}
	}
}

// A revision set with -ldflags stands in for a missing VCS stamp.
func TestReadLdflagsRevision(t *testing.T) {
	t.Parallel()
	v := Read(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "0123456789abcdef-dirty", "2025-01-02T03:04:05Z")
	if v.Revision != "0123456789abcdef" || !v.Modified || v.Built != "2025-01-02T03:04:05Z" {
		t.Errorf("Read = %+v", v)
	}
	if got, want := v.Short("migrate"), "migrate (devel) 0123456789ab-dirty built 2025-01-02T03:04:05Z"; got != want {
		t.Errorf("Short = %q, want %q", got, want)
	}
}
