// Package tmuxtest starts isolated tmux servers for tests. Each server gets
// its own socket name and an empty configuration, and is killed when the test
// ends, so tests never touch the default socket or a user's server.
package tmuxtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Server is an isolated tmux server owned by one test.
type Server struct {
	t      testing.TB
	Bin    string
	Socket tmux.Socket

	watched atomic.Bool // the running server has its endWithThisProcess job
}

// Bin returns the tmux binary tests use: $TMUX_MCP_TEST_TMUX or "tmux" on
// PATH. It fails the test when tmux is missing; CI installs it.
func Bin(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("TMUX_MCP_TEST_TMUX")
	if bin == "" {
		bin = "tmux"
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		t.Fatalf("tmux is required for this test: %v", err)
	}
	return p
}

// New starts an isolated server with one detached session named "main"
// (80x24) and registers its shutdown with t.Cleanup.
func New(t testing.TB) *Server {
	t.Helper()
	return NewWith(t, "main")
}

// NewWith starts an isolated server with the given sessions (none when no
// names are given: the server is then not running at all).
func NewWith(t testing.TB, sessions ...string) *Server {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Server{t: t, Bin: Bin(t), Socket: tmux.Socket{Name: "tmuxmcp-test-" + hex.EncodeToString(b[:])}}
	t.Cleanup(s.Kill)
	for _, name := range sessions {
		s.MustRun("new-session", "-d", "-s", name, "-x", "80", "-y", "24")
	}
	return s
}

// endWithThisProcess makes the server end itself once this process is
// gone, when t.Cleanup never ran: Go's fuzz coordinator kills a worker
// that is still busy at the -fuzztime boundary, and a test binary can be
// killed on a timeout; their tmux servers would otherwise run on for good.
// A background job of the server's own checks every two seconds that this
// process is alive (kill -0, a shell builtin) and then sends SIGTERM to
// its parent, the server, which exits cleanly on it (whichever tmux binary
// the test uses, at whatever socket). tmux ends its jobs when it exits, so
// the job never outlives the server by more than its current sleep: a
// "tail --pid" waiter, which would need no process every two seconds,
// outlived it instead, one per server, until the test binary ended. The
// job's command holds nothing but this process's id.
func (s *Server) endWithThisProcess() {
	if !s.watched.CompareAndSwap(false, true) {
		return
	}
	job := fmt.Sprintf("while kill -0 %d 2>/dev/null; do sleep 2; done; kill -TERM $PPID", os.Getpid())
	// Run, not MustRun: a test may start its server from any goroutine,
	// and a server that is gone already needs no job.
	_, _ = s.Run("run-shell", "-b", job)
}

// SocketPath is the filesystem path of the server's socket.
func (s *Server) SocketPath() string {
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Geteuid()), s.Socket.Name)
}

// Run runs one tmux command on this server and returns its trimmed output.
func (s *Server) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	argv := append([]string{"-u", "-f", "/dev/null", "-L", s.Socket.Name}, args...)
	cmd := exec.CommandContext(ctx, s.Bin, argv...)
	cmd.Env = CleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return strings.TrimSpace(string(out)), fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	switch {
	case len(args) == 0:
	case args[0] == "new-session" || args[0] == "new":
		// The server may have started just now (NewWith, or a test that
		// starts it itself): from here on it ends with this process.
		s.endWithThisProcess()
	case args[0] == "kill-server":
		s.watched.Store(false) // a server started later needs its own job
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// MustRun is Run that fails the test on error.
func (s *Server) MustRun(args ...string) string {
	s.t.Helper()
	out, err := s.Run(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// Kill ends the server (if it runs) and removes its socket.
func (s *Server) Kill() {
	_, _ = s.Run("kill-server")
	_ = os.Remove(s.SocketPath())
}

// CleanEnv is the environment with TMUX and TMUX_PANE removed, so a test
// started from inside tmux cannot reach the developer's server by accident,
// and SHELL set to Shell().
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") || strings.HasPrefix(kv, "SHELL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "SHELL="+Shell())
}

var (
	shellOnce sync.Once
	shellPath string
)

// Shell is the default shell of every tmux server a test starts: bash
// without profile or rc files.
//
// A tmux server takes its default-shell from the SHELL of the client that
// starts it, runs it as a login shell in every pane made without a
// command, and runs "default-shell -c CMD" for a pane made with one. A
// developer's bash read their profile and rc files in every such pane: on
// these machines root's ~/.bashrc runs "pyenv init", which spent 10-25 s of
// CPU per pane before the first prompt, hundreds of times per test run.
// Plain sh is no answer: dash does not exec the last command of -c, so a
// pane made with "cat" would show sh, not cat, as its current command.
// So SHELL is a two-line script that execs bash --norc --noprofile with
// the arguments it was given; where bash is missing, it is /bin/sh.
func Shell() string {
	shellOnce.Do(func() {
		shellPath = "/bin/sh"
		bash, err := exec.LookPath("bash")
		if err != nil {
			return
		}
		if p, err := writeShell(bash); err == nil {
			shellPath = p
		}
	})
	return shellPath
}

// writeShell writes the script Shell names into a directory of this user's
// under the temporary directory, shared by every test process (written to
// a temporary name and renamed, so a reader never sees half of it), and
// refuses a directory someone else could write to.
func writeShell(bash string) (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("tmuxmcp-test-shell-%d", os.Geteuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !st.IsDir() || st.Mode().Perm() != 0o700 || !ok || int(sys.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s is not a private directory of this user", dir)
	}
	script := "#!/bin/sh\nexec " + bash + " --norc --noprofile \"$@\"\n"
	p := filepath.Join(dir, "bash-norc")
	if b, err := os.ReadFile(p); err == nil && string(b) == script {
		return p, nil
	}
	f, err := os.CreateTemp(dir, "bash-norc-*")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(script)
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Chmod(f.Name(), 0o700)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %v %v", p, werr, cerr)
	}
	return p, nil
}

// Runner returns an ExecRunner for this server's binary with a clean
// environment.
func (s *Server) Runner() *tmux.ExecRunner {
	return &tmux.ExecRunner{Bin: s.Bin, Env: CleanEnv()}
}

// WaitFor polls cond until it holds or the timeout passes; tests use it only
// to let a shell in a pane print something, never in product code.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// GrowPanes adds windows to session "main" until the server has want
// panes, given that it has have: windows of ten tiled panes, every other
// pane a `sleep` and the rest the default shell, the grid the list_panes
// benchmarks measure. It returns the new count (want, or have if more).
func (s *Server) GrowPanes(have, want int) int {
	for have < want {
		args := []string{"new-window", "-d", "-t", "main"}
		for p := 0; p < 10 && have < want; p++ {
			if p > 0 {
				args = append(args, ";", "split-window", "-d", "-t", "main:{end}")
			}
			if have%2 == 1 {
				args = append(args, "sleep", "100000")
			}
			if p > 0 {
				args = append(args, ";", "select-layout", "-t", "main:{end}", "tiled")
			}
			have++
		}
		s.MustRun(args...)
	}
	return have
}
