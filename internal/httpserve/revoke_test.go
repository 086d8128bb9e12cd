package httpserve

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// TestRevokeEndsWhatOldTokensHold: after the tokens file is rewritten and
// reloaded, the clients of a removed or replaced token lose what they
// opened with it (alice's stateful session with its GET stream, bob's
// 2026-07-28 listen stream), their old token is refused, a replaced
// token's new value works, and a client whose token did not change (carol)
// keeps its session.
func TestRevokeEndsWhatOldTokensHold(t *testing.T) {
	const alice, alice2, bob, carol = "alice-token-aaaaaaaaaa", "alice-token-rotated-aa", "bob-token-bbbbbbbbbbbb", "carol-token-cccccccccc"
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(alice+" alice\n"+bob+" bob\n"+carol+" carol\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := OpenTokensFile(p, config.Mutating)
	if err != nil {
		t.Fatal(err)
	}
	d, hs, pane := churnDaemon(t, time.Minute, tf)
	ctx := context.Background()
	uri := "tmux://panes/" + strings.ReplaceAll(pane, "%", "%25") + "/content"
	call := &mcp.CallToolParams{Name: "get_pane_info", Arguments: map[string]any{"pane_id": pane}}
	connect := func(token, proto string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: hs.URL + Endpoint, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearerRT{token: token}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "revoke", Version: "0"}, nil).
			Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: proto})
		if err == nil {
			t.Cleanup(func() { _ = cs.Close() })
		}
		return cs, err
	}
	must := func(cs *mcp.ClientSession, err error) *mcp.ClientSession {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		return cs
	}
	a := must(connect(alice, "2025-11-25"))
	must(connect(bob, "2026-07-28"))
	c := must(connect(carol, "2025-11-25"))
	listening := func(name string) bool {
		d.listens.mu.Lock()
		defer d.listens.mu.Unlock()
		return len(d.listens.byName[name]) > 0
	}
	for deadline := time.Now().Add(5 * time.Second); !listening("bob"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("bob's client opened no subscriptions/listen stream")
		}
	}

	if err := os.WriteFile(p, []byte(alice2+" alice\n"+carol+" carol\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, err := tf.Reload()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(changed)
	if !slices.Equal(changed, []string{"alice", "bob"}) {
		t.Fatalf("changed = %v, want [alice bob]", changed)
	}
	if n := d.Revoke(changed); n != 2 {
		t.Errorf("Revoke ended %d sessions and streams, want 2 (alice's session, bob's listen stream)", n)
	}
	for deadline := time.Now().Add(5 * time.Second); listening("bob"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("bob's listen stream is still open")
		}
	}
	if _, err := a.CallTool(ctx, call); err == nil {
		t.Error("alice's session answered a call after her token was replaced")
	}
	if res, err := c.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("carol's session after the reload: %v %v; want it untouched", err, res)
	}
	// Ended sessions close once their calls have answered, in the
	// background.
	waitFor(t, "carol's the only live session", func() bool {
		d.sessions.mu.Lock()
		defer d.sessions.mu.Unlock()
		return len(d.sessions.live) == 1
	})
	for _, tok := range []string{alice, bob} {
		if _, err := connect(tok, "2025-11-25"); err == nil {
			t.Errorf("a revoked token (%.10s…) connected", tok)
		}
	}
	if cs, err := connect(alice2, "2025-11-25"); err != nil {
		t.Errorf("alice's new token: %v", err)
	} else if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
		t.Errorf("alice's new token calling: %v %v", err, res)
	}
}

// TestSessionEndReachesEveryCall: ending a session cancels its running
// calls with the cause, cuts off its GET streams, refuses its next POST,
// and cancels at once a call that registers after the end (one whose
// request got past the HTTP gate just before it); its drain channel closes
// when its last POST is answered. Calls of other sessions and of tokens
// without a session are untouched, and endNamed reaches the latter.
func TestSessionEndReachesEveryCall(t *testing.T) {
	tb := newSessionTable(4, nil)
	mk := func(name string) *sessionEntry {
		return &sessionEntry{name: name, calls: map[int]context.CancelCauseFunc{}, streams: map[int]*getStream{}}
	}
	e, other := mk("alice"), mk("alice")
	call := func(e *sessionEntry, name string) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		tb.addCall(e, name, cancel)
		return ctx
	}
	running, elsewhere, stateless := call(e, "alice"), call(other, "alice"), call(nil, "bob")
	sctx, scancel := context.WithCancel(context.Background())
	s := &getStream{cancel: scancel}
	if ok, _ := tb.addStream(e, s); !ok {
		t.Fatal("addStream refused a live session")
	}
	ok, endPost := tb.beginPost(e)
	if !ok {
		t.Fatal("beginPost refused a live session")
	}
	cause := errors.New("ended for the test")
	drained := tb.end(e, cause)
	if context.Cause(running) != cause {
		t.Errorf("running call: cause %v, want the session's end", context.Cause(running))
	}
	if sctx.Err() == nil || !s.off.Load() {
		t.Error("the GET stream was not cut off")
	}
	if late := call(e, "alice"); context.Cause(late) != cause {
		t.Errorf("a call registered after the end: cause %v", context.Cause(late))
	}
	if ok, _ := tb.beginPost(e); ok {
		t.Error("a POST of the ended session was let through")
	}
	select {
	case <-drained:
		t.Fatal("drained while a POST is still being answered")
	default:
	}
	endPost()
	select {
	case <-drained:
	case <-time.After(time.Second):
		t.Fatal("not drained after the last POST")
	}
	if elsewhere.Err() != nil || stateless.Err() != nil {
		t.Errorf("other calls ended: %v %v", elsewhere.Err(), stateless.Err())
	}
	tb.endNamed(map[string]bool{"bob": true}, errTokenRevoked)
	if context.Cause(stateless) != errTokenRevoked {
		t.Errorf("bob's call without a session: cause %v", context.Cause(stateless))
	}
}
