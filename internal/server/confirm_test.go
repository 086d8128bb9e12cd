package server

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The two protocol generations a client may speak: questions as
// elicitation/create requests (legacy) and as input requests (2026-07-28).
const (
	protoLegacy = "2025-11-25"
	protoMRTR   = "2026-07-28"
)

// syncBuf is an audit log the test reads while the server writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// records decodes the audit log.
func (s *syncBuf) records(t *testing.T) []audit.Record {
	t.Helper()
	var out []audit.Record
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// asker is a client's elicitation handler that answers every question with
// answer ("" blocks until the question is cancelled) and keeps them.
type asker struct {
	answer string
	mu     sync.Mutex
	asked  []string
	// cancelled reports that a question was withdrawn (its context ended
	// before an answer).
	cancelled chan struct{}
}

func newAsker(answer string) *asker { return &asker{answer: answer, cancelled: make(chan struct{}, 8)} }

func (a *asker) handle(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req.Params.Message)
	a.mu.Unlock()
	if req.Params.Mode != "form" {
		return nil, context.Canceled
	}
	if a.answer == "" {
		select {
		case <-ctx.Done(): // the server withdrew the question
			a.cancelled <- struct{}{}
			return nil, ctx.Err()
		case <-time.After(10 * time.Second): // it never did: the test fails, and does not hang
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
	}
	return &mcp.ElicitResult{Action: a.answer}, nil
}

func (a *asker) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// confirmEnv is newEnv with a client of the given protocol version whose
// options the test sets (an elicitation handler or none), and an audit
// log.
func confirmEnv(t *testing.T, ts *tmuxtest.Server, version string, copts *mcp.ClientOptions, cfgf func(*config.Config)) (*env, *syncBuf) {
	t.Helper()
	return confirmEnvHosts(t, ts, version, copts, cfgf, nil)
}

// confirmEnvHosts is confirmEnv with remote hosts (nil: none), which the
// server owns and closes.
func confirmEnvHosts(t *testing.T, ts *tmuxtest.Server, version string, copts *mcp.ClientOptions, cfgf func(*config.Config), hosts *remote.Set) (*env, *syncBuf) {
	t.Helper()
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: config.DefaultWaitMax, SuppressHistory: true}
	if cfgf != nil {
		cfgf(&cfg)
	}
	log := &syncBuf{}
	srv, err := New(cfg, Options{Tmux: &tmux.Client{Runner: testRunner(t, ts)}, ChildEnv: tmuxtest.CleanEnv(), Audit: audit.New(log), Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectClient(t, srv.MCP(), "confirm-test", copts, &mcp.ClientSessionOptions{ProtocolVersion: version}, nil)
	t.Cleanup(srv.watch.CloseAll)
	if hosts != nil {
		// Registered last, so it runs first: ssh and the remote clients end
		// before sshd and the tmux servers do.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Close(ctx)
		})
	}
	if got := cs.InitializeResult(); got != nil && got.ProtocolVersion != version && version == protoLegacy {
		t.Fatalf("negotiated %s, want %s", got.ProtocolVersion, version)
	}
	return &env{t: t, tmux: ts, srv: srv, cs: cs}, log
}

// victimWorld is a tmux server with session "main" and a session "victim"
// of two windows: "editor" waiting for input (cat reads the terminal) and
// "build" busy (sleep). It returns the victim's session id.
func victimWorld(t *testing.T) (*tmuxtest.Server, string) {
	ts := tmuxtest.New(t)
	id := ts.MustRun("new-session", "-d", "-P", "-F", "#{session_id}", "-s", "victim", "-n", "editor", "-x", "80", "-y", "24", "cat")
	ts.MustRun("new-window", "-d", "-t", "victim:", "-n", "build", "sleep 1000")
	return ts, id
}

func hasSession(ts *tmuxtest.Server, name string) bool {
	_, err := ts.Run("has-session", "-t", "="+name)
	return err == nil
}

func errType(res *mcp.CallToolResult) string {
	s, _ := res.Meta["error_type"].(string)
	return s
}

// waitPrograms waits until every pane of the session (or window, or
// pane) target runs one of want and has settled: the foreground
// inspection no longer sees it start (running, or not yet on its
// terminal), so the question names it in its steady state.
func waitPrograms(t *testing.T, ts *tmuxtest.Server, target string, want ...string) {
	t.Helper()
	tmuxWait(t, func() bool {
		out, _ := ts.Run("list-panes", "-s", "-t", target, "-F", "#{pane_current_command} #{pane_pid} #{pane_tty}")
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) != 3 {
				return false
			}
			pid, _ := strconv.Atoi(f[1])
			switch foreground.Inspect(foreground.Target{PanePID: pid, TTY: f[2]}, foreground.Options{}).State {
			case foreground.Running, foreground.Unknown:
				return false
			}
		}
		return true
	})
}

// TestConfirmKillSession: a client that declares elicitation is asked
// before kill_session by default, on both protocol generations, with a
// question naming the session, its windows, its panes and what runs in
// them; only accept kills it. Decline and cancel are ConfirmationDeclined.
func TestConfirmKillSession(t *testing.T) {
	for _, version := range []string{protoLegacy, protoMRTR} {
		for _, answer := range []string{"accept", "decline", "cancel"} {
			t.Run(version+"/"+answer, func(t *testing.T) {
				ts, id := victimWorld(t)
				waitPrograms(t, ts, "victim:", "cat", "sleep")
				a := newAsker(answer)
				e, log := confirmEnv(t, ts, version, &mcp.ClientOptions{ElicitationHandler: a.handle}, nil)
				res := e.call("kill_session", map[string]any{"session_name": "victim"})
				qs := a.questions()
				if len(qs) != 1 {
					t.Fatalf("asked %d times, want once: %q", len(qs), qs)
				}
				q := qs[0]
				t.Logf("transcript (%s): question:\n%s\nanswer: %s\noutcome: isError=%v %s", version, q, answer, res.IsError, text(res))
				for _, want := range []string{"kill_session", `"victim" (` + id, `window 0 "editor"`, `window 1 "build"`,
					"cat, waiting for input", "sleep, busy (sleeping", "socket name " + ts.Socket.Name} {
					if !strings.Contains(q, want) {
						t.Errorf("question lacks %q:\n%s", want, q)
					}
				}
				switch answer {
				case "accept":
					if res.IsError || hasSession(ts, "victim") {
						t.Errorf("accepted, yet: %s; session alive: %v", text(res), hasSession(ts, "victim"))
					}
				default:
					if errType(res) != typeConfirmDeclined || !hasSession(ts, "victim") {
						t.Errorf("%s: %s (%s); session alive: %v", answer, text(res), errType(res), hasSession(ts, "victim"))
					}
				}
				recs := log.records(t)
				var events []string
				for _, r := range recs {
					if r.Event != "" {
						events = append(events, r.Event+":"+r.Outcome)
					}
				}
				if want := "confirm_question:asked confirm_answer:" + answer; strings.Join(events, " ") != want {
					t.Errorf("audit events %v, want %s", events, want)
				}
			})
		}
	}
}

// TestConfirmWithoutElicitation: a client that cannot be asked keeps
// today's behaviour by default; with --confirm set it is refused
// (ConfirmationRequired), or served unasked with --confirm-fallback allow.
func TestConfirmWithoutElicitation(t *testing.T) {
	cases := []struct {
		name     string
		cfg      func(*config.Config)
		killed   bool
		wantType string
	}{
		{"default: unchanged", nil, true, ""},
		{"confirm set: refused", func(c *config.Config) { c.Confirm = config.ConfirmDestructive }, false, typeConfirmRequired},
		{"confirm set, fallback allow", func(c *config.Config) {
			c.Confirm, c.ConfirmFallbackAllow = config.ConfirmDestructive, true
		}, true, ""},
		{"confirm off", func(c *config.Config) { c.Confirm = config.ConfirmOff }, true, ""},
	}
	for _, version := range []string{protoLegacy, protoMRTR} {
		for _, tc := range cases {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				ts, _ := victimWorld(t)
				e, _ := confirmEnv(t, ts, version, nil, tc.cfg)
				res := e.call("kill_session", map[string]any{"session_name": "victim"})
				if killed := !hasSession(ts, "victim"); killed != tc.killed || errType(res) != tc.wantType {
					t.Errorf("killed %v (want %v), error type %q (want %q): %s", killed, tc.killed, errType(res), tc.wantType, text(res))
				}
				if tc.wantType != "" {
					t.Logf("refusal: %s", text(res))
				}
			})
		}
	}
}

// TestConfirmBatch: a batch with one destructive row asks once, listing
// every row; its rows then run unasked. A batch without a row that needs
// confirmation is not asked.
func TestConfirmBatch(t *testing.T) {
	for _, version := range []string{protoLegacy, protoMRTR} {
		t.Run(version, func(t *testing.T) {
			ts, _ := victimWorld(t)
			waitPrograms(t, ts, "victim:", "cat", "sleep")
			build := ts.MustRun("display-message", "-p", "-t", "victim:build", "#{window_id}")
			a := newAsker("accept")
			e, _ := confirmEnv(t, ts, version, &mcp.ClientOptions{ElicitationHandler: a.handle}, nil)
			res := e.call("call_destructive_tools_batch", map[string]any{"operations": []any{
				map[string]any{"tool": "list_panes", "arguments": map[string]any{}},
				map[string]any{"tool": "send_keys", "arguments": map[string]any{"pane_id": "%0", "keys": "echo batch-row-2"}},
				map[string]any{"tool": "kill_window", "arguments": map[string]any{"window_id": build}},
			}})
			qs := a.questions()
			if len(qs) != 1 {
				t.Fatalf("asked %d times, want once: %q", len(qs), qs)
			}
			var out ToolCallBatchResult
			raw, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(raw, &out)
			t.Logf("transcript (%s): question:\n%s\nanswer: accept\noutcome: %d rows succeeded, %d failed", version, qs[0], out.Succeeded, out.Failed)
			for _, want := range []string{"3 calls in order", "1. list_panes (read-only)", "2. send_keys: pane %0", `keys to type: "echo batch-row-2", then Enter`,
				"3. kill_window: kill window 1 \"build\" (" + build + `) of session "victim"`, "sleep, busy"} {
				if !strings.Contains(qs[0], want) {
					t.Errorf("question lacks %q:\n%s", want, qs[0])
				}
			}
			if res.IsError || out.Succeeded != 3 {
				t.Errorf("batch: %s", text(res))
			}
			if _, err := ts.Run("has-session", "-t", build); err == nil {
				t.Error("the accepted batch left the window")
			}

			e.call("call_destructive_tools_batch", map[string]any{"operations": []any{
				map[string]any{"tool": "list_panes", "arguments": map[string]any{}},
				map[string]any{"tool": "send_keys", "arguments": map[string]any{"pane_id": "%0", "keys": "echo no-question"}},
			}})
			if n := len(a.questions()); n != 1 {
				t.Errorf("a batch without a destructive row asked: %d questions", n)
			}
		})
	}
}

// TestConfirmDeclinedBatchRunsNothing: declined, no row of the batch runs.
func TestConfirmDeclinedBatchRunsNothing(t *testing.T) {
	ts, _ := victimWorld(t)
	a := newAsker("decline")
	e, _ := confirmEnv(t, ts, protoMRTR, &mcp.ClientOptions{ElicitationHandler: a.handle}, nil)
	res := e.call("call_destructive_tools_batch", map[string]any{"operations": []any{
		map[string]any{"tool": "rename_session", "arguments": map[string]any{"session_name": "main", "new_name": "renamed"}},
		map[string]any{"tool": "kill_session", "arguments": map[string]any{"session_name": "victim"}},
	}})
	if errType(res) != typeConfirmDeclined || !hasSession(ts, "main") || !hasSession(ts, "victim") {
		t.Errorf("declined batch: %s; main %v victim %v", text(res), hasSession(ts, "main"), hasSession(ts, "victim"))
	}
}

// mrtrCall is one 2026-07-28 call made by hand (the client's automatic
// retry is off), as a client that forges or replays answers would.
func mrtrCall(t *testing.T, cs *mcp.ClientSession, name string, args any, state string, answer string) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args, RequestState: state}
	if answer != "" {
		p.InputResponses = mcp.InputResponseMap{confirmInputKey: &mcp.ElicitResult{Action: answer}}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestConfirmForgedAndReplayed: on 2026-07-28 the request state binds the
// answer to the exact call and is spent by its first use: an acceptance
// with a made-up state, with none, for other arguments, after the wait
// ceiling, or a second time, kills nothing.
func TestConfirmForgedAndReplayed(t *testing.T) {
	ts, _ := victimWorld(t)
	ts.MustRun("new-session", "-d", "-s", "other")
	a := newAsker("accept")
	e, log := confirmEnv(t, ts, protoMRTR, &mcp.ClientOptions{ElicitationHandler: a.handle, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}},
		func(c *config.Config) { c.WaitMax = 1 })
	victim := map[string]any{"session_name": "victim"}
	ask := func(args any) (string, *mcp.ElicitParams) {
		res := mrtrCall(t, e.cs, "kill_session", args, "", "")
		if !res.NeedsInput() || res.RequestState == "" {
			t.Fatalf("want a question, got %s (isError %v)", text(res), res.IsError)
		}
		ep, _ := res.InputRequests[confirmInputKey].(*mcp.ElicitParams)
		if ep == nil || ep.Mode != "form" || !strings.Contains(ep.Message, `"victim"`) && !strings.Contains(ep.Message, `"other"`) {
			t.Fatalf("input requests %+v", res.InputRequests)
		}
		return res.RequestState, ep
	}
	refused := func(what string, res *mcp.CallToolResult, wantType string) {
		t.Helper()
		if !res.IsError || errType(res) != wantType || !hasSession(ts, "victim") || !hasSession(ts, "other") {
			t.Errorf("%s: %s (%s); victim %v other %v", what, text(res), errType(res), hasSession(ts, "victim"), hasSession(ts, "other"))
		}
		t.Logf("%s: %s", what, firstLine(text(res)))
	}

	state, _ := ask(victim)
	refused("forged state", mrtrCall(t, e.cs, "kill_session", victim, confirmStatePrefix+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "accept"), typeConfirmInvalid)
	refused("answer without a state", mrtrCall(t, e.cs, "kill_session", victim, "", "accept"), typeConfirmInvalid)
	refused("state of another call", mrtrCall(t, e.cs, "kill_session", map[string]any{"session_name": "other"}, state, "accept"), typeConfirmInvalid)
	refused("state already spent", mrtrCall(t, e.cs, "kill_session", victim, state, "accept"), typeConfirmInvalid)
	refused("state of another tool", mrtrCall(t, e.cs, "kill_window", map[string]any{"window_id": "@0"}, func() string { s, _ := ask(victim); return s }(), "accept"), typeConfirmInvalid)

	state, _ = ask(victim)
	refused("state without an answer", mrtrCall(t, e.cs, "kill_session", victim, state, ""), typeConfirmInvalid)

	state, _ = ask(victim)
	time.Sleep(1100 * time.Millisecond) // past the 1 s wait ceiling
	refused("answer after the wait ceiling", mrtrCall(t, e.cs, "kill_session", victim, state, "accept"), typeConfirmDeclined)

	state, _ = ask(victim)
	if res := mrtrCall(t, e.cs, "kill_session", victim, state, "accept"); res.IsError || hasSession(ts, "victim") {
		t.Fatalf("the genuine acceptance: %s", text(res))
	}
	ts.MustRun("new-session", "-d", "-s", "victim") // a new session of the same name
	refused("replayed acceptance", mrtrCall(t, e.cs, "kill_session", victim, state, "accept"), typeConfirmInvalid)

	var answers []string
	for _, r := range log.records(t) {
		if r.Event == "confirm_answer" {
			answers = append(answers, r.Answer)
		}
	}
	want := "forged forged mismatch replayed mismatch no_answer timeout accept replayed"
	if got := strings.Join(answers, " "); got != want {
		t.Errorf("audited answers %q, want %q", got, want)
	}
}

// TestConfirmUnanswered: a question nobody answers is cancelled after the
// wait ceiling (the client sees the request cancelled) and the call is
// ConfirmationDeclined.
func TestConfirmUnanswered(t *testing.T) {
	ts, _ := victimWorld(t)
	a := newAsker("")
	e, _ := confirmEnv(t, ts, protoLegacy, &mcp.ClientOptions{ElicitationHandler: a.handle}, func(c *config.Config) { c.WaitMax = 1 })
	start := time.Now()
	res := e.call("kill_session", map[string]any{"session_name": "victim"})
	took := time.Since(start)
	if errType(res) != typeConfirmDeclined || !hasSession(ts, "victim") || !strings.Contains(text(res), "did not answer") {
		t.Errorf("unanswered: %s (%s)", text(res), errType(res))
	}
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("answered after %v, want about the 1 s ceiling", took)
	}
	select {
	case <-a.cancelled:
	case <-time.After(5 * time.Second):
		t.Error("the client's question was never cancelled")
	}
}

// TestConfirmMutatingAndAudit: with --confirm mutating a mutating call asks
// too, and the question names the keys about to be typed. The audit log
// keeps the question and the answer with the keys digested; secret input
// (send_and_wait's secret: true) is in neither the question nor the log.
func TestConfirmMutatingAndAudit(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "cat")
	waitPrograms(t, ts, "main:", "cat")
	a := newAsker("accept")
	e, log := confirmEnv(t, ts, protoLegacy, &mcp.ClientOptions{ElicitationHandler: a.handle}, func(c *config.Config) { c.Confirm = config.ConfirmMutating })

	e.ok("list_panes", map[string]any{}, nil)
	if n := len(a.questions()); n != 0 {
		t.Fatalf("a read-only call asked")
	}
	e.ok("send_keys", map[string]any{"pane_id": "%0", "keys": "typed-hunter2", "enter": false}, nil)
	qs := a.questions()
	if len(qs) != 1 || !strings.Contains(qs[0], `keys to type: "typed-hunter2"`) || strings.Contains(qs[0], "then Enter") ||
		!strings.Contains(qs[0], "pane %0") || !strings.Contains(qs[0], "cat, waiting for input") {
		t.Fatalf("questions: %q", qs)
	}
	t.Logf("transcript: question:\n%s\nanswer: accept", qs[0])

	res := e.call("send_and_wait", map[string]any{"pane_id": "%0", "keys": "secret-swordfish", "secret": true, "timeout": 2})
	qs = a.questions()
	if len(qs) != 2 || strings.Contains(qs[1], "swordfish") || !strings.Contains(qs[1], "[secret input, not shown]") {
		t.Fatalf("secret question: %q", qs)
	}
	t.Logf("secret transcript: question:\n%s\nanswer: accept\noutcome: %s", qs[1], firstLine(text(res)))

	// Text bound for a pane at a password prompt is secret though not
	// marked so: shown to nobody, and the log keeps no digest of it.
	pw := ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "bash --norc --noprofile -c 'read -s x; sleep 100'")
	tmuxWait(t, func() bool {
		out, _ := ts.Run("display-message", "-p", "-t", pw, "#{pane_pid} #{pane_tty}")
		f := strings.Fields(out)
		if len(f) != 2 {
			return false
		}
		pid, _ := strconv.Atoi(f[0])
		r := foreground.Inspect(foreground.Target{PanePID: pid, TTY: f[1]}, foreground.Options{})
		return r.State == foreground.WaitingForInput && r.Secret
	})
	e.ok("send_keys", map[string]any{"pane_id": pw, "keys": "prompted-opensesame"}, nil)
	qs = a.questions()
	if len(qs) != 3 || strings.Contains(qs[2], "opensesame") || !strings.Contains(qs[2], "at a password prompt") || !strings.Contains(qs[2], "[secret input, not shown]") {
		t.Fatalf("password prompt question: %q", qs[len(qs)-1])
	}
	t.Logf("password prompt transcript: question:\n%s\nanswer: accept", qs[2])

	logText := log.String()
	for _, leak := range []string{"hunter2", "swordfish", "opensesame"} {
		if strings.Contains(logText, leak) {
			t.Errorf("the audit log holds %q:\n%s", leak, logText)
		}
	}
	var questions []audit.Record
	for _, r := range log.records(t) {
		if r.Event == "confirm_question" {
			questions = append(questions, r)
			if b, _ := json.Marshal(r); strings.Contains(string(b), audit.DigestOf("prompted-opensesame").SHA256Prefix) {
				t.Errorf("a question's record digests text typed at a password prompt: %s", b)
			}
		}
	}
	d := audit.DigestOf("typed-hunter2")
	if len(questions) != 3 || !strings.Contains(questions[0].Question, d.SHA256Prefix) || !strings.Contains(questions[1].Question, audit.SecretMark) ||
		!strings.Contains(questions[2].Question, audit.SecretMark) || questions[2].Args["keys"] != audit.SecretMark {
		t.Errorf("audited questions: %+v", questions)
	}
}

// TestConfirmStoreOwners: a state is spent only by the owner it was
// issued to; another owner presenting it learns nothing and spends nothing.
func TestConfirmStoreOwners(t *testing.T) {
	st := newConfirmStore()
	now := time.Now()
	state := st.put(&pendingConfirm{owner: "http:alice", tool: "kill_pane", asked: now, expires: now.Add(time.Minute)})
	if _, got := st.take(state, "http:bob", now); got != takeUnknown {
		t.Errorf("bob took alice's state: %v", got)
	}
	if p, got := st.take(state, "http:alice", now); got != takeOK || p.tool != "kill_pane" {
		t.Errorf("alice: %v %+v", got, p)
	}
	if _, got := st.take(state, "http:alice", now); got != takeSpent {
		t.Errorf("alice again: %v, want spent", got)
	}
	for i := range maxOpenConfirms + 10 {
		st.put(&pendingConfirm{owner: "x", asked: now.Add(time.Duration(i)), expires: now.Add(time.Minute)})
	}
	if len(st.open) > maxOpenConfirms {
		t.Errorf("%d open questions kept, cap %d", len(st.open), maxOpenConfirms)
	}
}

// TestConfirmRemoteHost: a call on a remote host (over ssh) is asked
// about as a local one, the panes' programs read on that host.
func TestConfirmRemoteHost(t *testing.T) {
	var extra []string
	if d := os.Getenv("TMUX_TMPDIR"); d != "" {
		extra = append(extra, "SetEnv TMUX_TMPDIR="+d)
	}
	s := sshtest.Start(t, extra...)
	box, _ := victimWorld(t)
	waitPrograms(t, box, "victim:", "cat", "sleep")
	local := tmuxtest.New(t)
	for _, tc := range []struct{ version, answer string }{{protoLegacy, "decline"}, {protoMRTR, "accept"}} {
		t.Run(tc.version+"/"+tc.answer, func(t *testing.T) {
			set, err := remote.NewSet([]remote.Spec{{Name: "box", Destination: sshtest.Alias, TmuxBin: box.Bin, Socket: box.Socket.Name}},
				remote.Options{SSHCommand: s.SSHCommand(), ConnectTimeout: 5 * time.Second, AliveInterval: time.Second,
					AliveCount: 3, StartTimeout: 10 * time.Second, Env: tmuxtest.CleanEnv()})
			if err != nil {
				t.Fatal(err)
			}
			a := newAsker(tc.answer)
			e, _ := confirmEnvHosts(t, local, tc.version, &mcp.ClientOptions{ElicitationHandler: a.handle}, nil, set)
			res := e.call("kill_session", map[string]any{"session_name": "victim", HostArgName: "box"})
			qs := a.questions()
			if len(qs) != 1 {
				t.Fatalf("asked %d times: %q (%s)", len(qs), qs, text(res))
			}
			t.Logf("transcript (%s, host box): question:\n%s\nanswer: %s\noutcome: %s", tc.version, qs[0], tc.answer, firstLine(text(res)))
			for _, want := range []string{"on host box", `kill session "victim"`, "cat, waiting for input", "sleep, busy"} {
				if !strings.Contains(qs[0], want) {
					t.Errorf("question lacks %q", want)
				}
			}
			if killed := !hasSession(box, "victim"); killed != (tc.answer == "accept") {
				t.Errorf("answer %s: killed %v: %s", tc.answer, killed, text(res))
			}
		})
	}
}

// TestConfirmQuestions: what each kind of call is described as. Every
// question is declined, so the world stays as it is.
func TestConfirmQuestions(t *testing.T) {
	ts, _ := victimWorld(t)
	waitPrograms(t, ts, "victim:", "cat", "sleep")
	a := newAsker("decline")
	e, _ := confirmEnv(t, ts, protoLegacy, &mcp.ClientOptions{ElicitationHandler: a.handle}, func(c *config.Config) { c.Confirm = config.ConfirmMutating })
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"kill_pane", map[string]any{"pane_id": "%2"}, []string{`kill_pane: kill pane %2 in window 1 "build" (@2) of session "victim" ($1): sleep, busy`}},
		{"kill_window", map[string]any{"window_id": "@1"}, []string{`kill_window: kill window 0 "editor" (@1) of session "victim" ($1) and its 1 pane: %1 cat, waiting for input`}},
		{"kill_server", map[string]any{}, []string{"kill_server: kill the tmux server and all its sessions (2 sessions):", `session "main" ($0), 1 window:`,
			`session "victim" ($1), 2 windows:`, `    window 1 "build" (@2): %2 sleep, busy`}},
		{"kill_session", map[string]any{"session_name": "nosuch"}, []string{`kill session "nosuch": no such session on this server, so the call will fail`}},
		{"swap_pane", map[string]any{"source_pane_id": "%1", "target_pane_id": "%2"}, []string{"swap_pane:", "  swap pane %1 in window 0", "  with pane %2 in window 1"}},
		{"send_keys_batch", map[string]any{"operations": []any{
			map[string]any{"pane_id": "%1", "keys": "first"},
			map[string]any{"window_id": "@2", "keys": "C-c", "enter": false},
		}}, []string{"send_keys_batch: keys into 2 panes, in order:", `1) pane %1 in window 0 "editor"`, `; keys to type: "first", then Enter`,
			`2) pane %2 (the first of window @2) in window 1 "build"`, `; keys to type: "C-c"` + "\n"}},
		{"rename_session", map[string]any{"session_name": "victim", "new_name": "renamed"}, []string{`rename_session: session "victim" ($1) and its 2 windows:`, `other arguments: new_name="renamed"`}},
		{"set_environment", map[string]any{"name": "TOKEN", "value": "s3cret-value"}, []string{"set_environment", `value="s3cret-value"`}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			before := len(a.questions())
			res := e.call(tc.tool, tc.args)
			qs := a.questions()
			if len(qs) != before+1 || errType(res) != typeConfirmDeclined {
				t.Fatalf("asked %d times, error type %q: %s", len(qs)-before, errType(res), text(res))
			}
			q := qs[len(qs)-1]
			for _, w := range tc.want {
				if !strings.Contains(q+"\n", w) {
					t.Errorf("question lacks %q:\n%s", w, q)
				}
			}
		})
	}
	if !hasSession(ts, "victim") || !hasSession(ts, "main") {
		t.Error("a declined call changed the world")
	}
	t.Run("no server", func(t *testing.T) {
		ts.Kill()
		res := e.call("kill_server", map[string]any{})
		qs := a.questions()
		if errType(res) != typeConfirmDeclined || !strings.Contains(qs[len(qs)-1], "no tmux server runs on this socket") {
			t.Errorf("%s: %q", text(res), qs[len(qs)-1])
		}
	})
}
