package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server/app"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// appCaps are the capabilities of a client that renders MCP Apps, as the
// spec's example declares them.
func appCaps() *mcp.ClientCapabilities {
	c := &mcp.ClientCapabilities{}
	c.AddExtension(app.ExtensionID, map[string]any{"mimeTypes": []string{app.MIMEType}})
	return c
}

func TestDeclaresApps(t *testing.T) {
	ext := func(settings map[string]any) *mcp.ClientCapabilities {
		c := &mcp.ClientCapabilities{}
		c.AddExtension(app.ExtensionID, settings)
		return c
	}
	other := &mcp.ClientCapabilities{}
	other.AddExtension("io.modelcontextprotocol/tasks", map[string]any{"mimeTypes": []any{app.MIMEType}})
	for _, tc := range []struct {
		name string
		caps *mcp.ClientCapabilities
		want bool
	}{
		{"no capabilities", nil, false},
		{"no extensions", &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, false},
		{"another extension", other, false},
		{"no settings", ext(nil), false},
		{"no mimeTypes", ext(map[string]any{"features": []any{"x"}}), false},
		{"other MIME types", ext(map[string]any{"mimeTypes": []any{"text/html"}}), false},
		{"mimeTypes not a list", ext(map[string]any{"mimeTypes": app.MIMEType}), false},
		{"decoded from JSON", ext(map[string]any{"mimeTypes": []any{"text/uri-list", app.MIMEType}}), true},
		{"built in Go", ext(map[string]any{"mimeTypes": []string{app.MIMEType}}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := declaresApps(tc.caps); got != tc.want {
				t.Errorf("declaresApps = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLinkAppTool: the tool that opens the view gets _meta.ui on a copy;
// the SDK's own tool and every other tool are untouched, and _meta the
// tool already had is kept.
func TestLinkAppTool(t *testing.T) {
	img := &mcp.Tool{Name: appToolName, Meta: mcp.Meta{"x": 1.0, "ui": map[string]any{"visibility": []any{"model", "app"}}}}
	plain := &mcp.Tool{Name: "capture_pane"}
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{plain, img}}
	orig := res.Tools
	(&Server{}).linkAppTool(res)
	if res.Tools[0] != plain || plain.Meta != nil {
		t.Errorf("capture_pane changed: %+v", res.Tools[0])
	}
	if res.Tools[1] == img || orig[1] != img {
		t.Fatal("the listed tool was changed in place")
	}
	if _, ok := img.Meta["ui"].(map[string]any)["resourceUri"]; ok || img.Meta["ui/resourceUri"] != nil {
		t.Errorf("the SDK's tool got the link: %v", img.Meta)
	}
	got, _ := json.Marshal(res.Tools[1].Meta)
	want := `{"ui":{"resourceUri":"ui://tmux-mcp/pane","visibility":["model","app"]},"ui/resourceUri":"ui://tmux-mcp/pane","x":1}`
	if string(got) != want {
		t.Errorf("_meta %s\nwant  %s", got, want)
	}
	if res.CacheScope != "private" {
		t.Errorf("cacheScope %q: a decorated list must not be shared", res.CacheScope)
	}
	none := &mcp.ListToolsResult{Tools: []*mcp.Tool{plain}}
	(&Server{}).linkAppTool(none)
	if none.CacheScope != "" {
		t.Errorf("a list without the tool was marked %q", none.CacheScope)
	}
}

// rawResults records the raw bytes of every result a client reads, by the
// method of the request it answers: what went over the wire, before the
// client decodes it.
type rawResults struct {
	mu      sync.Mutex
	methods map[string]string
	results map[string][]byte
}

type rawTransport struct {
	mcp.Transport
	rec *rawResults
}

func (t rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rawConn{c, t.rec}, nil
}

type rawConn struct {
	mcp.Connection
	rec *rawResults
}

func (c *rawConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
		c.rec.mu.Lock()
		c.rec.methods[fmt.Sprint(r.ID.Raw())] = r.Method
		c.rec.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil {
		c.rec.mu.Lock()
		if method := c.rec.methods[fmt.Sprint(r.ID.Raw())]; method != "" {
			c.rec.results[method] = bytes.Clone(r.Result)
		}
		c.rec.mu.Unlock()
	}
	return m, err
}

func (r *rawResults) get(t *testing.T, method string) []byte {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.results[method]
	if b == nil {
		t.Fatalf("no %s result recorded", method)
	}
	return b
}

// appServer is a tmux-mcp server on ts; off serves as before the App.
func appServer(t *testing.T, ts *tmuxtest.Server, off bool) *Server {
	t.Helper()
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: config.DefaultWaitMax}
	srv, err := New(cfg, Options{Tmux: &tmux.Client{Runner: ts.Runner()}, Logger: slog.New(slog.DiscardHandler), ChildEnv: tmuxtest.CleanEnv()})
	if err != nil {
		t.Fatal(err)
	}
	srv.appOff = off
	t.Cleanup(srv.watch.CloseAll)
	return srv
}

// appSession connects a client of protocol version proto to srv, declaring
// the extension or not, and lists what a host lists at start.
func appSession(t *testing.T, srv *Server, proto string, declare bool) (*mcp.ClientSession, *rawResults) {
	t.Helper()
	ctx := context.Background()
	var opts *mcp.ClientOptions
	if declare {
		opts = &mcp.ClientOptions{Capabilities: appCaps()}
	}
	rec := &rawResults{methods: map[string]string{}, results: map[string][]byte{}}
	cs := connectClient(t, srv.MCP(), "app-test", opts, &mcp.ClientSessionOptions{ProtocolVersion: proto},
		func(ct mcp.Transport) mcp.Transport { return rawTransport{ct, rec} })
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return cs, rec
}

// handshake is the method that carries the server's capabilities.
func handshake(proto string) string {
	if proto == protoLegacy {
		return "initialize"
	}
	return "server/discover"
}

// TestAppOnlyForDeclaringClients: a client that does not declare the
// extension gets, byte for byte, the answers of a server without the App
// (initialize or server/discover, tools/list, resources/list and
// templates), on 2025-11-25 (capabilities at initialization) and
// 2026-07-28 (capabilities in each request). A declaring client gets the
// same plus the extension in the server's capabilities, the resource,
// and _meta.ui on capture_pane_image: nothing else differs.
func TestAppOnlyForDeclaringClients(t *testing.T) {
	ts := tmuxtest.New(t)
	before, after := appServer(t, ts, true), appServer(t, ts, false)
	for _, proto := range []string{protoLegacy, "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			_, was := appSession(t, before, proto, true) // declaring, to a server without the App
			_, plain := appSession(t, after, proto, false)
			_, apps := appSession(t, after, proto, true)
			for _, method := range []string{handshake(proto), "tools/list", "resources/list", "resources/templates/list"} {
				if a, b := plain.get(t, method), was.get(t, method); !bytes.Equal(a, b) {
					t.Errorf("%s of a client without the extension differs from before the App:\n%s\nbefore:\n%s", method, a, b)
				}
			}
			if bytes.Contains(plain.get(t, "tools/list"), []byte("ui://")) || bytes.Contains(plain.get(t, "resources/list"), []byte("ui://")) {
				t.Error("a client without the extension sees ui://")
			}

			// The server's capabilities name the extension for the declaring client only.
			var hs struct {
				Capabilities mcp.ServerCapabilities `json:"capabilities"`
			}
			if err := json.Unmarshal(apps.get(t, handshake(proto)), &hs); err != nil {
				t.Fatal(err)
			}
			if _, ok := hs.Capabilities.Extensions[app.ExtensionID]; !ok {
				t.Errorf("%s capabilities of a declaring client: %s", handshake(proto), apps.get(t, handshake(proto)))
			}
			if hs.Capabilities.Extensions = nil; !jsonEqual(t, hs.Capabilities, field(t, was.get(t, handshake(proto)), "capabilities")) {
				t.Errorf("capabilities differ beyond the extension: %s", apps.get(t, handshake(proto)))
			}

			// resources/list: the declaring client's list is the other's plus the view.
			var got, want struct{ Resources []map[string]any }
			_ = json.Unmarshal(apps.get(t, "resources/list"), &got)
			_ = json.Unmarshal(plain.get(t, "resources/list"), &want)
			i := slices.IndexFunc(got.Resources, func(r map[string]any) bool { return r["uri"] == app.PaneURI })
			if i < 0 {
				t.Fatalf("resources/list of a declaring client lacks %s: %s", app.PaneURI, apps.get(t, "resources/list"))
			}
			view := got.Resources[i]
			if view["mimeType"] != app.MIMEType || cspOf(view) == nil {
				t.Errorf("listed view %v: want mimeType %s and _meta.ui.csp", view, app.MIMEType)
			}
			if !jsonEqual(t, slices.Delete(got.Resources, i, i+1), want.Resources) {
				t.Errorf("resources/list differs beyond the view:\n%s\n%s", apps.get(t, "resources/list"), plain.get(t, "resources/list"))
			}

			// tools/list: only capture_pane_image differs, by its _meta.
			var gotT, wantT struct{ Tools []map[string]any }
			_ = json.Unmarshal(apps.get(t, "tools/list"), &gotT)
			_ = json.Unmarshal(plain.get(t, "tools/list"), &wantT)
			linked := 0
			for _, tool := range gotT.Tools {
				meta, _ := tool["_meta"].(map[string]any)
				ui, _ := meta["ui"].(map[string]any)
				if ui == nil {
					continue
				}
				linked++
				if tool["name"] != appToolName || ui["resourceUri"] != app.PaneURI || meta["ui/resourceUri"] != app.PaneURI {
					t.Errorf("tool %v has _meta %v", tool["name"], meta)
				}
				delete(meta, "ui")
				delete(meta, "ui/resourceUri")
				if len(meta) == 0 {
					delete(tool, "_meta")
				}
			}
			if !jsonEqual(t, gotT.Tools, wantT.Tools) {
				t.Error("tools/list of a declaring client differs beyond capture_pane_image's _meta.ui")
			}
			t.Run(appToolName, func(t *testing.T) {
				if after.tool(appToolName) == nil {
					t.Fatalf("%s is not in a declaring client's tools/list", appToolName)
				}
				if linked != 1 {
					t.Errorf("%d tools name the view in a declaring client's tools/list, want 1 (%s)", linked, appToolName)
				}
			})
		})
	}
}

// TestAppResourceRead: the view reads with the App MIME type and its CSP,
// for a declaring client and, as it is static and harmless, for any.
func TestAppResourceRead(t *testing.T) {
	ts := tmuxtest.New(t)
	srv := appServer(t, ts, false)
	for _, declare := range []bool{true, false} {
		for _, proto := range []string{protoLegacy, "2026-07-28"} {
			t.Run(fmt.Sprintf("%s/declare=%v", proto, declare), func(t *testing.T) {
				cs, rec := appSession(t, srv, proto, declare)
				res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: app.PaneURI})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Contents) != 1 {
					t.Fatalf("%d contents", len(res.Contents))
				}
				c := res.Contents[0]
				if c.URI != app.PaneURI || c.MIMEType != app.MIMEType || c.Text != app.PaneHTML() {
					t.Errorf("read %s: uri %q mimeType %q, %d bytes of text", app.PaneURI, c.URI, c.MIMEType, len(c.Text))
				}
				var raw struct{ Contents []map[string]any }
				_ = json.Unmarshal(rec.get(t, "resources/read"), &raw)
				csp := cspOf(raw.Contents[0])
				for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
					if v, ok := csp[k].([]any); !ok || len(v) != 0 {
						t.Errorf("_meta.ui.csp.%s = %v, want [] (no outside domain)", k, csp[k])
					}
				}
			})
		}
	}
}

func cspOf(entry map[string]any) map[string]any {
	meta, _ := entry["_meta"].(map[string]any)
	ui, _ := meta["ui"].(map[string]any)
	csp, _ := ui["csp"].(map[string]any)
	return csp
}

func field(t *testing.T, raw []byte, name string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// jsonEqual compares a and b as JSON values.
func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var x any
		_ = json.Unmarshal(raw, &x)
		out, _ := json.Marshal(x)
		return string(out)
	}
	return norm(a) == norm(b)
}

// TestAppHTMLSelfContained: the view is one HTML5 document that loads
// nothing and opens no connection (the CSP it declares allows none), and
// the one tool it calls is a read-only one.
func TestAppHTMLSelfContained(t *testing.T) {
	html := app.PaneHTML()
	if !strings.HasPrefix(html, "<!DOCTYPE html>") || !strings.Contains(html, "</html>") {
		t.Error("not an HTML5 document")
	}
	for _, tc := range []struct{ what, re string }{
		{"an absolute URL", `(?i)\b(https?|wss?|ftp):`},
		{"a protocol-relative URL", `(?i)(src|href|action)\s*=\s*["']?//`},
		{"a src or href attribute", `(?i)\s(src|href|srcset|poster|action|data)\s*=\s*["']`},
		{"a stylesheet or script from elsewhere", `(?i)<(link|iframe|object|embed|base|frame|form)\b`},
		{"CSS that loads", `(?i)(@import|url\s*\()`},
		{"a script that opens a connection", `\b(fetch|XMLHttpRequest|WebSocket|EventSource|sendBeacon|importScripts|Worker|SharedWorker)\s*\(|\bimport\s*\(|new\s+(WebSocket|EventSource|Worker|Image|Audio)\b`},
		{"a navigation", `\b(location\s*=|location\.(href|assign|replace)|window\.open\s*\()`},
		{"HTML written from data", `\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write)\b`},
	} {
		if m := regexp.MustCompile(tc.re).FindString(html); m != "" {
			t.Errorf("the view has %s: %q", tc.what, m)
		}
	}
	m := regexp.MustCompile(`const READ_TOOL = "([a-z_]+)";`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("the view names no READ_TOOL")
	}
	srv := appServer(t, tmuxtest.New(t), false)
	if tool := srv.tool(m[1]); tool == nil || tool.Tier != config.Readonly {
		t.Errorf("the view calls %s, which is not a read-only tool", m[1])
	}
	if n := strings.Count(html, `request("tools/call"`); n != 1 {
		t.Errorf("%d tools/call sites in the view, want the one that calls READ_TOOL", n)
	}
	for _, method := range regexp.MustCompile(`request\("([^"]+)"`).FindAllStringSubmatch(html, -1) {
		if !slices.Contains([]string{"ui/initialize", "tools/call"}, method[1]) {
			t.Errorf("the view sends %s", method[1])
		}
	}
	if strings.Contains(html, "resources/subscribe") {
		t.Error("the view subscribes")
	}
}
