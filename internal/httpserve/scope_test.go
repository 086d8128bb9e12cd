package httpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestOAuthSessionScope: with --oauth-session-scope own, each OAuth
// subject sees only the sessions it created (marked oauth:SUBJECT), while
// the static token, with no scope of its own and no --scope, sees every
// session.
func TestOAuthSessionScope(t *testing.T) {
	tsrv := tmuxtest.New(t) // "main": the person's
	is := newTestIssuer(t)
	const issuer = "https://issuer.example"
	base := config.Config{Safety: config.Mutating, TmuxBin: tsrv.Bin, SocketName: tsrv.Socket.Name, Engine: "exec",
		WaitMax: config.DefaultWaitMax, SuppressHistory: true}
	srv, err := server.New(base, server.Options{ChildEnv: tmuxtest.CleanEnv()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := base
	cfg.HTTP = config.HTTP{Token: "static-token-0123456789", OAuthIssuer: issuer, OAuthJWKS: is.jwks, OAuthScope: "own",
		OAuthScopeTiers: map[string]config.Tier{"tmux:write": config.Mutating}}
	hs, resource := serveCredentials(t, srv, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := time.Now().Unix()
	dial := func(token string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "scope", Version: "0"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: hs.URL + Endpoint, HTTPClient: &http.Client{Transport: bearerRT{token: token}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	subject := func(sub string) *mcp.ClientSession {
		return dial(is.token(t, map[string]any{"iss": issuer, "sub": sub, "aud": resource, "scope": "tmux:write", "exp": now + 300, "iat": now}))
	}
	names := func(cs *mcp.ClientSession) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("list_sessions: %v %+v", err, res)
		}
		var rows []struct {
			SessionName string `json:"session_name"`
		}
		_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &rows)
		var out []string
		for _, r := range rows {
			out = append(out, r.SessionName)
		}
		return strings.Join(out, ",")
	}
	alice, bob, static := subject("alice"), subject("bob"), dial("static-token-0123456789")
	for cs, name := range map[*mcp.ClientSession]string{alice: "a", bob: "b"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_session", Arguments: map[string]any{"session_name": name}})
		if err != nil || res.IsError {
			t.Fatalf("create_session: %v %+v", err, res)
		}
	}
	for cs, want := range map[*mcp.ClientSession]string{alice: "a", bob: "b", static: "a,b,main"} {
		if got := names(cs); got != want {
			t.Errorf("sees %q, want %q", got, want)
		}
	}
	if got := strings.TrimSpace(tsrv.MustRun("show-options", "-t", "=a:", "-v", "@tmux-mcp-owner")); got != "oauth:alice" {
		t.Errorf("owner mark %q, want oauth:alice", got)
	}
}
