package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// run is one run of the built binary.
type run struct {
	bin  string // the built binary when empty
	args []string
	env  []string
	dir  string
	cred *syscall.Credential
}

// exec runs the binary with stdin closed and returns its output and exit
// status.
func (r run) exec(t *testing.T) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bin := r.bin
	if bin == "" {
		bin = binary
	}
	cmd := exec.CommandContext(ctx, bin, r.args...)
	cmd.Env, cmd.Dir = r.env, r.dir
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%v: %v", r.args, err)
	}
	return out.String(), errb.String(), code
}

// socketTestDir is a fresh directory with a short path (socket paths in it
// must fit a socket address).
func socketTestDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "skt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// sums checksums every entry under root (content of files, mode of the
// rest), to prove that nothing changed.
func sums(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %s", p, fi.Mode())
		if fi.Mode().IsRegular() {
			c, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(c))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// killSockets ends any tmux server an unfixed binary started on the given
// paths, as the given user.
func killSockets(bin string, cred *syscall.Credential, env []string, paths ...string) {
	for _, p := range paths {
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&fs.ModeSocket == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := exec.CommandContext(ctx, bin, "-S", p, "kill-server")
		cmd.Env = env
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		_ = cmd.Run()
		cancel()
	}
}

// TestRelativeSocketPathIsRefused: a relative socket_path would resolve
// against the server's working directory; the built binary, started in a
// directory holding a canary, refuses it and leaves the canary as it was.
func TestRelativeSocketPathIsRefused(t *testing.T) {
	bin := tmuxtest.Bin(t)
	dir := socketTestDir(t)
	if err := os.WriteFile(filepath.Join(dir, "canary"), []byte("canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(tmuxtest.CleanEnv(), "TMUX_TMPDIR="+dir, "TMUX_MCP_TMUX_BIN="+bin)
	t.Cleanup(func() { killSockets(bin, nil, env, filepath.Join(dir, "canary")) })
	before := sums(t, dir)
	for _, p := range []string{"canary", "./canary", "sub/../canary"} {
		out, _, code := run{args: []string{"call", "create_session", fmt.Sprintf(`{"socket_path": %q}`, p)}, env: env, dir: dir}.exec(t)
		killSockets(bin, nil, env, filepath.Join(dir, "canary"))
		if code != 1 || !strings.Contains(out, `"error_type": "ValidationError"`) || !strings.Contains(out, "socket_path: must be an absolute path") {
			t.Errorf("socket_path %q: exit %d\n%s", p, code, out)
		}
	}
	if after := sums(t, dir); after != before {
		t.Errorf("files changed:\nbefore:\n%safter:\n%s", before, after)
	}
}

// TestStartupRefusesBadSocketSetting: a configured socket that tmux must
// not be given stops start-up (exit 2) with a message naming the variable
// or flag and the rule, and touches nothing.
func TestStartupRefusesBadSocketSetting(t *testing.T) {
	bin := tmuxtest.Bin(t)
	dir := socketTestDir(t)
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, []byte("canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := append(tmuxtest.CleanEnv(), "TMUX_TMPDIR="+dir, "TMUX_MCP_TMUX_BIN="+bin)
	for _, k := range []string{"TMUX_MCP_SOCKET", "TMUX_MCP_SOCKET_PATH", "LIBTMUX_SOCKET", "LIBTMUX_SOCKET_PATH"} {
		base = append(base, k+"=") // an empty value is unset for the loader
	}
	t.Cleanup(func() { killSockets(bin, nil, base, canary) })
	before := sums(t, dir)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"env path at a file", []string{"TMUX_MCP_SOCKET_PATH=" + canary}, nil, "TMUX_MCP_SOCKET_PATH: a regular file exists there"},
		{"env path relative", []string{"TMUX_MCP_SOCKET_PATH=canary"}, nil, "TMUX_MCP_SOCKET_PATH: must be an absolute path"},
		{"reference env path at a file", []string{"LIBTMUX_SOCKET_PATH=" + canary}, nil, "LIBTMUX_SOCKET_PATH: a regular file exists there"},
		{"env path, call subcommand", []string{"TMUX_MCP_SOCKET_PATH=" + canary}, []string{"call", "create_session"}, "TMUX_MCP_SOCKET_PATH: a regular file exists there"},
		{"flag path relative", nil, []string{"--socket-path", "canary"}, "--socket-path: must be an absolute path"},
		{"flag path at a file", nil, []string{"--socket-path=" + canary}, "--socket-path: a regular file exists there"},
		{"env name traversal", []string{"TMUX_MCP_SOCKET=../canary"}, nil, "TMUX_MCP_SOCKET: must be a plain name"},
		{"flag name dot-dot", nil, []string{"--socket", ".."}, "--socket: must not be '.' or '..'"},
	} {
		out, errOut, code := run{args: tc.args, env: append(append([]string{}, base...), tc.env...), dir: dir}.exec(t)
		killSockets(bin, nil, base, canary)
		if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.name, code, out, errOut, tc.want)
		}
	}
	if after := sums(t, dir); after != before {
		t.Errorf("files changed:\nbefore:\n%safter:\n%s", before, after)
	}
}

// TestSocketDirectoryRuleAsAnotherUser runs the binary as an unprivileged
// user (tests run as root, for whom every directory is writable): a socket
// is created only in a directory of that user's own or a sticky one like
// /tmp, never in root's directory or one that others can write.
func TestSocketDirectoryRuleAsAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the binary as another user (uid 65534)")
	}
	const uid, gid = 65534, 65534
	cred := &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}
	bin := tmuxtest.Bin(t)
	// Under /tmp, not $TMPDIR, whose parents the other user may not be
	// able to enter; the binary is copied there for the same reason.
	base, err := os.MkdirTemp("/tmp", "skt")
	if err != nil {
		t.Skipf("no directory under /tmp: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(base, "tmux-mcp")
	if err := os.WriteFile(self, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	mkdir := func(name string, mode os.FileMode, owner int) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, owner, owner); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	home := mkdir("home", 0o700, uid)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMUX_TMPDIR=" + home, "SHELL=/bin/sh",
		"TMUX_MCP_TMUX_BIN=" + bin, "TMUX_MCP_ENGINE=exec"}
	for _, tc := range []struct {
		dir  string
		mode os.FileMode
		own  int
		want string // "" when the session must be created
	}{
		{"root", 0o755, 0, "owned by another user"},
		{"rootopen", 0o777, 0, "owned by another user"},
		{"theiropen", 0o777, uid, "writable by group or others"},
		{"theirgroup", 0o770, uid, "writable by group or others"},
		{"rootsticky", 0o777 | os.ModeSticky, 0, ""},
		{"theirs", 0o700, uid, ""},
	} {
		d := mkdir(tc.dir, tc.mode, tc.own)
		sock := filepath.Join(d, "s")
		t.Cleanup(func() { killSockets(bin, cred, env, sock) })
		out, errOut, code := run{bin: self, args: []string{"call", "create_session", fmt.Sprintf(`{"socket_path": %q, "session_name": "t"}`, sock)}, env: env, dir: home, cred: cred}.exec(t)
		created := false
		if fi, err := os.Lstat(sock); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			created = true
		}
		killSockets(bin, cred, env, sock)
		if tc.want == "" {
			if code != 0 || !created {
				t.Errorf("%s (%v, uid %d): exit %d, socket created %v\n%s%s", tc.dir, tc.mode, tc.own, code, created, out, errOut)
			}
			continue
		}
		if code != 1 || !strings.Contains(out, `"error_type": "ValidationError"`) || !strings.Contains(out, "socket_path: its directory is "+tc.want) && !strings.Contains(out, "socket_path: its directory "+tc.want) {
			t.Errorf("%s (%v, uid %d): exit %d, want a ValidationError %q\n%s%s", tc.dir, tc.mode, tc.own, code, tc.want, out, errOut)
		}
		if entries, _ := os.ReadDir(d); len(entries) != 0 {
			t.Errorf("%s: refused, yet %d entries appeared", tc.dir, len(entries))
		}
	}
}
