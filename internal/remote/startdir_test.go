package remote_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// dirCase is one path CheckRemoteDir is asked about and whether it is a
// directory on the host.
type dirCase struct {
	name string
	path string
	dir  bool
}

// startDirCases builds, under base, the paths a remote start_directory
// check must answer right: directories, files, symlinks, names with
// trailing newlines (which "$(cat)" would strip), and hostile names that
// would run `touch marker` if any shell ever parsed them; each hostile
// name exists as a directory, and the same name with "-no" appended does
// not. The remote side is this machine (loopback ssh), so base is the
// host's too.
func startDirCases(t *testing.T, base, marker string) []dirCase {
	t.Helper()
	mk := func(p string) string {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	d := mk(filepath.Join(base, "d"))
	file := filepath.Join(base, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"ld": d, "lf": file, "dangling": filepath.Join(base, "none")} {
		if err := os.Symlink(to, filepath.Join(base, link)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []dirCase{
		{"dir", d, true},
		{"dir slash", d + "/", true},
		{"root", "/", true},
		{"missing", filepath.Join(base, "nope"), false},
		{"missing parent", filepath.Join(base, "nope", "d"), false},
		{"file", file, false},
		{"under a file", filepath.Join(file, "d"), false},
		{"symlink to dir", filepath.Join(base, "ld"), true},
		{"symlink to file", filepath.Join(base, "lf"), false},
		{"dangling symlink", filepath.Join(base, "dangling"), false},
		{"trailing newline", mk(filepath.Join(base, "nl\n")), true},
		// "d" exists, "d\n" does not: a check that lost the newline
		// would say yes.
		{"trailing newline stripped", d + "\n", false},
		{"trailing newlines stripped", d + "\n\n", false},
		{"glob", filepath.Join(base, "[d]"), false},
		{"glob star", filepath.Join(base, "*"), false},
		{"long", filepath.Join(base, strings.Repeat("a", 100000)), false},
		{"non-UTF-8", mk(filepath.Join(base, "\xff\xfe")), true},
		{"NUL", d + "\x00x", false},
	}
	for name, h := range map[string]string{
		"command substitution": "$(touch " + marker + ")",
		"backticks":            "`touch " + marker + "`",
		"single quotes":        "'; touch " + marker + "; '",
		"double quotes":        `"; touch ` + marker + `; "`,
		"test escape":          `x" ] || touch ` + marker + ` || [ "`,
		"exit":                 "x; exit 0",
		"newline command":      "a\ntouch " + marker + "\nb",
		"csh history":          "!! !-1 ~root",
		"fish":                 "(touch " + marker + ") {a,b}",
		"variables":            "$HOME ${d} $d",
		"backslash":            `a\b\`,
		"dash":                 "-d",
		"tmux syntax":          `#(touch ` + marker + `) ; run-shell "touch ` + marker + `"`,
	} {
		p := filepath.Join(base, "h", h)
		cases = append(cases, dirCase{name, mk(p), true}, dirCase{name + " missing", p + "-no", false})
	}
	return cases
}

// TestRemoteCheckDir: CheckRemoteDir answers each path right on a real
// host (loopback sshd, the host's multiplexed connection, with a control
// connection up and a dotfile that prints), and nothing in a hostile path
// runs: the marker file the payloads would create never appears.
func TestRemoteCheckDir(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	r.sshd.SetRC("echo 'Welcome to box'; echo noise >&2\n")
	if _, err := paneRows(r); err != nil { // the control connection is up
		t.Fatal(err)
	}
	base := t.TempDir()
	marker := filepath.Join(t.TempDir(), "PWNED")
	for _, c := range startDirCases(t, base, marker) {
		err := r.runner.CheckRemoteDir(ctx(t), c.path)
		switch {
		case c.dir && err != nil:
			t.Errorf("%s: %v, want a directory", c.name, err)
		case !c.dir && !errors.Is(err, tmux.ErrNotRemoteDir):
			t.Errorf("%s: %v, want ErrNotRemoteDir", c.name, err)
		case !c.dir && !strings.Contains(err.Error(), "on host box"):
			t.Errorf("%s: %v does not name the host", c.name, err)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a hostile path ran on the host: %s exists (%v)", marker, err)
	}
	if _, ok := r.runner.Identity(r.sock); !ok {
		t.Fatal("the control connection did not survive the checks")
	}
}

// TestRemoteCheckDirFailures: a host that cannot answer is never taken
// for a missing directory: ssh's failure, a login shell that exits before
// the check, and one that hangs (bounded by the start bound) each give
// ErrHostUnreachable naming the host.
func TestRemoteCheckDirFailures(t *testing.T) {
	r := newRig(t, remote.Spec{}, func(o *remote.Options) { o.StartTimeout = 2 * time.Second })
	s := r.sshd
	dir := t.TempDir()
	good, _ := os.ReadFile(s.Config)
	for _, tc := range []struct {
		name   string
		break_ func()
		want   string
	}{
		{"refused key", func() { s.WriteHostConfig(sshtest.Alias, s.Port, s.OtherKey) }, "Permission denied"},
		{"shell exits", func() { s.SetRC("exit 3\n") }, "exited with status 3"},
		{"shell hangs", func() { s.SetRC("sleep 30\n") }, "within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.host.Disconnect() // the next call makes a new connection
			tc.break_()
			start := time.Now()
			err := r.runner.CheckRemoteDir(ctx(t), dir)
			if !errors.Is(err, tmux.ErrHostUnreachable) || errors.Is(err, tmux.ErrNotRemoteDir) ||
				!strings.Contains(err.Error(), "host box") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a host error saying %q", err, tc.want)
			}
			if d := time.Since(start); d > 6*time.Second {
				t.Fatalf("took %v", d)
			}
			_ = os.WriteFile(s.Config, good, 0o600)
			s.SetRC("")
			if err := r.runner.CheckRemoteDir(ctx(t), dir); err != nil {
				t.Fatalf("after the fix: %v", err)
			}
		})
	}
	c, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.runner.CheckRemoteDir(c, dir); err == nil || errors.Is(err, tmux.ErrNotRemoteDir) {
		t.Fatalf("a cancelled check: %v", err)
	}
}

// TestRemoteSocketCheckFailures: the check that keeps a new server from
// clobbering a file at a remote socket path (run before new-session on a
// socket path) answers within the start bound and names the host when the
// host cannot answer, as the directory check does: a login shell that
// exits before the check, and one that hangs. Neither is taken for a
// refusal of the path, and a refusal still names what is there.
func TestRemoteSocketCheckFailures(t *testing.T) {
	r := newRig(t, remote.Spec{}, func(o *remote.Options) { o.StartTimeout = 2 * time.Second })
	s := r.sshd
	dir := t.TempDir()
	fresh := tmux.Socket{Path: filepath.Join(dir, "fresh")}
	start := func() error {
		_, err := r.client.Runner.Run(ctx(t), fresh, tmux.Command{"new-session", "-d", "-s", "x"})
		return err
	}
	for _, tc := range []struct {
		name string
		rc   string
		want string
	}{
		{"shell exits", "exit 3\n", "exited with status 3"},
		{"shell hangs", "sleep 30\n", "did not check the socket path within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.host.Disconnect()
			s.SetRC(tc.rc)
			defer s.SetRC("")
			t0 := time.Now()
			err := start()
			if !errors.Is(err, tmux.ErrHostUnreachable) || errors.Is(err, tmux.ErrUnsafeSocket) ||
				!strings.Contains(err.Error(), "host box") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a host error saying %q", err, tc.want)
			}
			if d := time.Since(t0); d > 6*time.Second {
				t.Fatalf("took %v", d)
			}
			if _, err := os.Lstat(fresh.Path); err == nil {
				t.Fatalf("a server was started at %s after the check failed", fresh.Path)
			}
		})
	}
	// A regular file at the path is refused, with what is there, and kept.
	if err := os.WriteFile(fresh.Path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := start()
	if !errors.Is(err, tmux.ErrUnsafeSocket) || !strings.Contains(err.Error(), "not a socket") || !strings.Contains(err.Error(), "host box") {
		t.Fatalf("a file at the path: %v, want a refusal naming it", err)
	}
	if b, _ := os.ReadFile(fresh.Path); string(b) != "keep me" {
		t.Fatalf("the file at the path was changed: %q", b)
	}
}
