package httpserve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// testIssuer signs ES256 JWTs with a key the test makes, published as a
// JWK Set file.
type testIssuer struct {
	key  *ecdsa.PrivateKey
	jwks string // file
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	pt, _ := key.PublicKey.Bytes() // 0x04 || X || Y
	set, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
		"x": b64(pt[1:33]), "y": b64(pt[33:65]),
	}}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, set, 0o600); err != nil {
		t.Fatal(err)
	}
	return &testIssuer{key: key, jwks: path}
}

func (is *testIssuer) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]string{"alg": "ES256", "typ": "JWT", "kid": "k1"})
	p, _ := json.Marshal(claims)
	input := b64(h) + "." + b64(p)
	sum := sha256.Sum256([]byte(input))
	r, s, err := ecdsa.Sign(rand.Reader, is.key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return input + "." + b64(sig)
}

// TestOAuth: with an issuer and a JWK Set configured, the daemon publishes
// RFC 9728 metadata, names it in its 401 challenge, accepts the issuer's
// JWTs for this audience only, maps their scopes to a tier (a read-only
// scope is refused a mutating tool, audited as oauth:<subject>), answers a
// token whose scopes grant nothing with 403 insufficient_scope, and keeps
// accepting static tokens.
func TestOAuth(t *testing.T) {
	is := newTestIssuer(t)
	const issuer = "https://issuer.example"
	var auditBuf bytes.Buffer
	srv, err := server.New(config.Config{Safety: config.Mutating, TmuxBin: "tmux", Engine: "exec"}, server.Options{Audit: audit.New(&auditBuf)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Safety: config.Mutating, HTTP: config.HTTP{
		Token: "static-token-0123456789", OAuthIssuer: issuer, OAuthJWKS: is.jwks,
		OAuthScopeTiers: map[string]config.Tier{"tmux:read": config.Readonly, "tmux:write": config.Mutating},
	}}
	ts, resource := serveCredentials(t, srv, cfg)

	resp, err := http.Get(ts.URL + "/.well-known/oauth-protected-resource" + Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if resp.StatusCode != 200 || meta.Resource != resource || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != issuer {
		t.Errorf("metadata: %d %+v", resp.StatusCode, meta)
	}

	now := time.Now().Unix()
	claims := func(sub, aud, scope string, exp int64) map[string]any {
		return map[string]any{"iss": issuer, "sub": sub, "aud": aud, "scope": scope, "exp": exp, "iat": now}
	}
	post := func(token string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	tests := []struct {
		name   string
		token  string
		status int
		chall  string // in WWW-Authenticate
	}{
		{"no token", "", 401, `resource_metadata="` + strings.TrimSuffix(ts.URL, "/") + "/.well-known/oauth-protected-resource/mcp\""},
		{"valid JWT", is.token(t, claims("alice", resource, "tmux:write", now+300)), 200, ""},
		{"another audience", is.token(t, claims("alice", "https://other.example/mcp", "tmux:write", now+300)), 401, `error="invalid_token"`},
		{"expired", is.token(t, claims("alice", resource, "tmux:write", now-600)), 401, `error="invalid_token"`},
		{"another issuer's key", newTestIssuer(t).token(t, claims("alice", resource, "tmux:write", now+300)), 401, `error="invalid_token"`},
		{"no tier in its scopes", is.token(t, claims("alice", resource, "email", now+300)), 403, `error="insufficient_scope"`},
		{"static token", "static-token-0123456789", 200, ""},
	}
	for _, tc := range tests {
		resp, body := post(tc.token)
		if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("WWW-Authenticate"), tc.chall) {
			t.Errorf("%s: %d %q (WWW-Authenticate %q), want %d with %q", tc.name, resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"), tc.status, tc.chall)
		}
	}

	// A read-only scope: the tools are listed, a mutating one is refused.
	reader := is.token(t, claims("bob", resource, "tmux:read", now+300))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "jwt", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: ts.URL + Endpoint, HTTPClient: &http.Client{Transport: bearerRT{token: reader}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_keys", Arguments: map[string]any{"pane_id": "%0", "keys": "x"}})
	if err != nil || !res.IsError {
		t.Fatalf("send_keys with a read-only scope: %v %+v", err, res)
	}
	if !strings.Contains(auditBuf.String(), `"client":"oauth:bob"`) {
		t.Errorf("audit: %s", auditBuf.String())
	}
}

// serveCredentials serves srv over HTTP with the credentials cfg names,
// for the listener's own URL: the server and the resource (the audience a
// token names) it answers as. The server stops when the test ends.
func serveCredentials(t *testing.T, srv *server.Server, cfg config.Config) (*httptest.Server, string) {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	resource := "http://" + hs.Listener.Addr().String() + Endpoint
	cr, err := LoadCredentials(context.Background(), cfg, resource, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Server: srv, Checkers: cr.Checkers, OAuthMetadata: cr.OAuthMetadata, ResourceMetadataURL: cr.ResourceMetadataURL})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = d.Handler()
	hs.Start()
	t.Cleanup(hs.Close)
	return hs, resource
}
