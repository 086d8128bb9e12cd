package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribeVersion(t *testing.T) {
	vcs := func(main string, kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/tmux-mcp/tmux-mcp", Version: main}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	cases := []struct {
		name                  string
		stamped, commit, date string
		bi                    *debug.BuildInfo
		want, wantDetail      string
	}{
		{"release build: ldflags win", "v1.2.3", "abc123", "2026-12-01T00:00:00Z", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
			"v1.2.3", "commit abc123, built 2026-12-01T00:00:00Z, go1.26.0"},
		{"go install @version", "", "", "", vcs("v1.2.3"), "v1.2.3", "go1.26.0"},
		{"go build in a clean checkout", "", "", "", vcs("(devel)", "vcs.revision", rev, "vcs.time", "2026-11-30T10:00:00Z", "vcs.modified", "false"),
			"dev-0123456789ab", "commit " + rev + ", built 2026-11-30T10:00:00Z, go1.26.0"},
		{"go build with local changes", "", "", "", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "true"),
			"dev-0123456789ab+dirty", "commit " + rev + "+dirty, go1.26.0"},
		{"pseudo-version from VCS", "", "", "", vcs("v0.0.0-20261130100000-0123456789ab+dirty", "vcs.revision", rev, "vcs.modified", "true"),
			"v0.0.0-20261130100000-0123456789ab+dirty", "commit " + rev + "+dirty, go1.26.0"},
		{"no VCS information", "", "", "", vcs("(devel)"), "dev", "go1.26.0"},
		{"no build info", "", "", "", nil, "dev", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, detail := describe(c.stamped, c.commit, c.date, c.bi)
			if v != c.want || detail != c.wantDetail {
				t.Errorf("describe = %q, %q; want %q, %q", v, detail, c.want, c.wantDetail)
			}
		})
	}
}

// The stamped version reaches --version and is what Version returns.
func TestVersionFlagPrintsStampedVersion(t *testing.T) {
	old := [3]string{version, commit, date}
	version, commit, date = "v9.8.7", "feedface", "2026-12-01T03:00:00Z"
	t.Cleanup(func() { version, commit, date = old[0], old[1], old[2] })
	code, out, errOut := run(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "tmux-mcp v9.8.7 (commit feedface, built 2026-12-01T03:00:00Z") || errOut != "" {
		t.Errorf("--version: %d %q %q", code, out, errOut)
	}
	if Version() != "v9.8.7" {
		t.Errorf("Version() = %q", Version())
	}
}

// Main runs side by side in one process (the tests do): the server version
// is set once, so two runs never race on it (go test -race fails here
// when each run writes it).
func TestMainSideBySide(t *testing.T) {
	done := make(chan int, 2)
	for i := 0; i < 2; i++ {
		go func() {
			code, _, _ := run(t, nil, "tools", "--stats")
			done <- code
		}()
	}
	for i := 0; i < 2; i++ {
		if code := <-done; code != 0 {
			t.Fatalf("exit %d", code)
		}
	}
}
