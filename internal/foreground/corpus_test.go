package foreground_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// corpusCase is one program in one situation, with the states it may be
// seen in once it has settled.
type corpusCase struct {
	name    string
	needs   []string // programs that must be installed
	command string   // the pane's command ("" = the default shell)
	// ready is text the pane shows once the program waits where the
	// case wants it; "" = none.
	ready string
	// then runs after ready: keys to type, signals to send.
	then   func(t *testing.T, s *tmuxtest.Server, pane string)
	want   []foreground.State
	secret bool
	// inferred: the basis must be inferred (top: a select with a timeout).
	inferred bool
	// exited: the pane's program ends (remain-on-exit keeps the pane).
	exited bool
}

// requireProgram fails under CI (which installs everything the corpus
// uses) and skips elsewhere.
func requireProgram(t *testing.T, names ...string) bool {
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

func sendKeys(s *tmuxtest.Server, pane string, keys ...string) {
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

// descendant returns the pid of the pane's process named name.
func descendant(t *testing.T, s *tmuxtest.Server, pane, name string) int {
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

func corpus(t *testing.T) []corpusCase {
	dir := t.TempDir()
	addr := silentListener(t)
	waiting := []foreground.State{foreground.WaitingForInput}
	return []corpusCase{
		{name: "bash at its prompt", needs: []string{"bash"}, command: "bash --norc --noprofile", ready: "bash-", want: waiting},
		{name: "zsh at its prompt", needs: []string{"zsh"}, command: "zsh -f", want: waiting},
		{name: "fish at its prompt", needs: []string{"fish"}, command: "fish --no-config", want: waiting},
		{name: "python3 REPL", needs: []string{"python3"}, command: "python3 -q", ready: ">>> ", want: waiting},
		{name: "node REPL", needs: []string{"node"}, command: "node", ready: "> ", want: waiting},
		{name: "sqlite3 REPL", needs: []string{"sqlite3"}, command: "sqlite3", ready: "sqlite> ", want: waiting},
		{name: "bc REPL", needs: []string{"bc"}, command: "bc -q", want: waiting},
		{name: "gdb REPL", needs: []string{"gdb"}, command: "gdb -q -nx", ready: "(gdb)", want: waiting},
		{name: "cat", needs: []string{"cat"}, command: "cat", want: waiting},
		{name: "less", needs: []string{"less"}, command: "less /etc/passwd", ready: "root", want: waiting},
		{name: "vim", needs: []string{"vim"}, command: "vim -u NONE -N", ready: "~", want: waiting},
		{name: "read -p", needs: []string{"bash"}, command: `bash -c 'read -p "name? " x'`, ready: "name? ", want: waiting},
		{name: "read -s", needs: []string{"bash"}, command: `bash -c 'read -s -p "pass: " x'`, ready: "pass: ", want: waiting, secret: true},
		{name: "ssh-keygen passphrase", needs: []string{"ssh-keygen"}, command: "ssh-keygen -q -t ed25519 -f " + filepath.Join(dir, "key"),
			ready: "passphrase", want: waiting, secret: true},
		{name: "sleep 30", needs: []string{"sleep"}, command: "sleep 30", want: []foreground.State{foreground.Sleeping}},
		{name: "curl to a socket that never answers", needs: []string{"curl"}, command: "curl -s http://" + addr + "/",
			want: []foreground.State{foreground.Sleeping}},
		{name: "top", needs: []string{"top"}, command: "top -d 1", ready: "load average", want: []foreground.State{foreground.WaitingForInput, foreground.Sleeping}, inferred: true},
		{name: "a CPU-bound loop", needs: []string{"sh"}, command: "sh -c 'while :; do :; done'", want: []foreground.State{foreground.Running}},
		{name: "yes | tr y n | wc -c", needs: []string{"bash", "yes", "tr", "wc"}, command: "bash --norc --noprofile -c 'yes | tr y n | wc -c'",
			want: []foreground.State{foreground.Running}},
		{name: "C-z on a job in bash", needs: []string{"bash", "sleep"}, command: "bash --norc --noprofile", ready: "bash-",
			then: func(t *testing.T, s *tmuxtest.Server, pane string) {
				sendKeys(s, pane, "sleep 100", "Enter")
				waitSettled(t, s, pane, foreground.Sleeping)
				sendKeys(s, pane, "C-z")
				waitText(t, s, pane, "Stopped")
			}, want: waiting},
		{name: "SIGSTOP under sh -c, which keeps the terminal", needs: []string{"sh", "sleep"}, command: "sh -c 'sleep 300; echo done'",
			then: func(t *testing.T, s *tmuxtest.Server, pane string) {
				time.Sleep(100 * time.Millisecond)
				pid := descendant(t, s, pane, "sleep")
				if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			}, want: []foreground.State{foreground.Stopped}},
		{name: "a pane whose program exited", needs: []string{"true"}, command: "true", exited: true, want: []foreground.State{foreground.Exited}},
	}
}

func capture(s *tmuxtest.Server, pane string) string {
	out, _ := s.Run("capture-pane", "-p", "-t", pane)
	return out
}

func waitText(t *testing.T, s *tmuxtest.Server, pane, text string) {
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

func target(t *testing.T, s *tmuxtest.Server, pane string) foreground.Target {
	t.Helper()
	out := s.MustRun("display-message", "-p", "-t", pane, "#{pane_pid} #{pane_tty}")
	f := strings.Fields(out)
	pid, _ := strconv.Atoi(f[0])
	return foreground.Target{PanePID: pid, TTY: f[1]}
}

func waitSettled(t *testing.T, s *tmuxtest.Server, pane string, want foreground.State) {
	t.Helper()
	tg := target(t, s, pane)
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

// TestCorpus runs real programs in real panes and checks the state each
// settles in, with every source and with only what a user without ptrace
// attach rights can read. It prints the table of expected and seen states.
func TestCorpus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the corpus runs on Linux")
	}
	s := tmuxtest.New(t)
	s.MustRun("set-option", "-g", "remain-on-exit", "on")
	s.MustRun("set-option", "-g", "history-limit", "100")
	type row struct{ name, want, full, limited, dump string }
	var table []row
	for _, c := range corpus(t) {
		t.Run(c.name, func(t *testing.T) {
			if !requireProgram(t, c.needs...) {
				return
			}
			pane := s.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main", c.command)
			if c.ready != "" {
				waitText(t, s, pane, c.ready)
			}
			if c.then != nil {
				c.then(t, s, pane)
			}
			tg := target(t, s, pane)
			if c.exited {
				tmuxtest.WaitFor(t, 10*time.Second, func() bool {
					return s.MustRun("display-message", "-p", "-t", pane, "#{pane_dead}") == "1"
				})
			}
			seen := map[string]foreground.Report{}
			for _, label := range []string{"every source", "same-user sources only", "the remote dump"} {
				inspect := func() foreground.Report {
					return foreground.Inspect(tg, foreground.Options{NoSyscall: label != "every source"})
				}
				if label == "the remote dump" {
					inspect = func() foreground.Report { return viaDump(t, s, pane, tg.PanePID) }
				}
				r := settle(t, inspect, c.want)
				seen[label] = r
				if r.State == foreground.Unknown {
					t.Errorf("%s: unknown (%s)", label, r.Why)
				}
				if !slicesContains(c.want, r.State) {
					t.Errorf("%s: state %s, want one of %v (%s)", label, r.State, c.want, r.Why)
				}
				if r.Secret != c.secret {
					t.Errorf("%s: secret %v, want %v", label, r.Secret, c.secret)
				}
				if c.inferred && r.Basis != foreground.Inferred {
					t.Errorf("%s: basis %s, want inferred (%s)", label, r.Basis, r.Why)
				}
			}
			want := fmt.Sprint(c.want)
			if c.secret {
				want += " secret"
			}
			table = append(table, row{c.name, want, describe(seen["every source"]), describe(seen["same-user sources only"]), describe(seen["the remote dump"])})
			s.MustRun("kill-window", "-t", pane)
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-46s %-34s %-46s %-46s %s\n", "program / situation", "expected", "seen (every source)", "seen (same-user sources only)", "seen (the remote dump)")
	for _, r := range table {
		fmt.Fprintf(&b, "%-46s %-34s %-46s %-46s %s\n", r.name, r.want, r.full, r.limited, r.dump)
	}
	t.Log(b.String())
}

func describe(r foreground.Report) string {
	s := fmt.Sprintf("%s %s", r.State, r.Basis)
	if r.Secret {
		s += " secret"
	}
	return s + " (" + r.Command + ")"
}

// settle inspects until the answer is one of want and stays so for five
// more looks over 100 ms (a program starting up passes through other
// states first); after 15 s it returns the last answer.
func settle(t *testing.T, inspect func() foreground.Report, want []foreground.State) foreground.Report {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var r foreground.Report
	for time.Now().Before(deadline) {
		r = inspect()
		if r.State == foreground.Exited || slicesContains(want, r.State) {
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

func slicesContains(list []foreground.State, s foreground.State) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// viaDump inspects a pane as a remote host's is: the fixed script run by
// the pane's own tmux server (run-shell), its dump read back from a buffer.
func viaDump(t *testing.T, s *tmuxtest.Server, pane string, pid int) foreground.Report {
	t.Helper()
	buf := "tmux-mcp-fg-test"
	out, err := s.Run("run-shell", "-t", pane, foreground.RemoteScript(buf), ";", "show-buffer", "-b", buf, ";", "delete-buffer", "-b", buf)
	if err != nil {
		if dead, _ := s.Run("display-message", "-p", "-t", pane, "#{pane_dead}"); dead == "1" {
			return foreground.ExitedReport(pid, "")
		}
		t.Fatalf("the dump: %v", err)
	}
	return foreground.ParseRemote([]byte(out), pid)
}
