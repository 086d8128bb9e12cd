package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func TestRunCommand(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	cases := []struct {
		name   string
		args   map[string]any
		exit   int
		output []string
	}{
		{"exit status and output", map[string]any{"command": "echo hi; echo there >&2; exit 3"}, 3, []string{"hi", "there"}},
		{"true", map[string]any{"command": "true"}, 0, []string{}},
		{"trailing comment", map[string]any{"command": "echo x-$((2+2)) # comment"}, 0, []string{"x-4"}},
		{"subshell: cd does not persist", map[string]any{"command": "cd /; pwd"}, 0, []string{"/"}},
		{"max_lines keeps the tail", map[string]any{"command": "seq 1 10", "max_lines": 3}, 0, []string{"8", "9", "10"}},
		{"multi-line without suppression", map[string]any{"command": "echo one\necho two", "suppress_history": false}, 0, []string{"one", "two"}},
		{"colours stripped", map[string]any{"command": `printf '\033[31mred\033[0m\n'`}, 0, []string{"red"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"pane_id": "%0", "timeout": 10}
			for k, v := range c.args {
				args[k] = v
			}
			var r RunCommandResult
			e.ok("run_command", args, &r)
			if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus != c.exit || r.RunID != nil {
				t.Fatalf("%+v", r)
			}
			if strings.Join(r.Output, "|") != strings.Join(c.output, "|") {
				t.Errorf("output %q, want %q", r.Output, c.output)
			}
		})
	}
	// cd did not leak into the pane's shell.
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "pwd"}, &r)
	if len(r.Output) != 1 || r.Output[0] == "/" {
		t.Errorf("cd leaked: %q", r.Output)
	}
}

// The whole output, not the screen: 5000 lines from a 24-row pane whose
// history is smaller than that.
func TestRunCommandWholeOutput(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	e.tmux.MustRun("set-option", "-t", "main", "history-limit", "1000")
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "seq 1 5000", "timeout": 20}, &r)
	if len(r.Output) != 5000 || r.Output[0] != "1" || r.Output[4999] != "5000" {
		t.Fatalf("%d lines, first %q last %q", len(r.Output), r.Output[0], r.Output[len(r.Output)-1])
	}
	for i, l := range r.Output {
		if l != fmt.Sprint(i+1) {
			t.Fatalf("line %d = %q", i, l)
		}
	}
}

func TestRunCommandTimeoutAndResume(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo early; sleep 1.5; echo late; exit 7", "timeout": 0.5}, &r)
	if !r.TimedOut || r.ExitStatus != nil || r.RunID == nil || r.EffectiveTimeout != 0.5 {
		t.Fatalf("%+v", r)
	}
	if strings.Join(r.Output, "|") != "early" {
		t.Errorf("output so far %q", r.Output)
	}
	var r2 RunCommandResult
	e.ok("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 10}, &r2)
	if r2.TimedOut || r2.ExitStatus == nil || *r2.ExitStatus != 7 || strings.Join(r2.Output, "|") != "early|late" {
		t.Fatalf("%+v", r2)
	}
	msg, _ := e.fail("wait_for_run", map[string]any{"run_id": *r.RunID})
	if !strings.Contains(msg, "unknown run_id") {
		t.Errorf("collected run: %q", msg)
	}
	// Nothing is left behind in tmux: no pane options, no buffers.
	if opts := e.tmux.MustRun("show-options", "-p", "-t", "%0"); strings.Contains(opts, "@") {
		t.Errorf("pane options left: %q", opts)
	}
	if bufs, _ := e.tmux.Run("list-buffers"); bufs != "" {
		t.Errorf("buffers left: %q", bufs)
	}
}

func TestRunCommandRefusals(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "%0", "cat")
	e.tmux.MustRun("split-window", "-d", "-t", "%0", "sh")
	e.tmux.MustRun("copy-mode", "-t", "%2")
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pane_id": "%1", "command": "ls"}, `running "cat", not a known shell`},
		{map[string]any{"pane_id": "%2", "command": "ls"}, "copy mode"},
		{map[string]any{"pane_id": "%0", "command": "  "}, "must not be blank"},
		{map[string]any{"pane_id": "%0", "command": "echo a\necho b"}, "single-line command"},
		{map[string]any{"pane_id": "%0", "command": "ls", "timeout": 0}, "greater than 0"},
		{map[string]any{"pane_id": "%0", "command": "ls", "max_lines": 0}, "max_lines must be a positive"},
		{map[string]any{"pane_id": "%9", "command": "ls"}, "not found"},
		{map[string]any{"run_id": "nope"}, "unknown run_id"},
	}
	for _, c := range cases {
		tool := "run_command"
		if _, ok := c.args["run_id"]; ok {
			tool = "wait_for_run"
		}
		msg, _ := e.fail(tool, c.args)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q lacks %q", c.args, msg, c.want)
		}
	}
	// The copy-mode and cat panes got no keystrokes.
	if out := e.tmux.MustRun("capture-pane", "-p", "-t", "%1"); strings.Contains(out, "ls") {
		t.Errorf("keys typed into cat: %q", out)
	}
}

// A full-screen program refuses too.
func TestRunCommandRefusesAlternateScreen(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	typeKeys(e, "%0", `printf '\033[?1049h'; sleep 30`)
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{alternate_on}")
		return out == "1"
	})
	msg, _ := e.fail("run_command", map[string]any{"pane_id": "%0", "command": "ls"})
	if !strings.Contains(msg, "alternate screen") && !strings.Contains(msg, "not a known shell") {
		t.Errorf("%q", msg)
	}
}

func TestRunWrapper(t *testing.T) {
	w := runWrapper("sh", "ls # note", "abc", true, runView{})
	if !strings.HasPrefix(w, " (set -- 'ls # note';printf") || !strings.Contains(w, `(eval "shift 1;$1")`) || !strings.HasSuffix(w, "$?") {
		t.Errorf("posix wrapper %q", w)
	}
	b := runWrapper("bash", "echo it's", "abc", true, runView{})
	if !strings.HasPrefix(b, " case $(builtin history 1) in") || !strings.Contains(b, "builtin history -d -1") ||
		!strings.Contains(b, `(set -- $? 'echo it'\''s';`) || !strings.Contains(b, `CHLD;eval "shift 2;$2")`) {
		t.Errorf("bash wrapper %q", b)
	}
	if p := runWrapper("bash", "ls", "abc", false, runView{}); !strings.HasPrefix(p, "(set -- 'ls'") || strings.Contains(p, "history") {
		t.Errorf("bash wrapper without suppression %q", p)
	}
	f := runWrapper("fish", "echo 'a\\b'\necho c", "abc", false, runView{})
	if !strings.Contains(f, `set -l c 'echo \'a\\b\''\n'echo c';`) || !strings.Contains(f, ` -c $argv[1]' $c;`) || !strings.HasSuffix(f, "$status;end") {
		t.Errorf("fish wrapper %q", f)
	}
	// A prompt that filled its last row (tmux's cursor_x is then the
	// width): the echo starts on the next row.
	if w := runWrapper("sh", "ls", "abc", false, runView{80, 80, 24}); !strings.Contains(w, `\033[003A\033[0001G\033[J`) || len(w)%80 != 1 {
		t.Errorf("prompt filling its row: %q", w)
	}
	// Always one line, padded so that its length is 1 more than a
	// multiple of the width, erasing exactly the rows it covers.
	for _, sh := range []string{"sh", "bash", "zsh", "fish"} {
		for _, v := range []runView{{0, 80, 24}, {2, 80, 24}, {79, 80, 24}, {30, 40, 50}} {
			w := runWrapper(sh, "echo one\r\necho two\rthree", "abc", true, v)
			if strings.ContainsAny(w, "\r\n") {
				t.Errorf("%s %v: more than one line: %q", sh, v, w)
			}
			want := 1
			if v.col == v.width-1 {
				want = 2
			}
			if len(w)%v.width != want {
				t.Errorf("%s %v: length %d", sh, v, len(w))
			}
			rows := (v.col + len(w) + v.width - 1) / v.width
			if !strings.Contains(w, fmt.Sprintf(`\033[%03dA\033[%04dG\033[J`, rows, v.col+1)) {
				t.Errorf("%s %v: does not erase %d rows: %q", sh, v, rows, w)
			}
		}
	}
}

// fish is not POSIX: the command runs in a child fish and the status comes
// from $status. CI installs fish; without it this test cannot run.
func TestRunCommandFish(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed (CI installs it)")
	}
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("respawn-pane", "-k", "-t", "%0", "env", "HOME="+t.TempDir(), "fish_greeting=", fish, "--no-config")
	tmuxtest.WaitFor(t, 10*time.Second, func() bool {
		out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
		return out == "fish"
	})
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo fish-(math 6 '*' 7); cd /; false", "timeout": 15}, &r)
	if r.ExitStatus == nil || *r.ExitStatus != 1 || strings.Join(r.Output, "|") != "fish-42" {
		t.Fatalf("%+v", r)
	}
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "pwd", "timeout": 15}, &r)
	if len(r.Output) != 1 || r.Output[0] == "/" {
		t.Errorf("cd leaked out of the child fish: %q", r.Output)
	}
	// C-c stops the command and the run still ends (fish abandons a line
	// whose job SIGINT killed, end marker included, unless guarded).
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "sleep 30", "timeout": 1}, &r)
	if r.RunID == nil {
		t.Fatalf("%+v", r)
	}
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "C-c", "enter": false}, nil)
	var r2 RunCommandResult
	e.ok("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 10}, &r2)
	if r2.TimedOut || r2.ExitStatus == nil || *r2.ExitStatus == 0 {
		t.Fatalf("after C-c: %+v", r2)
	}
}

// A command nobody collects stops being followed after runAbandon: the
// record goes and the watcher subscription is released.
func TestRunAbandoned(t *testing.T) {
	old := runAbandon
	runAbandon = 300 * time.Millisecond
	defer func() { runAbandon = old }()
	e := shellEnv(t)
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "sleep 30", "timeout": 0.2}, &r)
	if r.RunID == nil {
		t.Fatalf("%+v", r)
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool { return e.watchers().Subscriptions() == 0 })
	msg, _ := e.fail("wait_for_run", map[string]any{"run_id": *r.RunID})
	if !strings.Contains(msg, "unknown run_id") {
		t.Errorf("%q", msg)
	}
}

// Text left on the prompt line (send_keys with enter=false, or a person
// typing) must not run glued to the command: run_command clears the line
// first, wherever the cursor is. Each shell here has its own line editor:
// none (the tty's kill character) for dash, readline for bash, fish's own.
func TestRunCommandClearsPendingInput(t *testing.T) {
	t.Parallel()
	fish, _ := exec.LookPath("fish")
	shells := []struct {
		name  string
		argv  []string
		ready string // pane_current_command once it runs
		left  bool   // has a line editor, so the cursor can move left
	}{
		{"dash", []string{"env", "PS1=$ ", "dash"}, "dash", false},
		{"bash", []string{"env", "PS1=$ ", "bash", "--norc", "--noprofile"}, "bash", true},
		{"fish", []string{"env", "HOME=" + t.TempDir(), "fish_greeting=", fish, "--no-config"}, "fish", true},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			if sh.name == "fish" && fish == "" {
				t.Skip("fish is not installed (CI installs it)")
			}
			t.Parallel()
			e := newEnv(t)
			dir := t.TempDir()
			// The shell starts in dir, so whatever it creates lands there.
			e.tmux.MustRun(append([]string{"respawn-pane", "-k", "-t", "%0", "-c", dir}, sh.argv...)...)
			// Type only once the shell has drawn its prompt: a shell still
			// starting (fish) may discard keys typed ahead of its reader.
			tmuxtest.WaitFor(t, 10*time.Second, func() bool {
				out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
				screen, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
				return out == sh.ready && strings.TrimSpace(screen) != ""
			})
			marker := dir + "/pending-ran"
			// fish may still swallow keys right after its first prompt
			// (terminal queries): type again until the text shows.
			typed := false
			for try := 0; try < 10 && !typed; try++ {
				e.tmux.MustRun("send-keys", "-t", "%0", "-l", "touch "+marker)
				for wait := 0; wait < 25 && !typed; wait++ {
					time.Sleep(20 * time.Millisecond)
					out, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
					typed = strings.Contains(out, "pending-ran")
				}
			}
			if !typed {
				t.Fatal("the shell never showed the typed text")
			}
			if sh.left {
				e.tmux.MustRun("send-keys", "-t", "%0", "Left", "Left", "Left")
			}
			var r RunCommandResult
			e.ok("run_command", map[string]any{"pane_id": "%0", "command": "printf 'clean-%s\\n' 42", "timeout": 15, "suppress_history": false}, &r)
			if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != "clean-42" {
				t.Errorf("%+v", r)
			}
			// Glued to the wrapper, touch would make pending-ranprintf or
			// the like: any file at all in dir means the pending text ran.
			if ents, _ := os.ReadDir(dir); len(ents) > 0 {
				t.Errorf("the pending input ran: %s exists", ents[0].Name())
			}

		})
	}
}

// Issue 9 item 4: output that ends inside an escape sequence must not hide
// the end marker; the run reports its exit status and all its output.
func TestRunCommandOutputEndsInsideSequence(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	for _, open := range []string{`\033]0;title`, `\033P`, `\033_abc`, `\033`, `\033[12`} {
		var r RunCommandResult
		e.ok("run_command", map[string]any{"pane_id": "%0", "timeout": 5,
			"command": `echo before; printf 'tail` + open + `'; exit 4`}, &r)
		if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus != 4 || strings.Join(r.Output, "|") != "before|tail" {
			t.Errorf("%s: %+v", open, r)
		}
	}
}

// Issue 9 item 11: one run_command per pane at a time. A second one is
// refused, naming the run in flight; input from other tools is let through
// once the command started, so C-c stops it and the run ends with the
// status of an interrupted command.
func TestRunCommandOnePerPaneAndCtrlC(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "sleep 30", "timeout": 0.5}, &r)
	if !r.TimedOut || r.RunID == nil {
		t.Fatalf("%+v", r)
	}
	msg, _ := e.fail("run_command", map[string]any{"pane_id": "%0", "command": "echo second", "timeout": 5})
	if !strings.Contains(msg, *r.RunID) || !strings.Contains(msg, "already running") {
		t.Errorf("second run into a busy pane: %q", msg)
	}
	start := time.Now()
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "C-c", "enter": false}, nil)
	var r2 RunCommandResult
	e.ok("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 10}, &r2)
	if r2.TimedOut || r2.ExitStatus == nil || *r2.ExitStatus == 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("after C-c: %+v", r2)
	}
	if *r2.ExitStatus != 130 {
		t.Logf("exit status after C-c: %d", *r2.ExitStatus)
	}
	// The pane is free again.
	var r3 RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo third", "timeout": 10}, &r3)
	if r3.ExitStatus == nil || *r3.ExitStatus != 0 || strings.Join(r3.Output, "|") != "third" {
		t.Errorf("%+v", r3)
	}
}

// A run_id belongs to the client that started the run: to any other
// client wait_for_run answers that it does not exist.
func TestRunIDOwnedByItsClient(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	c := e.srv.newCall()
	ctxA := WithOwner(context.Background(), "client-a")
	ctxB := WithOwner(context.Background(), "client-b")
	r, err := c.runCommand(ctxA, runCommandArgs{Command: "sleep 1; echo done-a", PaneTarget: PaneTarget{PaneID: new("%0")}, Timeout: 0.2})
	if err != nil || r.RunID == nil {
		t.Fatalf("%+v %v", r, err)
	}
	for _, ctx := range []context.Context{ctxB, context.Background()} { // another client; the local one
		_, err := c.waitForRun(ctx, waitForRunArgs{RunID: *r.RunID, Timeout: 5})
		if err == nil || !strings.Contains(err.Error(), "unknown run_id") {
			t.Errorf("%v collected client-a's run: %v", OwnerFrom(ctx), err)
		}
	}
	msg, _ := e.fail("wait_for_run", map[string]any{"run_id": *r.RunID})
	if !strings.Contains(msg, "unknown run_id") {
		t.Errorf("through the tool (local owner): %q", msg)
	}
	r2, err := c.waitForRun(ctxA, waitForRunArgs{RunID: *r.RunID, Timeout: 10})
	if err != nil || r2.ExitStatus == nil || *r2.ExitStatus != 0 || strings.Join(r2.Output, "|") != "done-a" {
		t.Fatalf("the owner's wait: %+v %v", r2, err)
	}
}

// Issue 9 item 11: send_keys racing run_command into the same pane never
// puts the typed wrapper into the run's output, and never makes the run
// miss its markers.
func TestRunCommandConcurrentSendKeys(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	for i := range 50 {
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			e.call("send_keys", map[string]any{"pane_id": "%0", "keys": fmt.Sprintf("echo typed-%d", i)})
		}()
		for range 2 { // text left on the line, as a person typing would
			go func() {
				defer wg.Done()
				e.call("send_keys", map[string]any{"pane_id": "%0", "keys": "x", "enter": false, "literal": true})
			}()
		}
		var r RunCommandResult
		e.ok("run_command", map[string]any{"pane_id": "%0", "command": fmt.Sprintf("echo out-%d", i), "timeout": 10}, &r)
		wg.Wait()
		out := strings.Join(r.Output, "\n")
		if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus != 0 || !strings.Contains(out, fmt.Sprintf("out-%d", i)) ||
			strings.Contains(out, markerOSC) || strings.Contains(out, "printf") {
			t.Fatalf("round %d: %+v", i, r)
		}
	}
}

// Issue 9 item 11: the end marker counts only after the start marker. When
// the start marker is missing, the output cannot be told from the echoed
// wrapper: the run reports its status and its output as missing, never the
// wrapper's text.
func TestRunEndMarkerNeedsStartMarker(t *testing.T) {
	cases := []struct {
		name      string
		stream    string
		output    []string
		truncated bool
	}{
		{"both markers", "$ printf S;(\r\n> echo hi\r\n\x1b]7799;S;r1\x07hi\r\n\x1b]7799;E;r1;0\x07$ ", []string{"hi"}, false},
		{"end without start", "$ printf S;(\r\n> echo hi\r\nhi\r\n\x1b]7799;E;r1;0\x07$ ", nil, true},
		{"another run's start", "$ x\r\n\x1b]7799;S;r0\x07hi\r\n\x1b]7799;E;r1;0\x07", nil, true},
	}
	for _, c := range cases {
		for _, chunk := range []int{1, len(c.stream)} { // any chunking
			t.Run(fmt.Sprintf("%s/chunk %d", c.name, chunk), func(t *testing.T) {
				rec := &runRecord{id: "r1", done: make(chan struct{}), begun: make(chan struct{})}
				feed := rec.feeder()
				for i := 0; i < len(c.stream); i += chunk {
					feed([]byte(c.stream[i:min(i+chunk, len(c.stream))]))
				}
				if !rec.ended() || rec.exit == nil || *rec.exit != 0 {
					t.Fatalf("not finished with status 0: %+v", rec)
				}
				if strings.Join(rec.lines, "|") != strings.Join(c.output, "|") || rec.noStart != c.truncated {
					t.Errorf("lines %q noStart %v, want %q %v", rec.lines, rec.noStart, c.output, c.truncated)
				}
			})
		}
	}
}

// Issue 9 item 11: while a run_command has typed its wrapper and its start
// marker has not shown, input from other tools waits (at most
// inputHoldMax); once the command started it goes through.
func TestInputHeldUntilStartMarker(t *testing.T) {
	e := shellEnv(t)
	old := inputHoldMax
	inputHoldMax = 3 * time.Second
	defer func() { inputHoldMax = old }()
	sock := tmux.Socket{Name: e.srv.cfg.SocketName} // what Call.Socket resolves for these calls
	reg := e.srv.runs()
	var buf BufferRef
	e.ok("load_buffer", map[string]any{"content": "echo held-by-paste_buffer-$((6*7))"}, &buf)
	// Every tool that types or pastes into a pane waits for the start marker.
	for _, input := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"send_keys", map[string]any{"pane_id": "%0", "keys": "echo held-$((6*7))"}, "held-42"},
		{"paste_text", map[string]any{"pane_id": "%0", "text": "echo held-by-paste_text-$((6*7))"}, "held-by-paste_text-42"},
		{"paste_buffer", map[string]any{"pane_id": "%0", "buffer_name": buf.BufferName}, "held-by-paste_buffer-42"},
	} {
		rec := &runRecord{id: "held", owner: LocalOwner, pane: "%0", sock: sock, started: time.Now(), done: make(chan struct{}), begun: make(chan struct{})}
		reg.mu.Lock()
		reg.busy[paneKey{e.host, sock, "%0"}] = rec
		reg.mu.Unlock()
		sent := make(chan time.Time, 1)
		go func() {
			e.call(input.tool, input.args)
			sent <- time.Now()
		}()
		time.Sleep(500 * time.Millisecond)
		select {
		case <-sent:
			t.Fatalf("%s went through before the start marker", input.tool)
		default:
		}
		if out := e.tmux.MustRun("capture-pane", "-p", "-t", "%0"); strings.Contains(out, input.want) {
			t.Fatalf("%s typed before the start marker: %q", input.tool, out)
		}
		began := time.Now()
		close(rec.begun)
		if at := <-sent; at.Before(began) {
			t.Fatalf("%s returned before the start marker", input.tool)
		}
		e.tmux.MustRun("send-keys", "-t", "%0", "Enter")
		waitScreen(t, e, input.want)
		reg.mu.Lock()
		delete(reg.busy, paneKey{e.host, sock, "%0"})
		reg.mu.Unlock()
	}

	// A start marker that never comes holds input for inputHoldMax only.
	inputHoldMax = 300 * time.Millisecond
	rec2 := &runRecord{id: "stuck", owner: LocalOwner, pane: "%0", sock: sock, started: time.Now(), done: make(chan struct{}), begun: make(chan struct{})}
	reg.mu.Lock()
	reg.busy[paneKey{e.host, sock, "%0"}] = rec2
	reg.mu.Unlock()
	start := time.Now()
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "echo late-$((6*7))"}, nil)
	if el := time.Since(start); el < 250*time.Millisecond || el > 2*time.Second {
		t.Errorf("held for %v, want about 300ms", el)
	}
	waitScreen(t, e, "late-42")
	// Once the hold has given up on a run, input does not wait for it again:
	// a batch of several operations used to wait inputHoldMax per operation
	// (the fault suite's fuzz saw a send_keys_batch take over 30 s).
	start = time.Now()
	var ops []any
	for i := 1; i <= 4; i++ {
		ops = append(ops, map[string]any{"pane_id": "%0", "keys": fmt.Sprintf("echo b%d", i)})
	}
	e.ok("send_keys_batch", map[string]any{"operations": ops}, nil)
	if el := time.Since(start); el > 250*time.Millisecond {
		t.Errorf("a batch after the hold gave up on the run waited %v", el)
	}
}

func waitScreen(t *testing.T, e *env, text string) {
	t.Helper()
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
		return strings.Contains(out, text)
	})
}

// Issue 9 item 12: suppress_history keeps the wrapper and the command out
// of the history file, whatever the user's settings, or says it could not;
// and it changes no setting: a command typed afterwards is recorded. Each
// shell writes its history file when it exits.
func TestRunCommandSuppressHistory(t *testing.T) {
	t.Parallel()
	type shellCase struct {
		name     string
		bin      string
		argv     func(dir string) []string
		histFile func(dir string) string
		want     bool // history_suppressed
	}
	zshrc := func(dir string, opts string) string {
		rc := "HISTFILE=" + dir + "/hist\nSAVEHIST=100\nHISTSIZE=100\nPS1='%% '\n" + opts
		if err := os.WriteFile(filepath.Join(dir, ".zshrc"), []byte(rc), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []shellCase{
		{"bash without ignorespace", "bash", func(dir string) []string {
			return []string{"env", "-u", "HISTCONTROL", "HISTFILE=" + dir + "/hist", "HISTSIZE=100", "HISTFILESIZE=100", "PS1=$ ", "bash", "--norc", "--noprofile"}
		}, func(dir string) string { return dir + "/hist" }, true},
		{"bash with ignorespace", "bash", func(dir string) []string {
			return []string{"env", "HISTCONTROL=ignorespace", "HISTFILE=" + dir + "/hist", "HISTSIZE=100", "HISTFILESIZE=100", "PS1=$ ", "bash", "--norc", "--noprofile"}
		}, func(dir string) string { return dir + "/hist" }, true},
		// With cmdhist off each typed line is an entry of its own; the
		// wrapper is one line, so its entry is deleted like any other.
		{"bash with cmdhist off", "bash", func(dir string) []string {
			if err := os.WriteFile(dir+"/rc", []byte("shopt -u cmdhist\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"env", "-u", "HISTCONTROL", "HISTFILE=" + dir + "/hist", "HISTSIZE=100", "HISTFILESIZE=100", "PS1=$ ", "bash", "--noprofile", "--rcfile", dir + "/rc"}
		}, func(dir string) string { return dir + "/hist" }, true},
		{"zsh with HIST_IGNORE_SPACE", "zsh", func(dir string) []string {
			return []string{"env", "ZDOTDIR=" + zshrc(dir, "setopt HIST_IGNORE_SPACE\n"), "zsh", "-d"}
		}, func(dir string) string { return dir + "/hist" }, true},
		{"zsh without HIST_IGNORE_SPACE", "zsh", func(dir string) []string {
			return []string{"env", "ZDOTDIR=" + zshrc(dir, ""), "zsh", "-d"}
		}, func(dir string) string { return dir + "/hist" }, false},
		{"fish", "fish", func(dir string) []string {
			// Not --no-config: that also turns history off. The universal
			// variable tells fish its first-run set-up (generating
			// completions from every man page) is done.
			if err := os.MkdirAll(dir+"/config/fish", 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir+"/config/fish/fish_variables", []byte("SETUVAR __fish_initialized:9999\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"env", "HOME=" + dir, "XDG_CONFIG_HOME=" + dir + "/config", "XDG_DATA_HOME=" + dir + "/data", "fish_greeting=", "fish"}
		}, func(dir string) string { return dir + "/data/fish/fish_history" }, true},
	}
	for _, sh := range cases {
		t.Run(sh.name, func(t *testing.T) {
			if _, err := exec.LookPath(sh.bin); err != nil {
				t.Skipf("%s is not installed (CI installs it)", sh.bin)
			}
			t.Parallel()
			e := newEnv(t)
			dir := t.TempDir()
			e.tmux.MustRun("set-option", "-g", "remain-on-exit", "on")
			e.tmux.MustRun(append([]string{"respawn-pane", "-k", "-t", "%0"}, sh.argv(dir)...)...)
			tmuxtest.WaitFor(t, 10*time.Second, func() bool {
				out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
				screen, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
				return out == sh.bin && strings.TrimSpace(screen) != ""
			})
			command := "echo secret-$((6*7))"
			if sh.bin == "fish" {
				command = "echo secret-(math 6 '*' 7)"
			}
			var r RunCommandResult
			e.ok("run_command", map[string]any{"pane_id": "%0", "command": command, "timeout": 15}, &r)
			if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != "secret-42" {
				t.Fatalf("%+v", r)
			}
			if r.HistorySuppressed == nil || *r.HistorySuppressed != sh.want {
				t.Errorf("history_suppressed = %v, want %v", r.HistorySuppressed, sh.want)
			}
			// Typed normally afterwards: recorded (no setting was changed).
			e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "echo later-typed"}, nil)
			waitScreen(t, e, "later-typed\n")
			e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "exit"}, nil)
			tmuxtest.WaitFor(t, 10*time.Second, func() bool {
				out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_dead}")
				return out == "1"
			})
			b, err := os.ReadFile(sh.histFile(dir))
			if err != nil {
				t.Fatalf("no history file: %v", err)
			}
			hist := string(b)
			if !strings.Contains(hist, "echo later-typed") {
				t.Errorf("a command typed after the run was not recorded:\n%s", hist)
			}
			leaked := strings.Contains(hist, "secret") || strings.Contains(hist, markerOSC) || strings.Contains(hist, "printf")
			if sh.want && leaked {
				t.Errorf("the run is in the history file:\n%s", hist)
			}
			if !sh.want && !leaked {
				t.Errorf("history_suppressed false, but the history holds no trace of the run:\n%s", hist)
			}
		})
	}
}

// A run_command whose caller went away (cancelled) is still dropped after
// runAbandon: its record goes, its watcher subscription is released and
// the pane takes run_command again.
func TestRunCancelledCallerAbandoned(t *testing.T) {
	old := runAbandon
	runAbandon = 300 * time.Millisecond
	defer func() { runAbandon = old }()
	e := shellEnv(t)
	c := e.srv.newCall()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.runCommand(ctx, runCommandArgs{Command: "sleep 30", PaneTarget: PaneTarget{PaneID: new("%0")}, Timeout: 10}); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		return e.srv.watch.Subscriptions() == 0 && e.srv.runs().inFlight(paneKey{"", tmux.Socket{Name: e.srv.cfg.SocketName}, "%0"}) == nil
	})
}

// Issue 10 item 11: after run_command "echo hi" the pane shows what a
// person typing it would see: the prompt with the command, its output, the
// next prompt. None of the wrapper, in any shell, whatever the width.
func TestRunCommandPaneShowsOnlyTheCommand(t *testing.T) {
	t.Parallel()
	fish, _ := exec.LookPath("fish")
	shells := []struct {
		name, bin string
		argv      func(dir string) []string
	}{
		{"sh", "sh", func(string) []string { return []string{"env", "PS1=$ ", "sh"} }},
		{"bash", "bash", func(string) []string { return []string{"env", "PS1=$ ", "bash", "--norc", "--noprofile"} }},
		{"zsh", "zsh", func(dir string) []string { return []string{"env", "ZDOTDIR=" + dir, "PS1=%% ", "zsh", "-f"} }},
		{"fish", "fish", func(dir string) []string {
			return []string{"env", "HOME=" + dir, "fish_greeting=", fish, "--no-config", "-C", "function fish_prompt; echo -n '> '; end"}
		}},
	}
	for _, sh := range shells {
		for _, width := range []int{80, 33} {
			t.Run(fmt.Sprintf("%s/%d", sh.name, width), func(t *testing.T) {
				if _, err := exec.LookPath(sh.bin); err != nil {
					t.Skipf("%s is not installed (CI installs it)", sh.bin)
				}
				t.Parallel()
				e := newEnv(t)
				e.tmux.MustRun("resize-window", "-t", "%0", "-x", fmt.Sprint(width), "-y", "24")
				e.tmux.MustRun(append([]string{"respawn-pane", "-k", "-t", "%0"}, sh.argv(t.TempDir())...)...)
				tmuxtest.WaitFor(t, 10*time.Second, func() bool {
					out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
					screen, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
					return out == sh.bin && strings.TrimSpace(screen) != ""
				})
				for _, suppress := range []bool{true, false} {
					var r RunCommandResult
					e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo hi", "timeout": 15, "suppress_history": suppress}, &r)
					if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != "hi" {
						t.Fatalf("%+v; the pane shows:\n%s", r, e.tmux.MustRun("capture-pane", "-p", "-J", "-t", "%0"))
					}
				}
				var screen string
				deadline := time.Now().Add(5 * time.Second)
				for { // the next prompt is drawn
					screen = e.tmux.MustRun("capture-pane", "-p", "-J", "-t", "%0")
					if strings.Count(screen, "\nhi\n") == 2 || time.Now().After(deadline) {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if strings.Contains(screen, markerOSC) || strings.Contains(screen, "printf") || strings.Count(screen, "echo hi") != 2 {
					t.Errorf("the pane shows:\n%s", screen)
				}
				for _, l := range strings.Split(screen, "\n") {
					if strings.Contains(l, "echo hi") && !strings.HasSuffix(strings.TrimRight(l, " "), " echo hi") {
						t.Errorf("command row %q, want the prompt then the command; the pane shows:\n%s", l, screen)
					}
				}
				// At the bottom of a full screen, the echo scrolls it; a
				// command longer than the width wraps.
				long := "echo " + strings.Repeat("z", 70) + "-$((6*7))"
				if sh.bin == "fish" {
					long = "echo " + strings.Repeat("z", 70) + "-(math 6 '*' 7)"
				}
				var r RunCommandResult
				e.ok("run_command", map[string]any{"pane_id": "%0", "command": "seq 1 30", "timeout": 15}, &r)
				e.ok("run_command", map[string]any{"pane_id": "%0", "command": long, "timeout": 15}, &r)
				if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != strings.Repeat("z", 70)+"-42" {
					t.Fatalf("%+v", r)
				}
				deadline = time.Now().Add(5 * time.Second)
				for {
					screen = e.tmux.MustRun("capture-pane", "-p", "-J", "-t", "%0")
					if strings.Contains(screen, "z-42\n") || time.Now().After(deadline) {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if strings.Contains(screen, markerOSC) || strings.Contains(screen, "printf") || strings.Count(screen, long) != 1 || !strings.Contains(screen, "\n30\n") {
					t.Errorf("the pane shows:\n%s", screen)
				}
			})
		}
	}
}

// Issue 10 item 11: the command is data to the wrapper, never its syntax:
// an unclosed quote fails as a syntax error and the run still ends; a
// lookalike end marker printed by the command does not end the run; and a
// fresh shell with nothing of ours defined (exec) runs the next command
// with its own status.
func TestRunCommandCannotBreakTheWrapper(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	var r RunCommandResult
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo 'open", "timeout": 5}, &r)
	if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus == 0 {
		t.Errorf("unclosed quote: %+v", r)
	}
	e.ok("run_command", map[string]any{"pane_id": "%0", "command": `printf '\033]7799;E;x;0\007'; echo after; exit 5 # "`, "timeout": 5}, &r)
	if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus != 5 || strings.Join(r.Output, "|") != "after" {
		t.Errorf("forged end marker: %+v", r)
	}
	for _, sh := range []string{"bash --norc --noprofile", "sh"} {
		typeKeys(e, "%0", "exec "+sh)
		tmuxtest.WaitFor(t, 5*time.Second, func() bool {
			out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
			return out == strings.Fields(sh)[0]
		})
		e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo fresh; (exit 6)", "timeout": 5}, &r)
		if r.TimedOut || r.ExitStatus == nil || *r.ExitStatus != 6 || strings.Join(r.Output, "|") != "fresh" {
			t.Errorf("after exec %s: %+v", sh, r)
		}
	}
}

// C-c stops the command and the run still ends in bash and zsh too (sh and
// fish are covered above): the outer subshell's trap keeps the shell from
// abandoning the end marker.
func TestRunCommandCtrlCInBashAndZsh(t *testing.T) {
	t.Parallel()
	for _, sh := range []struct {
		bin  string
		argv []string
	}{
		{"bash", []string{"env", "PS1=$ ", "bash", "--norc", "--noprofile"}},
		{"zsh", []string{"env", "PS1=%% ", "zsh", "-f"}},
	} {
		t.Run(sh.bin, func(t *testing.T) {
			if _, err := exec.LookPath(sh.bin); err != nil {
				t.Skipf("%s is not installed (CI installs it)", sh.bin)
			}
			t.Parallel()
			e := newEnv(t)
			e.tmux.MustRun(append([]string{"respawn-pane", "-k", "-t", "%0"}, sh.argv...)...)
			tmuxtest.WaitFor(t, 10*time.Second, func() bool {
				out, _ := e.tmux.Run("display-message", "-p", "-t", "%0", "#{pane_current_command}")
				screen, _ := e.tmux.Run("capture-pane", "-p", "-t", "%0")
				return out == sh.bin && strings.TrimSpace(screen) != ""
			})
			var r RunCommandResult
			e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo started; sleep 30", "timeout": 0.5}, &r)
			if r.RunID == nil || strings.Join(r.Output, "|") != "started" {
				t.Fatalf("%+v", r)
			}
			e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "C-c", "enter": false}, nil)
			var r2 RunCommandResult
			e.ok("wait_for_run", map[string]any{"run_id": *r.RunID, "timeout": 10}, &r2)
			if r2.TimedOut || r2.ExitStatus == nil || *r2.ExitStatus == 0 {
				t.Fatalf("after C-c: %+v", r2)
			}
			e.ok("run_command", map[string]any{"pane_id": "%0", "command": "echo next", "timeout": 10}, &r)
			if r.ExitStatus == nil || *r.ExitStatus != 0 || strings.Join(r.Output, "|") != "next" {
				t.Errorf("%+v", r)
			}
		})
	}
}
