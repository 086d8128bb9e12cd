package httpserve

import (
	"context"
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
	d.sessions.mu.Lock()
	live := len(d.sessions.live)
	d.sessions.mu.Unlock()
	if live != 1 {
		t.Errorf("%d live sessions, want carol's only", live)
	}
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
