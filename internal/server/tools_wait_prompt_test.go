package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground/fgcorpus"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// turn is one exchange with a program: what is typed and what must come
// back.
type turn struct {
	keys   string
	output []string // exact rows; nil: see contains
	// contains: a row of the output must contain it (error messages vary
	// between versions).
	contains string
	prompt   string
}

// replCase is a program and a conversation with it.
type replCase struct {
	name    string
	program string
	command string
	turns   []turn
}

func replCases() []replCase {
	return []replCase{
		{"python3", "python3", "python3 -q", []turn{
			{keys: "1+1", output: []string{"2"}, prompt: ">>> "},
			{keys: "def f(x):\n    return x*2\n", output: []string{}, prompt: ">>> "},
			{keys: "f(21)", output: []string{"42"}, prompt: ">>> "},
			{keys: "print('a\\nb')", output: []string{"a", "b"}, prompt: ">>> "},
			{keys: "1/0", contains: "ZeroDivisionError: division by zero", prompt: ">>> "},
			{keys: "f(2)", output: []string{"4"}, prompt: ">>> "},
		}},
		{"node", "node", "env NODE_NO_READLINE= node", []turn{
			{keys: "1+1", output: []string{"2"}, prompt: "> "},
			{keys: "function f(x) {\nreturn x*2\n}", output: []string{"undefined"}, prompt: "> "},
			{keys: "f(21)", output: []string{"42"}, prompt: "> "},
			{keys: "null.x", contains: "TypeError", prompt: "> "},
			{keys: "[1,2].length", output: []string{"2"}, prompt: "> "},
		}},
		{"sqlite3", "sqlite3", "sqlite3", []turn{
			{keys: "select 1+1;", output: []string{"2"}, prompt: "sqlite> "},
			{keys: "create table t(a);", output: []string{}, prompt: "sqlite> "},
			{keys: "insert into t values (1),\n(2);", output: []string{}, prompt: "sqlite> "},
			{keys: "select sum(a) from t;", output: []string{"3"}, prompt: "sqlite> "},
			{keys: "select * from nosuch;", contains: "no such table", prompt: "sqlite> "},
		}},
		{"bc", "bc", "bc -q", []turn{
			{keys: "2+3", output: []string{"5"}, prompt: ""},
			{keys: "define f(x) {\nreturn (x*2)\n}", output: []string{}, prompt: ""},
			{keys: "f(21)", output: []string{"42"}, prompt: ""},
			{keys: "1/0", contains: "ivide by zero", prompt: ""},
		}},
		{"gdb", "gdb", "gdb -q -nx", []turn{
			{keys: "print 1+1", output: []string{"$1 = 2"}, prompt: "(gdb) "},
			{keys: "python\nprint(2+2)\nend", output: []string{"4"}, prompt: "(gdb) "},
			{keys: "print nosuch", contains: "No symbol", prompt: "(gdb) "},
			{keys: "print 6*7", output: []string{"$2 = 42"}, prompt: "(gdb) "},
		}},
	}
}

// TestSendAndWaitREPLs holds conversations with real REPLs, several turns
// each with a multi-line definition and an error, locally and through a
// remote host.
func TestSendAndWaitREPLs(t *testing.T) {
	for _, where := range []string{"local", "host"} {
		t.Run(where, func(t *testing.T) {
			var e *env
			var ts *tmuxtest.Server
			host := ""
			if where == "host" {
				he := newHostEnv(t)
				e, ts, host = he.env, he.box, "box"
			} else {
				e = newEnv(t)
				ts = e.tmux
			}
			for _, c := range replCases() {
				t.Run(c.name, func(t *testing.T) {
					fgcorpus.Require(t, c.program)
					e := e.with(t)
					pane := ts.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main", c.command)
					defer ts.Run("kill-window", "-t", pane)
					var ready WaitForPromptResult
					e.ok("wait_for_prompt", argsOnHost(map[string]any{"pane_id": pane, "timeout": 20}, host), &ready)
					if ready.Outcome != "waiting_for_input" {
						t.Fatalf("%s never waited for input: %+v", c.name, ready)
					}
					for _, tn := range c.turns {
						var r SendAndWaitResult
						e.ok("send_and_wait", argsOnHost(map[string]any{"pane_id": pane, "keys": tn.keys, "timeout": 20}, host), &r)
						if r.Outcome != "waiting_for_input" || r.Foreground.State != "waiting_for_input" {
							t.Fatalf("%q: outcome %s, foreground %+v", tn.keys, r.Outcome, r.Foreground)
						}
						if tn.output != nil && strings.Join(r.Output, "\n") != strings.Join(tn.output, "\n") {
							t.Errorf("%q: output %q, want %q (prompt %q)", tn.keys, r.Output, tn.output, r.Prompt)
						}
						if tn.contains != "" && !strings.Contains(strings.Join(r.Output, "\n"), tn.contains) {
							t.Errorf("%q: output %q does not contain %q", tn.keys, r.Output, tn.contains)
						}
						if r.Prompt != tn.prompt {
							t.Errorf("%q: prompt %q, want %q", tn.keys, r.Prompt, tn.prompt)
						}
						if r.LinesMissed || r.Cursor == "" {
							t.Errorf("%q: lines_missed %v, cursor %q", tn.keys, r.LinesMissed, r.Cursor)
						}
					}
				})
			}
		})
	}
}

func argsOnHost(args map[string]any, host string) map[string]any {
	if host != "" {
		args[HostArgName] = host
	}
	return args
}

// TestSendAndWaitPrompts: a y/n question and a name, then a passphrase
// prompt, which refuses input not marked secret and leaves no trace of
// input that is: not in the result, not in the audit log.
func TestSendAndWaitPrompts(t *testing.T) {
	e := newEnv(t)
	var log bytes.Buffer
	e.srv.audit = audit.New(&log)
	pane := e.tmux.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main",
		`bash --norc --noprofile -c 'read -p "Continue? [y/N] " a; echo "answer=$a"; read -p "Name: " n; echo "hello $n"; `+
			`read -s -p "Passphrase: " p; echo; echo "length ${#p}"; read -p "next> " x; sleep 60'`)
	var ready WaitForPromptResult
	e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "timeout": 10}, &ready)
	if ready.Outcome != "waiting_for_input" || len(ready.Tail) == 0 || ready.Tail[len(ready.Tail)-1] != "Continue? [y/N]" {
		t.Fatalf("the question: %+v", ready)
	}
	var r SendAndWaitResult
	e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": "y", "timeout": 10}, &r)
	if strings.Join(r.Output, "|") != "answer=y" || r.Prompt != "Name: " || r.Foreground.Secret {
		t.Fatalf("y: %+v", r)
	}
	e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": "Bob", "timeout": 10}, &r)
	if strings.Join(r.Output, "|") != "hello Bob" || r.Prompt != "Passphrase: " || !r.Foreground.Secret {
		t.Fatalf("Bob: %+v", r)
	}
	const pass = "correct-horse-battery"
	msg, _ := e.fail("send_and_wait", map[string]any{"pane_id": pane, "keys": pass, "timeout": 10})
	if !strings.Contains(msg, "password prompt") || !strings.Contains(msg, "secret=true") {
		t.Fatalf("typing into a passphrase prompt without secret: %s", msg)
	}
	res := e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": pass, "secret": true, "timeout": 10}, &r)
	if strings.Join(r.Output, "|") != "length 21" || r.Prompt != "next> " || r.Foreground.Secret {
		t.Fatalf("the passphrase: %+v", r)
	}
	if strings.Contains(text(res), pass) {
		t.Fatalf("the result holds the secret: %s", text(res))
	}
	if l := log.String(); strings.Contains(l, pass) || strings.Contains(l, audit.DigestOf(pass).SHA256Prefix) || !strings.Contains(l, audit.SecretMark) {
		t.Fatalf("the audit log keeps a trace of the secret:\n%s", l)
	}
	// secret=true where the terminal echoes: refused (it would show).
	msg, _ = e.fail("send_and_wait", map[string]any{"pane_id": pane, "keys": pass, "secret": true, "timeout": 10})
	if !strings.Contains(msg, "echoes") {
		t.Fatalf("secret into an echoing prompt: %s", msg)
	}
}

// TestSendAndWaitRefusesBusy: a program that is not reading the terminal
// gets no keystrokes unless force.
func TestSendAndWaitRefusesBusy(t *testing.T) {
	e := newEnv(t)
	pane := e.tmux.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main", "bash --norc --noprofile")
	waitShell(t, e.tmux, pane)
	var r SendAndWaitResult
	e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": "sleep 30", "until": "quiet", "quiet": 0.2, "timeout": 5}, &r)
	if r.Outcome != "quiet" || r.Foreground.State != "sleeping" || r.Foreground.Command != "sleep" {
		t.Fatalf("sleep 30: %+v", r)
	}
	msg, _ := e.fail("send_and_wait", map[string]any{"pane_id": pane, "keys": "echo hi", "timeout": 5})
	if !strings.Contains(msg, "is sleeping") || !strings.Contains(msg, "force=true") {
		t.Fatalf("typing into a sleeping program: %s", msg)
	}
	e.ok("send_and_wait", map[string]any{"pane_id": pane, "keys": "C-c", "enter": false, "force": true, "until": "exit", "timeout": 5}, &r)
	if r.Outcome != "exited" || r.Foreground.State != "waiting_for_input" {
		t.Fatalf("C-c with force: %+v", r)
	}
}

// TestWaitForPrompt: each until, the timeout, a program that prints,
// pauses and prints again before it reads (no early answer), and output in
// bursts further apart than quiet.
func TestWaitForPrompt(t *testing.T) {
	e := newEnv(t)
	newPane := func(cmd string) string {
		return e.tmux.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main", cmd)
	}
	t.Run("input, after a pause in the output", func(t *testing.T) {
		e := e.with(t)
		start := time.Now()
		pane := newPane(`bash --norc --noprofile -c 'echo first; sleep 1; echo second; read -p "ok? " x'`)
		var r WaitForPromptResult
		e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "timeout": 10}, &r)
		if r.Outcome != "waiting_for_input" || time.Since(start) < time.Second || strings.Join(r.Tail, "|") != "first|second|ok?" {
			t.Fatalf("after %v: %+v", time.Since(start), r)
		}
	})
	t.Run("quiet, with bursts further apart than quiet", func(t *testing.T) {
		e := e.with(t)
		pane := newPane(`bash --norc --noprofile -c 'for i in 1 2 3; do echo burst $i; sleep 0.4; done; sleep 60'`)
		start := time.Now()
		var r WaitForPromptResult
		e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "until": "quiet", "quiet": 0.3, "timeout": 10}, &r)
		if r.Outcome != "quiet" || r.Foreground.State != "sleeping" {
			t.Fatalf("%+v", r)
		}
		// The first burst's quiet is 0.4 s > 0.3 s: quiet then.
		if el := time.Since(start); el > 2*time.Second || len(r.Tail) == 0 {
			t.Fatalf("quiet after %v: %+v", el, r)
		}
		e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "until": "quiet", "quiet": 0.6, "timeout": 10}, &r)
		if r.Outcome != "quiet" || strings.Join(r.Tail, "|") != "burst 1|burst 2|burst 3" {
			t.Fatalf("quiet 0.6 must outlast every burst: %+v", r)
		}
	})
	t.Run("exit, the shell back at its prompt", func(t *testing.T) {
		e := e.with(t)
		pane := newPane("bash --norc --noprofile")
		waitShell(t, e.tmux, pane)
		e.tmux.MustRun("send-keys", "-t", pane, "sleep 1; echo done-$((6*7))", "Enter")
		start := time.Now()
		var r WaitForPromptResult
		e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "until": "exit", "timeout": 10}, &r)
		if r.Outcome != "exited" || time.Since(start) < 500*time.Millisecond || r.Foreground.Command != "bash" {
			t.Fatalf("after %v: %+v", time.Since(start), r)
		}
		if !strings.Contains(strings.Join(r.Tail, "\n"), "done-42") {
			t.Fatalf("tail %q", r.Tail)
		}
	})
	t.Run("exit, the pane's program ended", func(t *testing.T) {
		e := e.with(t)
		e.tmux.MustRun("set-option", "-g", "remain-on-exit", "on")
		defer e.tmux.MustRun("set-option", "-g", "remain-on-exit", "off")
		pane := newPane("sleep 1")
		var r WaitForPromptResult
		e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "until": "exit", "timeout": 10}, &r)
		if r.Outcome != "exited" || r.Foreground.State != "exited" {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		e := e.with(t)
		pane := newPane("sleep 30")
		start := time.Now()
		var r WaitForPromptResult
		e.ok("wait_for_prompt", map[string]any{"pane_id": pane, "timeout": 0.5}, &r)
		if r.Outcome != "timeout" || r.Foreground.State != "sleeping" || time.Since(start) > 3*time.Second || r.Cursor == "" {
			t.Fatalf("%+v", r)
		}
	})
}
