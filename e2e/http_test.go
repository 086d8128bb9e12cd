package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Tokens of the HTTP tests' tokens file: two clients at the server's tier
// and a read-only one.
const (
	aliceToken  = "alice-0123456789abcdef"
	bobToken    = "bob-0123456789abcdef01"
	readerToken = "reader-0123456789abcde"
)

// daemon is the built binary serving HTTP on a free loopback port.
type daemon struct {
	url   string // http://127.0.0.1:PORT/mcp
	base  string // http://127.0.0.1:PORT
	cmd   *exec.Cmd
	audit string        // audit log file
	done  chan struct{} // closed when the process has exited
	err   error         // its exit error, once done

	mu     sync.Mutex
	stderr bytes.Buffer
}

func (d *daemon) logs() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stderr.String()
}

// startDaemon runs `tmux-mcp serve --http 127.0.0.1:0` with a tokens file
// holding alice, bob and reader (readonly), and extra arguments after
// serve. It returns once the daemon logged its URL.
func startDaemon(t *testing.T, ts *tmuxtest.Server, args ...string) *daemon {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	body := "# test tokens\n" + aliceToken + " alice\n" + bobToken + " bob mutating\n" + readerToken + " reader readonly\n"
	if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &daemon{audit: filepath.Join(dir, "audit.log"), done: make(chan struct{})}
	all := append([]string{"serve", "--http", "127.0.0.1:0", "--tokens-file", tokens}, args...) // a later --http wins
	d.cmd = exec.Command(binary, all...)
	d.cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin,
		"TMUX_MCP_AUDIT_LOG="+d.audit, "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			d.mu.Lock()
			d.stderr.WriteString(line + "\n")
			d.mu.Unlock()
			var rec struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving MCP over streamable HTTP" {
				urlc <- rec.URL
			}
		}
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	select {
	case d.url = <-urlc:
	case <-d.done:
		t.Fatalf("the daemon exited before serving: %v\n%s", d.err, d.logs())
	case <-time.After(15 * time.Second):
		t.Fatalf("the daemon did not start:\n%s", d.logs())
	}
	d.base = strings.TrimSuffix(d.url, "/mcp")
	t.Cleanup(func() {
		select {
		case <-d.done:
			return
		default:
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		start := time.Now()
		select {
		case <-d.done:
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("the daemon took %v to stop", el)
			}
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// bearer adds an Authorization header to every request of a client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func httpClient(token string) *http.Client {
	return &http.Client{Transport: bearer{token, http.DefaultTransport}}
}

// Protocol versions the Go SDK client is made to speak: the newest
// stateful one, and the stateless revision (its default).
const (
	legacyVersion    = "2025-11-25"
	statelessVersion = "2026-07-28"
)

// connect opens an SDK client session over HTTP with token, speaking
// version.
func (d *daemon) connect(t *testing.T, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: httpClient(token), MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-http-" + version, Version: "0"}, opts).
		Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v\n%s", version, err, d.logs())
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

// notes collects the notifications a client receives.
type notes struct {
	mu          sync.Mutex
	updated     []string
	listChanged int
	progress    int
}

func (n *notes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updated = append(n.updated, r.Params.URI)
			n.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			n.mu.Lock()
			n.listChanged++
			n.mu.Unlock()
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			n.progress++
			n.mu.Unlock()
		},
	}
}

func (n *notes) get() (updated []string, listChanged, progress int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.updated...), n.listChanged, n.progress
}

func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func callOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, resultText(res))
	}
	return res
}

func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
}

// TestHTTPBothGenerations: one daemon, one /mcp, a 2025-11-25 client
// (session, GET stream) and a 2026-07-28 client (stateless,
// subscriptions/listen) side by side; each lists and calls tools, reads a
// resource, gets a prompt, completes a value, gets progress during a wait,
// cancels a wait (the server's audit shows it ended at once), hears
// resources/updated for its subscription and list_changed when a session
// appears.
func TestHTTPBothGenerations(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	d := startDaemon(t, ts)
	for _, version := range []string{legacyVersion, statelessVersion} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var n notes
			cs := d.connect(t, aliceToken, version, n.options())

			tools := 0
			for _, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				tools++
			}
			if tools < 40 {
				t.Errorf("tools/list: %d tools", tools)
			}
			var panes struct {
				Result []struct {
					PaneID string `json:"pane_id"`
				} `json:"result"`
			}
			structured(t, callOK(t, cs, "list_panes", map[string]any{}), &panes)
			if len(panes.Result) == 0 {
				t.Fatalf("list_panes: none")
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tmux://panes/%250"})
			if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"pane_id": "%0"`) {
				t.Fatalf("resources/read: %v %+v", err, rr)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "run_and_wait", Arguments: map[string]string{"command": "ls", "pane_id": "%0"}}); err != nil {
				t.Errorf("prompts/get: %v", err)
			}
			comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tmux://panes/{pane_id}"},
				Argument: mcp.CompleteParamsArgument{Name: "pane_id", Value: "%"}})
			if err != nil || len(comp.Completion.Values) == 0 {
				t.Errorf("completion/complete: %v %+v", err, comp)
			}

			// Subscribe, then make the pane print: resources/updated arrives
			// (on the GET stream, or on subscriptions/listen).
			uri := "tmux://panes/%250/content"
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // the listen stream is opened in the background
			callOK(t, cs, "send_keys", map[string]any{"pane_id": "%0", "keys": "echo " + version})
			waitUntil(t, "resources/updated", 10*time.Second, func() bool {
				u, _, _ := n.get()
				return len(u) > 0
			})
			if u, _, _ := n.get(); u[0] != uri {
				t.Errorf("updated %v", u)
			}

			// list_changed: resources/list starts following tmux, a new
			// session changes the list.
			for _, err := range cs.Resources(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
			}
			callOK(t, cs, "create_session", map[string]any{"session_name": "gen-" + strings.ReplaceAll(version, "-", "")})
			waitUntil(t, "notifications/resources/list_changed", 10*time.Second, func() bool {
				_, lc, _ := n.get()
				return lc > 0
			})

			// Progress during a wait (every 5 s).
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_text", Meta: mcp.Meta{"progressToken": "p-" + version},
				Arguments: map[string]any{"pane_id": "%0", "patterns": []string{"never-printed-" + version}, "timeout": 5.6}})
			if err != nil || res.IsError {
				t.Fatalf("wait_for_text: %v %+v", err, res)
			}
			if _, _, p := n.get(); p == 0 {
				t.Errorf("no progress notification during a 5.6 s wait")
			}

			// Cancellation: the client gives up after 300 ms; the server's
			// handler ends at once (the audit record's duration), not at
			// the wait's 60 s.
			cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
			marker := "cancel-" + version
			_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "wait_for_text",
				Arguments: map[string]any{"pane_id": "%0", "patterns": []string{marker}, "timeout": 60}})
			ccancel()
			if err == nil {
				t.Fatalf("a cancelled call returned no error")
			}
			waitUntil(t, "the cancelled wait's audit record", 5*time.Second, func() bool {
				return auditDuration(d.audit, marker) > 0
			})
			if ms := auditDuration(d.audit, marker); ms > 3000 {
				t.Errorf("the cancelled wait ran %.0f ms on the server", ms)
			}
			callOK(t, cs, "get_pane_info", map[string]any{"pane_id": "%0"}) // still serving
		})
	}
}

// auditDuration finds the audit record of a wait_for_text whose patterns
// hold marker; it returns its duration in ms, 0 when there is none yet.
func auditDuration(path, marker string) float64 {
	for _, r := range auditRecords(path) {
		if r.Tool == "wait_for_text" && strings.Contains(string(r.Args), marker) {
			return r.DurationMS
		}
	}
	return 0
}

type auditRecord struct {
	Tool       string          `json:"tool"`
	Outcome    string          `json:"outcome"`
	ErrorType  string          `json:"error_type"`
	Client     string          `json:"client"`
	DurationMS float64         `json:"duration_ms"`
	Args       json.RawMessage `json:"args"`
}

func auditRecords(path string) []auditRecord {
	b, _ := os.ReadFile(path)
	var out []auditRecord
	for _, line := range bytes.Split(b, []byte("\n")) {
		var r auditRecord
		if json.Unmarshal(line, &r) == nil && r.Tool != "" {
			out = append(out, r)
		}
	}
	return out
}

// TestHTTPIsolation: a run_id belongs to the client (token and session)
// that made it; one client's unsubscribe does not stop another's
// notifications, and notifications go only to subscribed sessions.
func TestHTTPIsolation(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	d := startDaemon(t, ts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var na, nb, nc notes
	a := d.connect(t, aliceToken, legacyVersion, na.options())
	a2 := d.connect(t, aliceToken, legacyVersion, nil) // same token, another session
	b := d.connect(t, bobToken, legacyVersion, nb.options())
	c := d.connect(t, bobToken, statelessVersion, nc.options())

	// A run that times out: its run_id is alice's, in this session.
	var run struct {
		TimedOut bool    `json:"timed_out"`
		RunID    *string `json:"run_id"`
	}
	structured(t, callOK(t, a, "run_command", map[string]any{"pane_id": "%0", "command": "sleep 3", "timeout": 0.5}), &run)
	if !run.TimedOut || run.RunID == nil {
		t.Fatalf("run_command did not time out: %+v", run)
	}
	for name, other := range map[string]*mcp.ClientSession{"bob": b, "alice's other session": a2, "bob stateless": c} {
		res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_run", Arguments: map[string]any{"run_id": *run.RunID, "timeout": 1}})
		if err != nil || !res.IsError || !strings.Contains(resultText(res), "unknown run_id") {
			t.Errorf("%s collected alice's run: %v %s", name, err, resultText(res))
		}
	}
	var done struct {
		ExitStatus *int `json:"exit_status"`
	}
	structured(t, callOK(t, a, "wait_for_run", map[string]any{"run_id": *run.RunID, "timeout": 10}), &done)
	if done.ExitStatus == nil || *done.ExitStatus != 0 {
		t.Errorf("alice's own wait_for_run: %+v", done)
	}

	// Three subscribers to one pane; bob's legacy session unsubscribes and
	// the stateless client disconnects: alice still hears every change,
	// bob hears nothing more.
	uri := "tmux://panes/%250/content"
	for _, cs := range []*mcp.ClientSession{a, b, c} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond)
	callOK(t, a, "send_keys", map[string]any{"pane_id": "%0", "keys": "echo one"})
	waitUntil(t, "all three subscribers notified", 10*time.Second, func() bool {
		ua, _, _ := na.get()
		ub, _, _ := nb.get()
		uc, _, _ := nc.get()
		return len(ua) > 0 && len(ub) > 0 && len(uc) > 0
	})
	if err := b.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	time.Sleep(300 * time.Millisecond) // let notifications already on their way arrive
	ua, _, _ := na.get()
	ub, _, _ := nb.get()
	callOK(t, b, "send_keys", map[string]any{"pane_id": "%0", "keys": "echo two"})
	waitUntil(t, "alice notified after bob's unsubscribe", 10*time.Second, func() bool {
		u, _, _ := na.get()
		return len(u) > len(ua)
	})
	time.Sleep(500 * time.Millisecond)
	if u, _, _ := nb.get(); len(u) != len(ub) {
		t.Errorf("bob unsubscribed and still got %d notifications", len(u)-len(ub))
	}
	// Nobody subscribed: alice unsubscribes; the watch is gone, the
	// server keeps serving.
	if err := a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	callOK(t, a2, "get_pane_info", map[string]any{"pane_id": "%0"})
}

// rawPost sends one JSON-RPC body to /mcp with the given headers.
func rawPost(t *testing.T, d *daemon, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, d.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// rawSession initializes a stateful session with token and returns its id.
func rawSession(t *testing.T, d *daemon, token string) string {
	t.Helper()
	resp, body := rawPost(t, d, initBody, map[string]string{"Authorization": "Bearer " + token})
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	resp, body = rawPost(t, d, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": id, "Mcp-Protocol-Version": legacyVersion})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", resp.StatusCode, body)
	}
	return id
}

// TestHTTPSecurity: every kind of bad request gets its own status and a
// clear error, and the server goes on serving a well-behaved client.
func TestHTTPSecurity(t *testing.T) {
	ts := tmuxtest.New(t)
	// No short idle timeout here: on a loaded machine (CI's exec pass)
	// the cases below took more than 3 s between uses of one session,
	// which then expired under them. Expiry has its own daemon at the end.
	d := startDaemon(t, ts, "--max-sessions", "4", "--max-inflight", "2")
	good := d.connect(t, aliceToken, statelessVersion, nil) // stateless: takes no session place
	auth := map[string]string{"Authorization": "Bearer " + aliceToken}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Authorization": "Bearer " + aliceToken}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	sid := rawSession(t, d, aliceToken)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	cases := []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		want   string // in the body
		header string // a response header that must be set, "Name: value prefix"
	}{
		{"no token", initBody, nil, 401, "Authorization: Bearer", "Www-Authenticate: Bearer"},
		{"wrong token", initBody, map[string]string{"Authorization": "Bearer wrong-0123456789abcdef"}, 401, "not valid", "Www-Authenticate: Bearer"},
		{"not a bearer", initBody, map[string]string{"Authorization": "Basic YWxpY2U6eA=="}, 401, "Bearer", "Www-Authenticate: Bearer"},
		{"bad origin", initBody, with("Origin", "https://evil.example"), 403, "Origin not allowed", ""},
		{"rebinding host", initBody, with("Host", "evil.example:80"), 403, "does not name a loopback address", ""},
		{"oversized body", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`, auth, 413, "too large", ""},
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, auth, 400, "not valid JSON", ""},
		{"batch", "[" + list + "," + list + "]", with("Mcp-Session-Id", sid, "Mcp-Protocol-Version", legacyVersion), 400, "batching is not supported", ""},
		{"unknown session", list, with("Mcp-Session-Id", "NOSUCHSESSION", "Mcp-Protocol-Version", legacyVersion), 404, "Session not found", ""},
		{"another token's session", list, map[string]string{"Authorization": "Bearer " + bobToken, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacyVersion}, 403, "opened with another token", ""},
		{"allowed origin", list, with("Origin", d.base, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", legacyVersion), 200, "list_panes", ""},
	}
	for _, tc := range cases {
		resp, body := rawPost(t, d, tc.body, tc.hdr)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.200q, want %d with %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
		if tc.header != "" {
			k, v, _ := strings.Cut(tc.header, ": ")
			if !strings.HasPrefix(resp.Header.Get(k), v) {
				t.Errorf("%s: %s = %q", tc.name, k, resp.Header.Get(k))
			}
		}
		callOK(t, good, "get_pane_info", map[string]any{"pane_id": "%0"}) // the others are still served
	}

	// Too many requests in flight for one client: the third of three
	// concurrent calls on one session is refused with 429.
	slow := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait_for_text","arguments":{"pane_id":"%%0","patterns":["never"],"timeout":2}}}`
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, body := rawPost(t, d, fmt.Sprintf(slow, 3+i), with("Mcp-Session-Id", sid, "Mcp-Protocol-Version", legacyVersion))
			if resp.StatusCode != 200 || !strings.Contains(body, `"outcome":"timeout"`) {
				t.Errorf("a slow call: %d %.300s", resp.StatusCode, body)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	resp, body := rawPost(t, d, list, with("Mcp-Session-Id", sid, "Mcp-Protocol-Version", legacyVersion))
	if resp.StatusCode != 429 || !strings.Contains(body, "Too many requests in flight") {
		t.Errorf("third concurrent request: %d %s", resp.StatusCode, body)
	}
	callOK(t, good, "get_pane_info", map[string]any{"pane_id": "%0"}) // another client is not limited
	wg.Wait()

	// Too many sessions: 4 allowed, one is sid.
	var ids []string
	for range 3 {
		ids = append(ids, rawSession(t, d, bobToken))
	}
	resp, body = rawPost(t, d, initBody, auth)
	if resp.StatusCode != 429 || !strings.Contains(body, "Too many sessions") {
		t.Errorf("fifth session: %d %s", resp.StatusCode, body)
	}
	callOK(t, good, "get_pane_info", map[string]any{"pane_id": "%0"})
	// Ending one (DELETE) frees its place.
	req, _ := http.NewRequest(http.MethodDelete, d.url, nil)
	req.Header.Set("Authorization", "Bearer "+bobToken)
	req.Header.Set("Mcp-Session-Id", ids[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	waitUntil(t, "a session place freed by DELETE", 5*time.Second, func() bool {
		resp, _ := rawPost(t, d, initBody, auth)
		return resp.StatusCode == http.StatusOK
	})

	// A read-only token calling a mutating tool: refused, audited with the
	// token's name.
	reader := d.connect(t, readerToken, statelessVersion, nil)
	res, err := reader.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_keys", Arguments: map[string]any{"pane_id": "%0", "keys": "echo no"}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "limited to readonly") {
		t.Errorf("reader calling send_keys: %v %s", err, resultText(res))
	}
	callOK(t, reader, "get_pane_info", map[string]any{"pane_id": "%0"})
	refused := false
	for _, r := range auditRecords(d.audit) {
		if r.Tool == "send_keys" && r.Client == "reader" && r.Outcome == "error" {
			refused = true
		}
		if r.Client == "" {
			t.Errorf("audit record without the client's name: %+v", r)
		}
	}
	if !refused {
		t.Errorf("the refusal is not in the audit log")
	}

	// Expiry: a session idle past the timeout is gone (404), and its place
	// is free again (one place here).
	short := startDaemon(t, ts, "--max-sessions", "1", "--session-idle-timeout", "1s")
	idle := rawSession(t, short, aliceToken)
	time.Sleep(2 * time.Second)
	resp, body = rawPost(t, short, list, with("Mcp-Session-Id", idle, "Mcp-Protocol-Version", legacyVersion))
	if resp.StatusCode != 404 || !strings.Contains(body, "Session not found") {
		t.Errorf("expired session: %d %s", resp.StatusCode, body)
	}
	rawSession(t, short, aliceToken)

	// /healthz needs no token and says nothing about tmux.
	hresp, err := http.Get(d.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	var health map[string]any
	if hresp.StatusCode != 200 || json.Unmarshal(hb, &health) != nil || health["status"] != "ok" || len(health) != 2 {
		t.Errorf("/healthz: %d %s", hresp.StatusCode, hb)
	}
	// The request log names the client and never a token.
	logs := d.logs()
	for _, tok := range []string{aliceToken, bobToken, readerToken} {
		if strings.Contains(logs, tok) {
			t.Errorf("a token is in the log")
		}
	}
	if !strings.Contains(logs, `"client":"alice"`) || !strings.Contains(logs, `"method":"tools/call"`) {
		t.Errorf("request log lines lack client or method:\n%.2000s", logs)
	}
}

// TestHTTPShutdown: SIGTERM with a wait in flight: the wait answers with
// what it has, and the process exits 0 within 5 s.
func TestHTTPShutdown(t *testing.T) {
	ts := tmuxtest.New(t)
	d := startDaemon(t, ts)
	legacy := d.connect(t, aliceToken, legacyVersion, nil) // holds a GET stream open
	cs := d.connect(t, bobToken, statelessVersion, nil)
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_text",
			Arguments: map[string]any{"pane_id": "%0", "patterns": []string{"never"}, "timeout": 60}})
		got <- answer{res, err}
	}()
	callOK(t, legacy, "get_pane_info", map[string]any{"pane_id": "%0"})
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case a := <-got:
		if a.err != nil || a.res.IsError {
			t.Errorf("the wait in flight was not answered: %v %+v", a.err, a.res)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the wait in flight got no answer in 5 s")
	}
	select {
	case <-d.done:
		if d.err != nil {
			t.Errorf("exit: %v\n%s", d.err, d.logs())
		}
		t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("exited after %v", el)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after SIGTERM:\n%s", d.logs())
	}
}

// TestHTTPStartRefusals: configurations that must not be served stop
// start-up with exit status 2 and a clear message.
func TestHTTPStartRefusals(t *testing.T) {
	ts := tmuxtest.New(t)
	dir := t.TempDir()
	open := filepath.Join(dir, "open-tokens")
	_ = os.WriteFile(open, []byte(aliceToken+" alice\n"), 0o644)
	high := filepath.Join(dir, "high-tokens")
	_ = os.WriteFile(high, []byte(aliceToken+" alice destructive\n"), 0o600)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"non-loopback without TLS", []string{"--http", "0.0.0.0:0"}, "not a loopback address"},
		{"group/world-readable tokens file", []string{"--http", "127.0.0.1:0", "--tokens-file", open}, "readable by other users"},
		{"token tier above the server's", []string{"--http", "127.0.0.1:0", "--tokens-file", high}, "above the server's tier"},
		{"TLS half-configured", []string{"--http", "127.0.0.1:0", "--tls-cert", open}, "go together"},
	}
	for _, tc := range cases {
		cmd := exec.Command(binary, append([]string{"serve"}, tc.args...)...)
		cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin, "HOME="+dir, "XDG_CONFIG_HOME="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: %v\n%s", tc.name, err, stderr.String())
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct{ id, data string }

// getStream opens a 2025-11-25 session's GET event stream with token
// (resuming after lastID when set) and fails t unless it answers 200.
func getStream(t *testing.T, ctx context.Context, url, token, sid, lastID string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET stream: %d %s", resp.StatusCode, b)
	}
	return resp
}

// openStream opens the GET stream of a session (resuming after lastID when
// set) and delivers its events on the returned channel until ctx ends.
func openStream(t *testing.T, ctx context.Context, d *daemon, sid, lastID string) <-chan sseEvent {
	t.Helper()
	resp := getStream(t, ctx, d.url, aliceToken, sid, lastID)
	ch := make(chan sseEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id:"):
				ev.id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			case line == "":
				if ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			}
		}
	}()
	return ch
}

// nextUpdate waits for a resources/updated event on ch.
func nextUpdate(t *testing.T, ch <-chan sseEvent, what string) sseEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
			if strings.Contains(ev.data, "notifications/resources/updated") {
				return ev
			}
		case <-timeout:
			t.Fatalf("%s: no resources/updated in 10 s", what)
		}
	}
}

// TestHTTPResume: a 2025-11-25 session's GET stream carries
// resources/updated with event ids; a notification sent while the stream
// was down is replayed when the client comes back with Last-Event-ID.
func TestHTTPResume(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	d := startDaemon(t, ts)
	sid := rawSession(t, d, aliceToken)
	hdr := map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacyVersion}
	resp, body := rawPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"tmux://panes/%250/content"}}`, hdr)
	if resp.StatusCode != 200 || !strings.Contains(body, `"result"`) {
		t.Fatalf("subscribe: %d %s", resp.StatusCode, body)
	}
	ctx1, stop1 := context.WithCancel(context.Background())
	first := openStream(t, ctx1, d, sid, "")
	time.Sleep(200 * time.Millisecond)
	ts.MustRun("send-keys", "-t", "%0", "echo one", "Enter")
	ev := nextUpdate(t, first, "live stream")
	if ev.id == "" {
		t.Fatalf("the event has no id: %+v", ev)
	}
	stop1() // the connection drops
	time.Sleep(300 * time.Millisecond)
	ts.MustRun("send-keys", "-t", "%0", "echo two", "Enter") // notified while nobody listens
	time.Sleep(500 * time.Millisecond)
	ctx2, stop2 := context.WithCancel(context.Background())
	defer stop2()
	resumed := openStream(t, ctx2, d, sid, ev.id)
	if got := nextUpdate(t, resumed, "replay after Last-Event-ID"); got.id == ev.id {
		t.Errorf("replayed the event already seen: %s", got.id)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool trusting the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tmux-mcp test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestHTTPTLS: with --tls-cert/--tls-key the daemon serves HTTPS, and an
// SDK client trusting the certificate works; plain HTTP gets nothing.
func TestHTTPTLS(t *testing.T) {
	ts := tmuxtest.New(t)
	cert, key, pool := selfSigned(t)
	d := startDaemon(t, ts, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(d.url, "https://127.0.0.1:") {
		t.Fatalf("url %s", d.url)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tls", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: &http.Client{Transport: bearer{aliceToken, tr}}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callOK(t, cs, "get_pane_info", map[string]any{"pane_id": "%0"})
	resp, err := http.Get("http://" + strings.TrimPrefix(d.base, "https://") + "/healthz")
	if err == nil && resp.StatusCode == http.StatusOK {
		t.Errorf("plain HTTP answered on the TLS port")
	}
	if err == nil {
		resp.Body.Close()
	}
}

// TestHTTPInsecureRemote: a non-loopback bind without TLS starts only with
// --insecure-remote, and then warns; authentication stays on.
func TestHTTPInsecureRemote(t *testing.T) {
	ts := tmuxtest.New(t)
	d := startDaemon(t, ts, "--http", "0.0.0.0:0", "--insecure-remote")
	if !strings.Contains(d.logs(), `"level":"WARN","msg":"serving HTTP without TLS on a non-loopback address`) {
		t.Errorf("no warning:\n%s", d.logs())
	}
	port := d.url[strings.LastIndex(d.url, ":")+1:]
	resp, body := rawPost(t, &daemon{url: "http://127.0.0.1:" + port}, initBody, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %d %s", resp.StatusCode, body)
	}
}

// sighup signals the server and waits for want in its log.
func sighup(t *testing.T, h *httpd, want string) {
	t.Helper()
	from := h.log.Len()
	if err := h.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(h.log.String()[from:], want); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log after SIGHUP:\n%s", want, h.log.String()[from:])
		}
	}
}

// TestHTTPRotateGeneratedTokenOnSIGHUP: with neither a token nor a tokens
// file, deleting the generated token's file and sending SIGHUP makes a new
// token; the old one, and the session opened with it, stop working.
func TestHTTPRotateGeneratedTokenOnSIGHUP(t *testing.T) {
	ts := tmuxtest.New(t)
	cfgDir := t.TempDir()
	h := startHTTPD(t, ts, nil, "XDG_CONFIG_HOME="+cfgDir)
	path := filepath.Join(cfgDir, "tmux-mcp", "http-token")
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	old := read()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}}
	cs, err := dialHTTPD(ctx, h, old, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
		t.Fatalf("with the generated token: %v %v", err, res)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	sighup(t, h, `"msg":"tokens file reloaded"`)
	rotated := read()
	if rotated == old {
		t.Fatal("the token was not replaced")
	}
	if _, err := cs.CallTool(ctx, call); err == nil {
		t.Error("the old token's session still answers")
	}
	if _, err := dialHTTPD(ctx, h, old, "2025-11-25", nil); err == nil {
		t.Error("the old token still connects")
	}
	fresh, err := dialHTTPD(ctx, h, rotated, "2025-11-25", nil)
	if err != nil {
		t.Fatalf("the new token: %v", err)
	}
	defer fresh.Close()
	if res, err := fresh.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("with the new token: %v %v", err, res)
	}
}

// TestHTTPReloadTokensOnSIGHUP: the daemon reads --tokens-file again on
// SIGHUP. A removed token is refused from then on and its session is
// closed; a kept one goes on; a file made unsafe (readable by others) is
// not loaded, the tokens in use stay, and the daemon keeps serving.
func TestHTTPReloadTokensOnSIGHUP(t *testing.T) {
	ts := tmuxtest.New(t)
	dir := t.TempDir()
	keep, drop := newToken(), newToken()
	path := writeTokensFile(t, dir, []string{keep, drop}, []string{"keep", "drop"})
	h := startHTTPD(t, ts, []string{"--tokens-file", path})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call := &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}}
	kept, err := dialHTTPD(ctx, h, keep, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	dropped, err := dialHTTPD(ctx, h, drop, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dropped.Close()
	hup := func(want string) { t.Helper(); sighup(t, h, want) }

	writeTokensFile(t, dir, []string{keep}, []string{"keep"})
	hup(`"msg":"tokens file reloaded"`)
	if _, err := dialHTTPD(ctx, h, drop, "2025-11-25", nil); err == nil {
		t.Error("the removed token still connects")
	}
	if _, err := dropped.CallTool(ctx, call); err == nil {
		t.Error("the removed token's session still answers")
	}
	if res, err := kept.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("the kept token's session: %v %v", err, res)
	}

	// An unsafe file is refused; the tokens in use stay.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	hup("the tokens file was not reloaded")
	if res, err := kept.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("after a refused reload: %v %v", err, res)
	}
}
