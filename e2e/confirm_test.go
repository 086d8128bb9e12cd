package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Confirmation through elicitation (issue 23 item 2), driven through the
// built binary by the Go SDK's client on both protocol generations, over
// stdio and over HTTP: the person's answer (the client's elicitation
// handler) decides whether kill_session runs.

// confirmAnswerer is an elicitation handler that answers every question
// with answer ("" never answers: it waits until the question is
// withdrawn) and keeps what it was asked.
type confirmAnswerer struct {
	answer    string
	mu        sync.Mutex
	asked     []string
	withdrawn chan struct{}
}

func newConfirmAnswerer(answer string) *confirmAnswerer {
	return &confirmAnswerer{answer: answer, withdrawn: make(chan struct{}, 4)}
}

func (a *confirmAnswerer) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		a.mu.Lock()
		a.asked = append(a.asked, req.Params.Mode+": "+req.Params.Message)
		a.mu.Unlock()
		if a.answer == "" {
			select {
			case <-ctx.Done(): // the server withdrew the question
				a.withdrawn <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(10 * time.Second): // it never did: the test fails, and does not hang
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
		}
		return &mcp.ElicitResult{Action: a.answer}, nil
	}}
}

func (a *confirmAnswerer) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// victimSession starts session name on ts: a window waiting for input
// (cat) and one busy (sleep), both running before it returns.
func victimSession(t *testing.T, ts *tmuxtest.Server, name string) {
	t.Helper()
	ts.MustRun("new-session", "-d", "-s", name, "-n", "editor", "-x", "80", "-y", "24", "cat")
	ts.MustRun("new-window", "-d", "-t", name+":", "-n", "build", "sleep 1000")
	// Until both run and have settled: a program seen starting is
	// running (or not yet on its terminal), not yet waiting or sleeping.
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := ts.Run("list-panes", "-s", "-t", name+":", "-F", "#{pane_current_command} #{pane_pid} #{pane_tty}")
		if !strings.Contains(out, "cat") || !strings.Contains(out, "sleep") {
			return false
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

func sessionAlive(ts *tmuxtest.Server, name string) bool {
	_, err := ts.Run("has-session", "-t", "="+name)
	return err == nil
}

func errorType(res *mcp.CallToolResult) string {
	s, _ := res.Meta["error_type"].(string)
	return s
}

// confirmDial connects a client to the transport under test.
type confirmDial func(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession

// stdioDial starts the binary over stdio against ts with env.
func stdioDial(ts *tmuxtest.Server, env ...string) confirmDial {
	return func(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-confirm", Version: "0"}, opts).
			Connect(ctx, &mcp.CommandTransport{Command: serverCmd(ts, env...)}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		return cs
	}
}

// httpDial connects to h with token.
func httpDial(h *httpd, token string) confirmDial {
	return func(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cs, err := dialHTTPD(ctx, h, token, version, opts)
		if err != nil {
			t.Fatalf("connect (%s): %v\n%s", version, err, tail(h.log.String(), 2000))
		}
		t.Cleanup(func() { _ = cs.Close() })
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		return cs
	}
}

// TestConfirmGoClient: the Go SDK client over stdio and HTTP, on
// 2025-11-25 (elicitation/create) and 2026-07-28 (input requests), with a
// handler that accepts, declines or cancels; and a client without
// elicitation, unchanged by default and refused under --confirm.
func TestConfirmGoClient(t *testing.T) {
	ts := tmuxtest.New(t)
	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	token := newToken()
	h := startHTTPD(t, ts, []string{"--safety", "destructive"}, "TMUX_MCP_HTTP_TOKEN="+token)
	hStrict := startHTTPD(t, ts, []string{"--safety", "destructive", "--confirm", "destructive"}, "TMUX_MCP_HTTP_TOKEN="+token)
	transports := []struct {
		name           string
		dial, strict   confirmDial
		auditLog       func() string
		questionOnWire string
	}{
		{"stdio", stdioDial(ts, "TMUX_MCP_SAFETY=destructive", "TMUX_MCP_AUDIT_LOG="+auditLog),
			stdioDial(ts, "TMUX_MCP_SAFETY=destructive", "TMUX_MCP_CONFIRM=destructive"),
			func() string { b, _ := os.ReadFile(auditLog); return string(b) }, ""},
		{"http", httpDial(h, token), httpDial(hStrict, token), h.log.String, ""},
	}
	n := 0
	for _, tr := range transports {
		for _, version := range []string{legacyVersion, statelessVersion} {
			for _, answer := range []string{"accept", "decline", "cancel"} {
				t.Run(tr.name+"/"+version+"/"+answer, func(t *testing.T) {
					n++
					name := fmt.Sprintf("victim%d", n)
					victimSession(t, ts, name)
					a := newConfirmAnswerer(answer)
					cs := tr.dial(t, version, a.options())
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "kill_session", Arguments: map[string]any{"session_name": name}})
					if err != nil {
						t.Fatal(err)
					}
					qs := a.questions()
					if len(qs) != 1 {
						t.Fatalf("asked %d times: %q", len(qs), qs)
					}
					t.Logf("Go SDK client, %s, %s\nquestion as received (mode: message):\n%s\nanswer: %s\noutcome: isError=%v %s: %s",
						tr.name, version, qs[0], answer, res.IsError, errorType(res), resultText(res))
					for _, want := range []string{"form: tmux-mcp asks before an agent runs kill_session", `session "` + name + `"`,
						`window 0 "editor"`, "cat, waiting for input", `window 1 "build"`, "sleep, busy"} {
						if !strings.Contains(qs[0], want) {
							t.Errorf("question lacks %q", want)
						}
					}
					if killed := !sessionAlive(ts, name); killed != (answer == "accept") {
						t.Errorf("answer %s: session killed %v", answer, killed)
					}
					if answer != "accept" && errorType(res) != "ConfirmationDeclined" {
						t.Errorf("answer %s: error type %q", answer, errorType(res))
					}
					if log := tr.auditLog(); !strings.Contains(log, `"event":"confirm_question"`) || !strings.Contains(log, `"answer":"`+answer+`"`) {
						t.Errorf("the audit log lacks the question or the answer %q:\n%s", answer, tail(log, 2000))
					}
				})
			}
			t.Run(tr.name+"/"+version+"/no elicitation", func(t *testing.T) {
				n++
				name := fmt.Sprintf("victim%d", n)
				victimSession(t, ts, name)
				cs := tr.strict(t, version, nil)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "kill_session", Arguments: map[string]any{"session_name": name}})
				if err != nil || errorType(res) != "ConfirmationRequired" || !sessionAlive(ts, name) {
					t.Errorf("--confirm destructive, client without elicitation: %v %s %s; alive %v", err, errorType(res), resultText(res), sessionAlive(ts, name))
				}
				t.Logf("Go SDK client without elicitation, %s, %s, --confirm destructive: %s: %s", tr.name, version, errorType(res), resultText(res))
				cs = tr.dial(t, version, nil)
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "kill_session", Arguments: map[string]any{"session_name": name}})
				if err != nil || res.IsError || sessionAlive(ts, name) {
					t.Errorf("default, client without elicitation: %v %s; alive %v", err, resultText(res), sessionAlive(ts, name))
				}
			})
		}
	}
}

// TestConfirmForgedReplayedHTTP: over stateless HTTP (2026-07-28) each
// round of a confirmation is its own request; the request state ties the
// answer to the token that was asked and to the exact call, once. Another
// token presenting it, a made-up state, and a replay are all refused.
func TestConfirmForgedReplayedHTTP(t *testing.T) {
	ts := tmuxtest.New(t)
	victimSession(t, ts, "victim")
	dir := t.TempDir()
	alice, bob := newToken(), newToken()
	h := startHTTPD(t, ts, []string{"--safety", "destructive", "--tokens-file", writeTokensFile(t, dir, []string{alice, bob}, []string{"alice", "bob"})})
	manual := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}, ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return nil, fmt.Errorf("not asked by the client: the test answers by hand")
	}}
	as := httpDial(h, alice)(t, statelessVersion, manual)
	bs := httpDial(h, bob)(t, statelessVersion, manual)
	args := map[string]any{"session_name": "victim"}
	call := func(cs *mcp.ClientSession, state, answer string) *mcp.CallToolResult {
		t.Helper()
		p := &mcp.CallToolParams{Name: "kill_session", Arguments: args, RequestState: state}
		if answer != "" {
			p.InputResponses = mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: answer}}
		}
		res, err := cs.CallTool(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	refused := func(what string, res *mcp.CallToolResult) {
		t.Helper()
		if errorType(res) != "ConfirmationInvalid" || !sessionAlive(ts, "victim") {
			t.Errorf("%s: %s %s; alive %v", what, errorType(res), resultText(res), sessionAlive(ts, "victim"))
		}
		t.Logf("%s: refused: %s", what, resultText(res))
	}

	q := call(as, "", "")
	if !q.NeedsInput() || q.RequestState == "" || q.InputRequests["confirm"] == nil {
		t.Fatalf("want a question, got %s", resultText(q))
	}
	raw, _ := json.Marshal(q.InputRequests)
	t.Logf("alice's call answered with input requests %s and a request state of %d bytes", clip(string(raw), 400), len(q.RequestState))
	refused("bob presents alice's state", call(bs, q.RequestState, "accept"))
	refused("a made-up state", call(as, "tmux-mcp-confirm-1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "accept"))
	if res := call(as, q.RequestState, "accept"); res.IsError || sessionAlive(ts, "victim") {
		t.Fatalf("alice's own acceptance: %s", resultText(res))
	}
	ts.MustRun("new-session", "-d", "-s", "victim")
	refused("alice replays her acceptance", call(as, q.RequestState, "accept"))
	for _, want := range []string{`"answer":"forged"`, `"answer":"accept"`, `"answer":"replayed"`, `"client":"bob"`} {
		if !strings.Contains(h.log.String(), want) {
			t.Errorf("the audit log lacks %s", want)
		}
	}
}

// TestConfirmUnansweredHTTP: over HTTP on 2025-11-25 a question nobody
// answers is withdrawn after the wait ceiling (the client's handler sees
// its request cancelled) and the call is declined.
func TestConfirmUnansweredHTTP(t *testing.T) {
	ts := tmuxtest.New(t)
	victimSession(t, ts, "victim")
	token := newToken()
	h := startHTTPD(t, ts, []string{"--safety", "destructive", "--wait-max-seconds", "1"}, "TMUX_MCP_HTTP_TOKEN="+token)
	a := newConfirmAnswerer("")
	cs := httpDial(h, token)(t, legacyVersion, a.options())
	start := time.Now()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "kill_session", Arguments: map[string]any{"session_name": "victim"}})
	took := time.Since(start)
	if err != nil || errorType(res) != "ConfirmationDeclined" || !sessionAlive(ts, "victim") {
		t.Fatalf("unanswered: %v %s %s", err, errorType(res), resultText(res))
	}
	if took < 900*time.Millisecond || took > 6*time.Second {
		t.Errorf("answered after %v, want about the 1 s ceiling", took)
	}
	select {
	case <-a.withdrawn:
	case <-time.After(5 * time.Second):
		t.Error("the question was never withdrawn from the client")
	}
	t.Logf("unanswered for %v: %s", took.Round(time.Millisecond), resultText(res))
}
