// Package fgcorpus is the corpus of real programs in real terminals that
// the foreground state is tested on: each program, the situation it is put
// in, and the states it may be seen in once settled. Both the package's
// own test (local, and through the remote dump) and the server's (through
// a remote host over ssh) run it, so they judge the same cases.
package fgcorpus

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Case is one program in one situation, with the states it may be
// seen in once it has settled.
type Case struct {
	Name    string
	Needs   []string // programs that must be installed
	Command string   // the pane's command ("" = the default shell)
	// Ready is text the pane shows once the program waits where the
	// case wants it; "" = none.
	Ready string
	// Then runs after Ready: keys to type, signals to send.
	Then   func(t *testing.T, s *tmuxtest.Server, pane string)
	Want   []foreground.State
	Secret bool
	// Inferred: the basis must be inferred (top: a select with a timeout).
	Inferred bool
	// Exited: the pane's program ends (remain-on-exit keeps the pane).
	Exited bool
}

// Require fails under CI (which installs everything the corpus
// uses) and skips elsewhere.
func Require(t testing.TB, names ...string) bool {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required under CI (.ci/run installs it): %v", n, err)
			}
			t.Skipf("%s is not installed", n)
			return false
		}
	}
	return true
}

func SendKeys(s *tmuxtest.Server, pane string, keys ...string) {
	s.MustRun(append([]string{"send-keys", "-t", pane}, keys...)...)
}

func panePIDs(t *testing.T, s *tmuxtest.Server, pane string) []int {
	t.Helper()
	out := s.MustRun("display-message", "-p", "-t", pane, "#{pane_pid}")
	pid, _ := strconv.Atoi(out)
	var pids []int
	var walk func(int)
	walk = func(p int) {
		pids = append(pids, p)
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", p, p))
		for _, w := range strings.Fields(string(b)) {
			c, _ := strconv.Atoi(w)
			walk(c)
		}
	}
	walk(pid)
	return pids
}

// Descendant returns the pid of the pane's process named name.
func Descendant(t *testing.T, s *tmuxtest.Server, pane, name string) int {
	t.Helper()
	for _, p := range panePIDs(t, s, pane) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
		if strings.TrimSpace(string(b)) == name {
			return p
		}
	}
	t.Fatalf("no %s in pane %s", name, pane)
	return 0
}

// silentListener accepts connections and never answers: a request to it
// blocks in the network, not on the terminal.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func Cases(t *testing.T) []Case {
	dir := t.TempDir()
	addr := silentListener(t)
	waiting := []foreground.State{foreground.WaitingForInput}
	return []Case{
		{Name: "bash at its prompt", Needs: []string{"bash"}, Command: "bash --norc --noprofile", Ready: "bash-", Want: waiting},
		{Name: "zsh at its prompt", Needs: []string{"zsh"}, Command: "zsh -f", Want: waiting},
		{Name: "fish at its prompt", Needs: []string{"fish"}, Command: "fish --no-config", Want: waiting},
		{Name: "python3 REPL", Needs: []string{"python3"}, Command: "python3 -q", Ready: ">>> ", Want: waiting},
		{Name: "node REPL", Needs: []string{"node"}, Command: "node", Ready: "> ", Want: waiting},
		{Name: "sqlite3 REPL", Needs: []string{"sqlite3"}, Command: "sqlite3", Ready: "sqlite> ", Want: waiting},
		{Name: "bc REPL", Needs: []string{"bc"}, Command: "bc -q", Want: waiting},
		{Name: "gdb REPL", Needs: []string{"gdb"}, Command: "gdb -q -nx", Ready: "(gdb)", Want: waiting},
		{Name: "cat", Needs: []string{"cat"}, Command: "cat", Want: waiting},
		{Name: "less", Needs: []string{"less"}, Command: "less /etc/passwd", Ready: "root", Want: waiting},
		{Name: "vim", Needs: []string{"vim"}, Command: "vim -u NONE -N", Ready: "~", Want: waiting},
		{Name: "read -p", Needs: []string{"bash"}, Command: `bash -c 'read -p "name? " x'`, Ready: "name? ", Want: waiting},
		{Name: "read -s", Needs: []string{"bash"}, Command: `bash -c 'read -s -p "pass: " x'`, Ready: "pass: ", Want: waiting, Secret: true},
		{Name: "ssh-keygen passphrase", Needs: []string{"ssh-keygen"}, Command: "ssh-keygen -q -t ed25519 -f " + filepath.Join(dir, "key"),
			Ready: "passphrase", Want: waiting, Secret: true},
		{Name: "sleep 30", Needs: []string{"sleep"}, Command: "sleep 30", Want: []foreground.State{foreground.Sleeping}},
		{Name: "curl to a socket that never answers", Needs: []string{"curl"}, Command: "curl -s http://" + addr + "/",
			Want: []foreground.State{foreground.Sleeping}},
		{Name: "top", Needs: []string{"top"}, Command: "top -d 1", Ready: "load average", Want: []foreground.State{foreground.WaitingForInput, foreground.Sleeping}, Inferred: true},
		{Name: "a CPU-bound loop", Needs: []string{"sh"}, Command: "sh -c 'while :; do :; done'", Want: []foreground.State{foreground.Running}},
		{Name: "yes | tr y n | wc -c", Needs: []string{"bash", "yes", "tr", "wc"}, Command: "bash --norc --noprofile -c 'yes | tr y n | wc -c'",
			Want: []foreground.State{foreground.Running}},
		{Name: "C-z on a job in bash", Needs: []string{"bash", "sleep"}, Command: "bash --norc --noprofile", Ready: "bash-",
			Then: func(t *testing.T, s *tmuxtest.Server, pane string) {
				SendKeys(s, pane, "sleep 100", "Enter")
				waitSettled(t, s, pane, foreground.Sleeping)
				SendKeys(s, pane, "C-z")
				WaitText(t, s, pane, "Stopped")
			}, Want: waiting},
		{Name: "SIGSTOP under sh -c, which keeps the terminal", Needs: []string{"sh", "sleep"}, Command: "sh -c 'sleep 300; echo done'",
			Then: func(t *testing.T, s *tmuxtest.Server, pane string) {
				time.Sleep(100 * time.Millisecond)
				pid := Descendant(t, s, pane, "sleep")
				if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			}, Want: []foreground.State{foreground.Stopped}},
		{Name: "a pane whose program exited", Needs: []string{"true"}, Command: "true", Exited: true, Want: []foreground.State{foreground.Exited}},
	}
}

func capture(s *tmuxtest.Server, pane string) string {
	out, _ := s.Run("capture-pane", "-p", "-t", pane)
	return out
}

func WaitText(t *testing.T, s *tmuxtest.Server, pane, text string) {
	t.Helper()
	text = strings.TrimSpace(text) // capture-pane drops trailing blanks
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(capture(s, pane), text) {
		if time.Now().After(deadline) {
			t.Fatalf("pane %s never showed %q; it shows:\n%s", pane, text, capture(s, pane))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func Target(t *testing.T, s *tmuxtest.Server, pane string) foreground.Target {
	t.Helper()
	out := s.MustRun("display-message", "-p", "-t", pane, "#{pane_pid} #{pane_tty}")
	f := strings.Fields(out)
	pid, _ := strconv.Atoi(f[0])
	return foreground.Target{PanePID: pid, TTY: f[1]}
}

func waitSettled(t *testing.T, s *tmuxtest.Server, pane string, want foreground.State) {
	t.Helper()
	tg := Target(t, s, pane)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r := foreground.Inspect(tg, foreground.Options{}); r.State == want {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("pane %s never reached %s; last: %v", pane, want, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func Describe(r foreground.Report) string {
	s := fmt.Sprintf("%s %s", r.State, r.Basis)
	if r.Secret {
		s += " secret"
	}
	return s + " (" + r.Command + ")"
}

// settle inspects until the answer is one of want and stays so for five
// more looks over 100 ms (a program starting up passes through other
// states first); after 15 s it returns the last answer.
func Settle(t *testing.T, inspect func() foreground.Report, want []foreground.State) foreground.Report {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var r foreground.Report
	for time.Now().Before(deadline) {
		r = inspect()
		if r.State == foreground.Exited || Contains(want, r.State) {
			stable := true
			for range 5 {
				time.Sleep(20 * time.Millisecond)
				if again := inspect(); again.State != r.State {
					stable, r = false, again
					break
				}
			}
			if stable {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

func Contains(list []foreground.State, s foreground.State) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Start runs a case in a new window of s (which must keep dead panes:
// remain-on-exit) and returns its pane once the program is where the case
// wants it.
func Start(t *testing.T, s *tmuxtest.Server, session string, c Case) string {
	t.Helper()
	pane := s.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", session, c.Command)
	if c.Ready != "" {
		WaitText(t, s, pane, c.Ready)
	}
	if c.Then != nil {
		c.Then(t, s, pane)
	}
	if c.Exited {
		tmuxtest.WaitFor(t, 10*time.Second, func() bool {
			return s.MustRun("display-message", "-p", "-t", pane, "#{pane_dead}") == "1"
		})
	}
	return pane
}

// Check reports what of r the case does not allow.
func Check(c Case, r foreground.Report) []string {
	var bad []string
	if r.State == foreground.Unknown {
		bad = append(bad, "unknown ("+r.Why+")")
	}
	if !Contains(c.Want, r.State) {
		bad = append(bad, fmt.Sprintf("state %s, want one of %v (%s)", r.State, c.Want, r.Why))
	}
	if r.Secret != c.Secret {
		bad = append(bad, fmt.Sprintf("secret %v, want %v", r.Secret, c.Secret))
	}
	if c.Inferred && r.Basis != foreground.Inferred {
		bad = append(bad, fmt.Sprintf("basis %s, want inferred (%s)", r.Basis, r.Why))
	}
	return bad
}
