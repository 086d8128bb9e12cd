package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

func TestMetadataDocument(t *testing.T) {
	c := newClock()
	v := newVerifier(t, c, Config{ScopeTiers: map[string]config.Tier{
		"b:write": config.Mutating, "a:admin": config.Destructive, "z:read": config.Readonly, "a:read": config.Readonly,
	}}, allKeys()...)
	srv := httptest.NewServer(v.MetadataHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + v.MetadataPath())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	list := func(name string) []string {
		raw, _ := doc[name].([]any)
		var out []string
		for _, x := range raw {
			s, _ := x.(string)
			out = append(out, s)
		}
		return out
	}
	if doc["resource"] != testAudience {
		t.Errorf("resource = %v, want %s", doc["resource"], testAudience)
	}
	if got := list("authorization_servers"); !slices.Equal(got, []string{testIssuer}) {
		t.Errorf("authorization_servers = %q", got)
	}
	if got, want := list("scopes_supported"), []string{"a:read", "z:read", "b:write", "a:admin"}; !slices.Equal(got, want) {
		t.Errorf("scopes_supported = %q, want %q (by tier, then name)", got, want)
	}
	if got := list("bearer_methods_supported"); !slices.Equal(got, []string{"header"}) {
		t.Errorf("bearer_methods_supported = %q", got)
	}

	// Default scopes.
	d := newVerifier(t, c, Config{}, allKeys()...)
	if got, want := d.Metadata().ScopesSupported, []string{"tmux:read", "tmux:write", "tmux:admin"}; !slices.Equal(got, want) {
		t.Errorf("default scopes_supported = %q, want %q", got, want)
	}
	// Only GET (and the CORS preflight) are answered.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+v.MetadataPath(), nil)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST status %d", resp.StatusCode)
	}
}

func TestMetadataPath(t *testing.T) {
	c := newClock()
	tests := []struct{ audience, path, url string }{
		{"http://127.0.0.1:8765/mcp", "/.well-known/oauth-protected-resource/mcp", "http://127.0.0.1:8765/.well-known/oauth-protected-resource/mcp"},
		{"https://tmux.example/", "/.well-known/oauth-protected-resource", "https://tmux.example/.well-known/oauth-protected-resource"},
		{"https://tmux.example", "/.well-known/oauth-protected-resource", "https://tmux.example/.well-known/oauth-protected-resource"},
		{"https://tmux.example/team/a%20b/mcp", "/.well-known/oauth-protected-resource/team/a%20b/mcp", "https://tmux.example/.well-known/oauth-protected-resource/team/a%20b/mcp"},
	}
	for _, tt := range tests {
		v := newVerifier(t, c, Config{Audience: tt.audience}, allKeys()...)
		if got := v.MetadataPath(); got != tt.path {
			t.Errorf("%s: MetadataPath = %q, want %q", tt.audience, got, tt.path)
		}
		if got := v.ResourceMetadataURL(); got != tt.url {
			t.Errorf("%s: ResourceMetadataURL = %q, want %q", tt.audience, got, tt.url)
		}
		if got := v.Metadata().Resource; got != tt.audience {
			t.Errorf("%s: resource = %q", tt.audience, got)
		}
	}
}
