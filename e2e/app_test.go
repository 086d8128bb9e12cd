package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/server/app"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// appClientOptions declare the MCP Apps extension as a host that renders
// HTML views does.
func appClientOptions() *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(app.ExtensionID, map[string]any{"mimeTypes": []string{app.MIMEType}})
	return &mcp.ClientOptions{Capabilities: caps}
}

// TestAppStdio and TestAppHTTP: the built binary offers the pane view to
// a client that declares the extension and not to one that does not, over
// stdio (2026-07-28: capabilities in every request) and streamable HTTP
// (2025-11-25: capabilities at initialization).
func TestAppStdio(t *testing.T) {
	ts := tmuxtest.New(t)
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			dial := func(opts *mcp.ClientOptions) *mcp.ClientSession {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-app", Version: "0"}, opts).
					Connect(ctx, &mcp.CommandTransport{Command: serverCmd(ts)}, &mcp.ClientSessionOptions{ProtocolVersion: proto})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			checkAppOffer(t, proto, dial(appClientOptions()), dial(nil))
		})
	}
}

func TestAppHTTP(t *testing.T) {
	ts := tmuxtest.New(t)
	token := newToken()
	h := startHTTPD(t, ts, nil, "TMUX_MCP_HTTP_TOKEN="+token)
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			dial := func(opts *mcp.ClientOptions) *mcp.ClientSession {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				cs, err := dialHTTPD(ctx, h, token, proto, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			checkAppOffer(t, proto, dial(appClientOptions()), dial(nil))
		})
	}
}

func checkAppOffer(t *testing.T, proto string, apps, plain *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	if got := apps.InitializeResult().ProtocolVersion; got != proto {
		t.Errorf("negotiated %s, want %s", got, proto)
	}
	if _, ok := apps.InitializeResult().Capabilities.Extensions[app.ExtensionID]; !ok {
		t.Errorf("the server's capabilities for a declaring client lack %s: %+v", app.ExtensionID, apps.InitializeResult().Capabilities)
	}
	if ext := plain.InitializeResult().Capabilities.Extensions; ext != nil {
		t.Errorf("extensions offered to a client that declared none: %v", ext)
	}

	resources := func(cs *mcp.ClientSession) []*mcp.Resource {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Resources
	}
	isView := func(r *mcp.Resource) bool { return r.URI == app.PaneURI }
	if i := slices.IndexFunc(resources(apps), isView); i < 0 {
		t.Errorf("resources/list of a declaring client lacks %s", app.PaneURI)
	} else if r := resources(apps)[i]; r.MIMEType != app.MIMEType || r.Meta["ui"] == nil {
		t.Errorf("listed view %+v", r)
	}
	if slices.ContainsFunc(resources(plain), isView) {
		t.Errorf("resources/list of a client without the extension has %s", app.PaneURI)
	}

	tools := func(cs *mcp.ClientSession) map[string]*mcp.Tool {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*mcp.Tool{}
		for _, tool := range res.Tools {
			m[tool.Name] = tool
		}
		return m
	}
	withApp, without := tools(apps), tools(plain)
	for name, tool := range without {
		if tool.Meta["ui"] != nil || tool.Meta["ui/resourceUri"] != nil {
			t.Errorf("%s has _meta.ui for a client without the extension", name)
		}
	}
	for name, tool := range withApp {
		ui, _ := tool.Meta["ui"].(map[string]any)
		switch {
		case name == "capture_pane_image" && (ui == nil || ui["resourceUri"] != app.PaneURI):
			t.Errorf("capture_pane_image's _meta for a declaring client: %v", tool.Meta)
		case name != "capture_pane_image" && ui != nil:
			t.Errorf("%s names a view: %v", name, tool.Meta)
		}
	}
	if len(withApp) != len(without) {
		t.Errorf("%d tools for a declaring client, %d without", len(withApp), len(without))
	}

	for _, cs := range []*mcp.ClientSession{apps, plain} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: app.PaneURI})
		if err != nil {
			t.Fatalf("resources/read %s: %v", app.PaneURI, err)
		}
		c := res.Contents[0]
		raw, _ := json.Marshal(c.Meta)
		if c.MIMEType != app.MIMEType || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") || !strings.Contains(string(raw), `"csp":{"baseUriDomains":[],"connectDomains":[],"frameDomains":[],"resourceDomains":[]}`) {
			t.Errorf("read %s: mimeType %q, _meta %s, text %.40q", app.PaneURI, c.MIMEType, raw, c.Text)
		}
	}
	if withApp["capture_pane_image"] == nil {
		t.Error("capture_pane_image is not in a declaring client's tools/list")
	}
}
