package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// endBudget is how soon, after a session's end (DELETE) or its token's
// revocation (SIGHUP), the DELETE is answered and every call and stream
// the session held has ended (issue 21 items 1 and 2).
const endBudget = time.Second

// postAnswer is what a raw POST got: status, body, and when it ended.
type postAnswer struct {
	status int
	body   string
	at     time.Time
	err    error
}

// postAsync sends one JSON-RPC body to endpoint in the background.
func postAsync(endpoint, body string, hdr map[string]string) <-chan postAnswer {
	ch := make(chan postAnswer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- postAnswer{err: err, at: time.Now()}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- postAnswer{status: resp.StatusCode, body: string(b), at: time.Now(), err: err}
	}()
	return ch
}

// jsonrpcAnswer finds the JSON-RPC response with the given id in a POST's
// body (plain JSON or SSE events) and returns it, or fails.
func jsonrpcAnswer(t *testing.T, what string, a postAnswer, id int) map[string]any {
	t.Helper()
	if a.err != nil {
		t.Fatalf("%s: %v", what, a.err)
	}
	var datas []string
	if strings.HasPrefix(strings.TrimSpace(a.body), "{") {
		datas = []string{a.body}
	}
	for line := range strings.Lines(a.body) {
		if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
			datas = append(datas, d)
		}
	}
	for _, d := range datas {
		var m map[string]any
		if json.Unmarshal([]byte(d), &m) == nil && m["id"] == float64(id) && (m["result"] != nil || m["error"] != nil) {
			return m
		}
	}
	t.Fatalf("%s: HTTP %d with no JSON-RPC answer for id %d: %.500q", what, a.status, id, a.body)
	return nil
}

// waitAnswer waits for a's answer until deadline.
func waitAnswer(t *testing.T, what string, ch <-chan postAnswer, deadline time.Time) postAnswer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(time.Until(deadline)):
		t.Fatalf("%s: no answer within %v", what, endBudget)
		return postAnswer{}
	}
}

func deleteSession(t *testing.T, endpoint, token, sid string) (int, time.Duration) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, took
}

// TestHTTPDeleteEndsItsCalls: a DELETE of a session while two of its
// calls run (a 20 s wait_for_text, a run_command of a 30 s sleep) is
// answered at once, and each call ends at once with a JSON-RPC answer:
// what the wait saw so far, the run's output so far. On the parent commit
// the DELETE took 18.5 s (the SDK's Close waits for the calls) and each
// call got HTTP 200 with an empty body.
func TestHTTPDeleteEndsItsCalls(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	run := strings.TrimSpace(ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "sh"))
	d := startDaemon(t, ts)
	sid := rawSession(t, d, aliceToken)
	hdr := map[string]string{"Authorization": "Bearer " + aliceToken, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacyVersion}
	wait := postAsync(d.url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_for_text","arguments":{"pane_id":"%0","patterns":["never-printed-21"],"timeout":20}}}`, hdr)
	cmd := postAsync(d.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_command","arguments":{"pane_id":%q,"command":"echo started-21; sleep 30","timeout":20}}}`, run), hdr)
	// Both calls are waiting once the command has printed its line.
	waitUntil(t, "run_command's command started", 10*time.Second, func() bool {
		return strings.Contains(ts.MustRun("capture-pane", "-p", "-t", run), "\nstarted-21")
	})
	time.Sleep(200 * time.Millisecond)

	status, took := deleteSession(t, d.url, aliceToken, sid)
	deleted := time.Now()
	t.Logf("DELETE answered %d in %v", status, took.Round(time.Millisecond))
	if status != http.StatusNoContent || took > endBudget {
		t.Errorf("DELETE: %d after %v, want 204 within %v", status, took, endBudget)
	}
	deadline := deleted.Add(endBudget)
	w := waitAnswer(t, "wait_for_text", wait, deadline)
	t.Logf("wait_for_text answered %v after the DELETE: %.300s", w.at.Sub(deleted).Round(time.Millisecond), w.body)
	if m := jsonrpcAnswer(t, "wait_for_text", w, 7); m["result"] == nil || !strings.Contains(w.body, `"outcome":"timeout"`) {
		t.Errorf("wait_for_text: want what it saw so far (a result with its outcome), got %.300s", w.body)
	}
	c := waitAnswer(t, "run_command", cmd, deadline)
	t.Logf("run_command answered %v after the DELETE: %.300s", c.at.Sub(deleted).Round(time.Millisecond), c.body)
	if m := jsonrpcAnswer(t, "run_command", c, 8); m["result"] == nil || !strings.Contains(c.body, "started-21") {
		t.Errorf("run_command: want the output so far, got %.300s", c.body)
	}
	// The session is gone: a request naming it gets 404, and so does a
	// second DELETE.
	resp, body := rawPost(t, d, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, hdr)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request of the deleted session: %d %s", resp.StatusCode, body)
	}
	if status, _ := deleteSession(t, d.url, aliceToken, sid); status != http.StatusNotFound {
		t.Errorf("a second DELETE: %d, want 404", status)
	}
}

// sseStream reads a GET stream's events, recording when each arrived and
// when the stream ended.
type sseStream struct {
	mu     sync.Mutex
	events []time.Time
	data   []string
	ended  time.Time
	done   chan struct{}
}

func openGET(t *testing.T, endpoint, token, sid string) *sseStream {
	t.Helper()
	resp := getStream(t, context.Background(), endpoint, token, sid, "")
	s := &sseStream{done: make(chan struct{})}
	t.Cleanup(func() { resp.Body.Close() })
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				s.mu.Lock()
				s.events, s.data = append(s.events, time.Now()), append(s.data, d)
				s.mu.Unlock()
			}
		}
		s.mu.Lock()
		s.ended = time.Now()
		s.mu.Unlock()
	}()
	return s
}

// after counts the events that arrived after t.
func (s *sseStream) after(t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, at := range s.events {
		if at.After(t) {
			n++
		}
	}
	return n
}

// TestHTTPRevokeEndsItsCalls: when a token is removed from the tokens file
// and SIGHUP reloads it, what it held ends within a second: its session's
// running wait answers (a JSON-RPC answer, never an empty body), its
// 2026-07-28 call answers, and its GET stream ends and delivers nothing
// more while the pane it subscribed to keeps changing. On the parent
// commit the wait ran on for 18.5 s and got an empty 200, and the stream
// delivered 5 notifications after the revocation.
func TestHTTPRevokeEndsItsCalls(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
	dir := t.TempDir()
	keep, drop := newToken(), newToken()
	path := writeTokensFile(t, dir, []string{keep, drop}, []string{"keep", "drop"})
	h := startHTTPD(t, ts, []string{"--tokens-file", path})
	d := &daemon{url: h.Endpoint}
	sid := rawSession(t, d, drop)
	hdr := map[string]string{"Authorization": "Bearer " + drop, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacyVersion}
	if resp, body := rawPost(t, d, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"tmux://panes/%250/content"}}`, hdr); resp.StatusCode != 200 {
		t.Fatalf("subscribe: %d %s", resp.StatusCode, body)
	}
	stream := openGET(t, h.Endpoint, drop, sid)
	wait := postAsync(h.Endpoint, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait_for_text","arguments":{"pane_id":"%0","patterns":["never-printed-21"],"timeout":20}}}`, hdr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stateless, err := dialHTTPD(ctx, h, drop, statelessVersion, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stateless.Close()
	type result struct {
		res *mcp.CallToolResult
		err error
		at  time.Time
	}
	slc := make(chan result, 1)
	go func() {
		res, err := stateless.CallTool(ctx, &mcp.CallToolParams{Name: "wait_for_text", Arguments: waitArgs(20)})
		slc <- result{res, err, time.Now()}
	}()
	// The pane changes all along: its resources/updated notifications flow.
	ts.MustRun("send-keys", "-t", "%0", "while :; do date +%N; sleep 0.2; done", "Enter")
	waitUntil(t, "notifications on the GET stream", 10*time.Second, func() bool { return stream.after(time.Time{}) > 0 })

	writeTokensFile(t, dir, []string{keep}, []string{"keep"})
	sent := time.Now()
	sighup(t, h, `"msg":"tokens file reloaded"`)
	revoked := time.Now()
	deadline := sent.Add(endBudget)
	w := waitAnswer(t, "the session's wait", wait, deadline)
	t.Logf("the session's wait answered %v after SIGHUP: %d %.300s", w.at.Sub(sent).Round(time.Millisecond), w.status, w.body)
	jsonrpcAnswer(t, "the session's wait", w, 7)
	select {
	case r := <-slc:
		t.Logf("the 2026-07-28 wait answered %v after SIGHUP: %v %s", r.at.Sub(sent).Round(time.Millisecond), r.err, resultText(r.res))
		if r.err == nil && !r.res.IsError {
			t.Errorf("the revoked token's 2026-07-28 wait answered as if nothing happened: %s", resultText(r.res))
		}
	case <-time.After(time.Until(deadline)):
		t.Errorf("the revoked token's 2026-07-28 wait did not end within %v", endBudget)
	}
	select {
	case <-stream.done:
		t.Logf("the GET stream ended %v after SIGHUP", stream.ended.Sub(sent).Round(time.Millisecond))
	case <-time.After(time.Until(deadline)):
		t.Errorf("the GET stream is still open %v after SIGHUP", endBudget)
	}
	time.Sleep(time.Second) // the pane goes on changing
	if n := stream.after(revoked); n > 0 {
		t.Errorf("the GET stream delivered %d events after the revocation", n)
	}
	// The kept token is untouched.
	if kept, err := dialHTTPD(ctx, h, keep, legacyVersion, nil); err != nil {
		t.Errorf("the kept token: %v", err)
	} else {
		callOK(t, kept, "get_pane_info", map[string]any{"pane_id": "%0"})
		kept.Close()
	}
}
