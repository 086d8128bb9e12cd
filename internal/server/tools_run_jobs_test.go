package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground/fgcorpus"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Issue 20 item 4: while run_command's command runs, tmux names the pane
// after the command ("sleep"), not after the wrapper's subshell: the shell
// running the command does job control, so each of its jobs leads the
// terminal's foreground process group in turn. These tests run real shells
// in real panes and read pane_current_command through get_pane_info and
// list_panes, that is through tmux itself.

// needProgram is the path of a program a test needs: under CI a missing
// one fails the test, elsewhere it skips (fgcorpus.Require).
func needProgram(t testing.TB, name string) string {
	t.Helper()
	fgcorpus.Require(t, name)
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// jobShell is an interactive shell for %0 with a short prompt and no user
// configuration, and the syntax its commands need.
type jobShell struct {
	bin  string
	argv func(bin, dir string) []string
	// or and status are the shell's "a || b" and "$?"; spin loops for
	// ever in the shell itself; lastBg names the last background job's pid.
	or, status, spin, lastBg string
	// loop runs body for i in 1 2 3.
	loop func(body string) string
}

var jobShells = []jobShell{
	{"bash", func(bin, dir string) []string { return []string{"env", "PS1=$ ", bin, "--norc", "--noprofile"} },
		" || ", "$?", "while :; do :; done", "!", func(b string) string { return "for i in 1 2 3; do " + b + "; done" }},
	{"zsh", func(bin, dir string) []string { return []string{"env", "ZDOTDIR=" + dir, "PS1=%% ", bin, "-f"} },
		" || ", "$?", "while :; do :; done", "!", func(b string) string { return "for i in 1 2 3; do " + b + "; done" }},
	{"fish", func(bin, dir string) []string {
		return []string{"env", "HOME=" + dir, "fish_greeting=", bin, "--no-config", "-C", "function fish_prompt; echo -n '> '; end"}
	}, "; or ", "$status", "while true; end", "last_pid", func(b string) string { return "for i in 1 2 3; " + b + "; end" }},
}

// startShell runs argv (the shell bin) in ts's pane %0 and waits for its
// prompt.
func startShell(t testing.TB, ts *tmuxtest.Server, bin string, argv []string) {
	t.Helper()
	ts.MustRun(append([]string{"respawn-pane", "-k", "-t", "%0"}, argv...)...)
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := ts.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
		screen, _ := ts.Run("capture-pane", "-p", "-t", "%0")
		return out == bin && strings.TrimSpace(screen) != ""
	})
}

// paneCommand is pane_current_command of %0 as get_pane_info reports it.
func paneCommand(e *env) string {
	var info PaneInfo
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, &info)
	if info.PaneCurrentCommand == nil {
		return ""
	}
	return *info.PaneCurrentCommand
}

// listedCommand is pane_current_command of %0 as list_panes reports it.
func listedCommand(e *env) string {
	var panes []PaneInfo
	e.list("list_panes", map[string]any{"session_name": "main"}, &panes)
	for _, p := range panes {
		if p.PaneID == "%0" && p.PaneCurrentCommand != nil {
			return *p.PaneCurrentCommand
		}
	}
	return ""
}

// awaitCommand waits until get_pane_info names want for %0, and returns
// what it saw meanwhile (for the failure message).
func awaitCommand(e *env, want string, within time.Duration) (bool, []string) {
	var seen []string
	for end := time.Now().Add(within); ; {
		got := paneCommand(e)
		if len(seen) == 0 || seen[len(seen)-1] != got {
			seen = append(seen, got)
		}
		if got == want {
			return true, seen
		}
		if time.Now().After(end) {
			return false, seen
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startRun starts command with a short timeout, so the call returns while
// it runs, and returns its run_id.
func startRun(t *testing.T, e *env, command string) string {
	t.Helper()
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": command, "timeout": 0.2}, &r)
	if r.RunID == nil {
		t.Fatalf("%q ended at once: %+v", command, r)
	}
	return *r.RunID
}

// finishRun waits for the run to end and returns its result.
func finishRun(t *testing.T, e *env, id string) RunCommandResult {
	t.Helper()
	var r RunCommandResult
	e.ok("wait_for_run", map[string]any{"run_id": id, "timeout": 15}, &r)
	if r.TimedOut || r.ExitStatus == nil {
		t.Fatalf("the run did not end: %+v; the pane shows:\n%s", r, e.tmux.MustRun("capture-pane", "-p", "-t", "%0"))
	}
	return r
}

func keys(e *env, k string, enter bool) {
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": k, "enter": enter}, nil)
}

// TestRunCommandShowsTheProgram: during run_command "sleep 30", a pipeline
// and "a; b", tmux names the pane after the command's program, for each
// shell that can do job control in a subshell; C-c still ends the run with
// 130. On the parent commit tmux said bash, zsh and fish throughout.
func TestRunCommandShowsTheProgram(t *testing.T) {
	t.Parallel()
	needProgram(t, "cat")
	needProgram(t, "python3")
	for _, sh := range jobShells {
		t.Run(sh.bin, func(t *testing.T) {
			bin := needProgram(t, sh.bin)
			t.Parallel()
			e := newEnv(t)
			startShell(t, e.tmux, sh.bin, sh.argv(bin, t.TempDir()))
			for _, c := range []struct {
				name, command string
				want          []string // in turn
			}{
				{"simple command", "sleep 30", []string{"sleep"}},
				{"pipeline: its first process", "sleep 30 | cat", []string{"sleep"}},
				{"a; b: each in turn", "sleep 3; cat", []string{"sleep", "cat"}},
				{"an interpreter", `python3 -c 'import time; print("py-up", flush=True); time.sleep(30)'`, []string{"python3"}},
			} {
				id := startRun(t, e, c.command)
				for _, want := range c.want {
					ok, seen := awaitCommand(e, want, 10*time.Second)
					if !ok {
						t.Fatalf("%s: get_pane_info never said %q; it said %q", c.name, want, seen)
					}
					if got := listedCommand(e); got != want {
						t.Errorf("%s: list_panes says %q, get_pane_info %q", c.name, got, want)
					}
				}
				if strings.HasPrefix(c.command, "python3") {
					waitScreen(t, e, "\npy-up") // C-c during Python's start-up exits 1
				}
				keys(e, "C-c", false)
				if r := finishRun(t, e, id); *r.ExitStatus != 130 {
					t.Errorf("%s: exit status after C-c %d, want 130; output %q", c.name, *r.ExitStatus, r.Output)
				}
				if ok, seen := awaitCommand(e, sh.bin, 5*time.Second); !ok {
					t.Errorf("%s: after the run the pane says %q, want the shell", c.name, seen)
				}
			}
		})
	}
}

// TestRunCommandShowsTheShellWithoutJobControl documents what tmux shows
// in a shell whose subshells cannot do job control (dash, which is sh here;
// mksh and ksh93 likewise): the shell, while the command runs.
func TestRunCommandShowsTheShellWithoutJobControl(t *testing.T) {
	t.Parallel()
	needProgram(t, "dash")
	e := newEnv(t)
	startShell(t, e.tmux, "dash", []string{"env", "PS1=$ ", "dash"})
	id := startRun(t, e, "sleep 30")
	time.Sleep(300 * time.Millisecond)
	if got := paneCommand(e); got != "dash" {
		t.Errorf("dash: pane_current_command %q during the run, want dash (no job control in its subshells)", got)
	}
	keys(e, "C-c", false)
	if r := finishRun(t, e, id); *r.ExitStatus != 130 {
		t.Errorf("exit status after C-c %d", *r.ExitStatus)
	}
}

// TestRunCommandJobControlKeepsTheContract: with job control in the
// wrapper, a run still behaves as before, in each shell that has it: C-c
// ends the whole command (not just its current job) with 130; a command
// killed by a signal, a background job, a multi-line command and a command
// that reads the terminal give exactly their output, with no job-control
// report ("Done", "Terminated", "Stopped") in it or on the screen; cd and
// export stay in the run; and C-z cannot hang the run.
func TestRunCommandJobControlKeepsTheContract(t *testing.T) {
	t.Parallel()
	needProgram(t, "head")
	needProgram(t, "python3")
	for _, sh := range jobShells {
		t.Run(sh.bin, func(t *testing.T) {
			bin := needProgram(t, sh.bin)
			t.Parallel()
			e := newEnv(t)
			startShell(t, e.tmux, sh.bin, sh.argv(bin, t.TempDir()))
			run := func(args map[string]any) RunCommandResult {
				t.Helper()
				args["pane_id"], args["timeout"] = "%0", 15
				var r RunCommandResult
				e.ok("run_command", args, &r)
				if r.TimedOut || r.ExitStatus == nil {
					t.Fatalf("%+v", r)
				}
				return r
			}
			expect := func(what string, r RunCommandResult, status int, output ...string) {
				t.Helper()
				if *r.ExitStatus != status || strings.Join(r.Output, "|") != strings.Join(output, "|") {
					t.Errorf("%s: status %d output %q, want %d %q", what, *r.ExitStatus, r.Output, status, output)
				}
			}

			// C-c while a job runs ends the whole command: the rest of a
			// list, the other branch of ||, the loop.
			for _, cmd := range []string{"sleep 30; echo after", "sleep 30" + sh.or + "echo after", sh.loop("sleep 30; echo after")} {
				id := startRun(t, e, cmd)
				if ok, seen := awaitCommand(e, "sleep", 10*time.Second); !ok {
					t.Fatalf("%q: the pane never showed sleep: %q", cmd, seen)
				}
				keys(e, "C-c", false)
				r := finishRun(t, e, id)
				if *r.ExitStatus != 130 || strings.Contains(strings.Join(r.Output, "|"), "after") {
					t.Errorf("C-c during %q: status %d output %q, want 130 and nothing after", cmd, *r.ExitStatus, r.Output)
				}
			}

			// C-c while the shell itself runs (a builtin loop) after a job
			// ended: the terminal is the shell's again, and the run ends.
			id := startRun(t, e, "sleep 0.3; "+sh.spin)
			time.Sleep(time.Second)
			keys(e, "C-c", false)
			if r := finishRun(t, e, id); sh.bin != "fish" && *r.ExitStatus != 130 {
				t.Errorf("C-c in a builtin loop after a job: status %d, want 130", *r.ExitStatus) // fish says 0, as before
			}
			if sh.bin != "fish" {
				expect("$0 is the shell's", run(map[string]any{"command": "echo $0"}), 0, bin)
			}

			// Killed by a signal: the status, and no report of it.
			expect("SIGTERM", run(map[string]any{"command": "sh -c 'kill -TERM $$'; echo st=" + sh.status}), 0, "st=143")
			expect("SIGKILL", run(map[string]any{"command": "sh -c 'kill -KILL $$'"}), 137)
			// Background jobs: neither their start nor their end is
			// reported.
			expect("background job ending", run(map[string]any{"command": "sleep 0.2 & sleep 1; echo x"}), 0, "x")
			r := run(map[string]any{"command": "sleep 100 & echo bg $" + sh.lastBg})
			if len(r.Output) != 1 || !strings.HasPrefix(r.Output[0], "bg ") || *r.ExitStatus != 0 {
				t.Errorf("background job left running: %+v", r)
			} else if pid, err := strconv.Atoi(strings.TrimPrefix(r.Output[0], "bg ")); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL) // the test started it: it must not outlive the test
			}
			expect("multi-line", run(map[string]any{"command": "echo one\nsleep 0.3\necho two", "suppress_history": false}), 0, "one", "two")
			// cd and export stay in the run.
			expect("cd and export", run(map[string]any{"command": "cd /; export TMUX_MCP_T=1; pwd"}), 0, "/")
			if r := run(map[string]any{"command": `pwd; echo "t=$TMUX_MCP_T"`}); len(r.Output) != 2 || r.Output[0] == "/" || r.Output[1] != "t=" {
				t.Errorf("cd or export leaked: %q", r.Output)
			}

			// A job that reads the terminal has it, and gets what is typed.
			id = startRun(t, e, "head -n 1; echo after")
			if ok, seen := awaitCommand(e, "head", 10*time.Second); !ok {
				t.Fatalf("the pane never showed head: %q", seen)
			}
			keys(e, "hello", true)
			expect("head reading the terminal", finishRun(t, e, id), 0, "hello", "hello", "after")
			id = startRun(t, e, `python3 -c 'print("py-" + input())'`)
			if ok, seen := awaitCommand(e, "python3", 10*time.Second); !ok {
				t.Fatalf("the pane never showed python3: %q", seen)
			}
			keys(e, "hi", true)
			expect("python3 reading the terminal", finishRun(t, e, id), 0, "hi", "py-hi")
			if sh.bin != "fish" { // fish's read draws a prompt of its own
				id = startRun(t, e, "sleep 0.5; read x; echo got-$x")
				waitScreen(t, e, "got-$x")
				time.Sleep(800 * time.Millisecond) // sleep 0.5 is over; read waits
				keys(e, "hello", true)
				expect("read after a job", finishRun(t, e, id), 0, "hello", "got-hello")
			}

			// C-z cannot leave the run waiting on a stopped job. bash and
			// zsh ignore it (the program goes on); in fish the program
			// stops, the rest of the command runs, and the stopped program
			// is ended when the run ends.
			id = startRun(t, e, "head -n 1; echo after")
			if ok, seen := awaitCommand(e, "head", 10*time.Second); !ok {
				t.Fatalf("the pane never showed head: %q", seen)
			}
			keys(e, "C-z", false)
			if sh.bin == "fish" {
				r := finishRun(t, e, id)
				if *r.ExitStatus != 0 || len(r.Output) == 0 || !strings.HasSuffix(r.Output[len(r.Output)-1], "after") {
					t.Errorf("fish, C-z: %+v", r)
				}
			} else {
				time.Sleep(300 * time.Millisecond)
				if got := paneCommand(e); got != "head" {
					t.Errorf("after C-z the pane shows %q, want head still in the foreground", got)
				}
				keys(e, "hi", true)
				r := finishRun(t, e, id)
				if out := strings.Join(r.Output, "|"); *r.ExitStatus != 0 || !strings.HasSuffix(out, "hi|hi|after") {
					t.Errorf("C-z then hi: status %d output %q", *r.ExitStatus, r.Output)
				}
			}
			// Nothing of the run is left: no stopped or spinning process.
			if left := sessionProcs(t, e); len(left) > 0 {
				t.Errorf("processes left in the pane after the runs: %q", left)
			}
			expect("the pane is usable", run(map[string]any{"command": "echo next"}), 0, "next")

			screen := e.tmux.MustRun("capture-pane", "-p", "-J", "-S", "-", "-t", "%0")
			for _, l := range strings.Split(screen, "\n") {
				if chatter.MatchString(l) {
					t.Errorf("the pane shows job-control chatter %q:\n%s", l, screen)
				}
			}
		})
	}
}

// chatter is a shell's report of a job: "[1] 1234", "[1]+  Done  sleep 1",
// zsh's "[1]  + done  sleep 1" and "suspended", fish's "Job 1, 'sleep'
// has stopped", and the reports of a signal's death.
var chatter = regexp.MustCompile(`^\[\d+\]|Done|Terminated|Killed|Stopped|suspended|has stopped|terminated by signal`)

// sessionProcs lists the live processes of %0's session other than its
// shell (/proc; zombies are left out: an exited process that its new
// parent has not reaped yet is not running).
func sessionProcs(t *testing.T, e *env) []string {
	t.Helper()
	pid, err := strconv.Atoi(e.tmux.MustRun("display-message", "-p", "-t", "%0", "#{pane_pid}"))
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left []string
		ents, _ := os.ReadDir("/proc")
		for _, ent := range ents {
			stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
			if err != nil {
				continue
			}
			s := string(stat)
			end := strings.LastIndexByte(s, ')')
			f := strings.Fields(s[end+1:])
			if len(f) < 4 || f[0] == "Z" || f[3] != strconv.Itoa(pid) || ent.Name() == strconv.Itoa(pid) {
				continue
			}
			left = append(left, fmt.Sprintf("%s %s %s", ent.Name(), f[0], s[strings.IndexByte(s, '('):end+1]))
		}
		if len(left) == 0 || time.Now().After(end) {
			return left
		}
	}
}

// TestRemoteRunCommandShowsTheProgram: a pane on a remote host gets the
// same wrapper: while the command runs, tmux on that host names the pane
// after it, and the local pane of the same id is untouched.
func TestRemoteRunCommandShowsTheProgram(t *testing.T) {
	t.Parallel()
	e := newHostEnv(t)
	waitShell(t, e.box, "%0")
	var r RunCommandResult
	e.ok("run_command", on(map[string]any{"pane_id": "%0", "command": "sleep 30 | cat", "timeout": 0.2}), &r)
	if r.RunID == nil {
		t.Fatalf("%+v", r)
	}
	var seen []string
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var info PaneInfo
		e.ok("get_pane_info", on(map[string]any{"pane_id": "%0"}), &info)
		if got := *info.PaneCurrentCommand; len(seen) == 0 || seen[len(seen)-1] != got {
			seen = append(seen, got)
		}
		if seen[len(seen)-1] == "sleep" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("get_pane_info on the host never said sleep: %q", seen)
		}
	}
	var panes []PaneInfo
	e.list("list_panes", on(map[string]any{"session_name": "main"}), &panes)
	if len(panes) != 1 || panes[0].PaneCurrentCommand == nil || *panes[0].PaneCurrentCommand != "sleep" {
		t.Errorf("list_panes on the host: %+v", panes)
	}
	if local := paneCommand(e.env); local != "bash" {
		t.Errorf("the local %%0 says %q", local)
	}
	e.ok("send_keys", on(map[string]any{"pane_id": "%0", "keys": "C-c", "enter": false}), nil)
	e.ok("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 15}, &r)
	if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus != 130 {
		t.Errorf("after C-c: %+v", r)
	}
}
