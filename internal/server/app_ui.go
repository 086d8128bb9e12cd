package server

import (
	"context"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/server/app"
)

// The live pane view, an MCP App (internal/server/app): the resource
// ui://tmux-mcp/pane and, on the tool that opens it, _meta.ui.resourceUri.
// Hosts open an App's view for every result of a tool that names one, so
// only capture_pane_image names it: a person who asked for a picture of a
// pane gets the pane live, and no text tool's answer grows a frame.
//
// A client sees the App only when it declares the extension
// (capabilities.extensions["io.modelcontextprotocol/ui"] with the App MIME
// type in mimeTypes: per request on 2026-07-28, at initialization
// before). For every other client initialize, tools/list and
// resources/list are byte for byte what they were before the App existed:
// the entries are added to the SDK's answers by appUI, never registered
// with the SDK. The answers that differ are marked cacheScope "private",
// so that no shared cache serves them to a client that did not ask.
//
// resources/read of ui://tmux-mcp/pane answers every client: the page is
// static, holds no tmux data and does nothing by being read, and a host
// that renders the view reads it through whichever client it has (the
// spec lets hosts prefetch and cache it); hiding it would protect nothing
// and only break a host that read it before it listed.

// appToolName is the tool whose results open the pane view.
const appToolName = "capture_pane_image"

// declaresApps reports whether a client's capabilities declare the MCP
// Apps extension for the HTML views we serve. The spec requires the
// mimeTypes setting and says a host supports the HTML profile only when
// it lists it.
func declaresApps(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	settings, ok := caps.Extensions[app.ExtensionID].(map[string]any)
	if !ok {
		return false
	}
	switch types := settings["mimeTypes"].(type) {
	case []any:
		return slices.Contains(types, any(app.MIMEType))
	case []string:
		return slices.Contains(types, app.MIMEType)
	}
	return false
}

// requestDeclaresApps is declaresApps for the client making req. An
// initialize request carries its capabilities in its params; every other
// request answers through ClientCapabilities (its _meta on 2026-07-28,
// the session's initialization before).
func requestDeclaresApps(req mcp.Request) bool {
	switch r := req.(type) {
	case *mcp.ServerRequest[*mcp.InitializeParams]:
		return r.Params != nil && declaresApps(r.Params.Capabilities)
	case interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}:
		return declaresApps(r.ClientCapabilities())
	}
	return false
}

// appUIMeta is the pane view's _meta.ui: no outside domain for anything
// (the page is self-contained), and a border around it.
func appUIMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{
		"csp": map[string]any{
			"connectDomains":  []string{},
			"resourceDomains": []string{},
			"frameDomains":    []string{},
			"baseUriDomains":  []string{},
		},
		"prefersBorder": true,
	}}
}

// appResource is the pane view's entry in resources/list.
func appResource() *mcp.Resource {
	return &mcp.Resource{
		URI:         app.PaneURI,
		Name:        "pane_view",
		Title:       "Live pane view",
		Description: "A live view of a pane (MCP App) that capture_pane_image opens; it reads the pane with snapshot_pane and never types.",
		MIMEType:    app.MIMEType,
		Meta:        appUIMeta(),
	}
}

// appToolMeta is the _meta that links a tool to the pane view: the
// spec's _meta.ui.resourceUri, and the flat "ui/resourceUri" key of its
// drafts, which hosts of that time read and the official SDK still sends
// beside it.
func appToolMeta(base mcp.Meta) mcp.Meta {
	m := maps.Clone(base)
	if m == nil {
		m = mcp.Meta{}
	}
	ui, _ := m["ui"].(map[string]any)
	ui = maps.Clone(ui)
	if ui == nil {
		ui = map[string]any{}
	}
	ui["resourceUri"] = app.PaneURI
	m["ui"] = ui
	m["ui/resourceUri"] = app.PaneURI
	return m
}

// readApp answers resources/read of the pane view.
func readApp() *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{
		Cacheable: mcp.Cacheable{CacheScope: "public"},
		Contents: []*mcp.ResourceContents{{
			URI:      app.PaneURI,
			MIMEType: app.MIMEType,
			Text:     app.PaneHTML(),
			Meta:     appUIMeta(),
		}},
	}
}

// withAppCapability returns caps with the extension added, as a copy: the
// SDK's capabilities are shared by every answer.
func withAppCapability(caps *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	var c mcp.ServerCapabilities
	if caps != nil {
		c = *caps
	}
	c.Extensions = maps.Clone(c.Extensions)
	c.AddExtension(app.ExtensionID, nil)
	return &c
}

// appUI serves the pane view and adds it to the answers of clients that
// declare the extension (see the comment at the top of this file). It
// runs outside the resource middleware, so the entry it adds to
// resources/list is not taken for a tmux resource by the scope filter.
func (s *Server) appUI(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.appOff {
			return next(ctx, method, req)
		}
		if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil && r.Params.URI == app.PaneURI {
			return readApp(), nil
		}
		res, err := next(ctx, method, req)
		if err != nil || res == nil || !requestDeclaresApps(req) {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Capabilities = withAppCapability(r.Capabilities)
		case *mcp.DiscoverResult:
			r.Capabilities = withAppCapability(r.Capabilities)
			r.CacheScope = "private"
		case *mcp.ListToolsResult:
			s.linkAppTool(r)
		case *mcp.ListResourcesResult:
			if r.NextCursor == "" { // the last page
				r.Resources = append(slices.Clip(r.Resources), appResource())
				r.CacheScope = "private"
			}
		}
		return res, nil
	}
}

// linkAppTool gives the tool that opens the view its _meta.ui, on a copy:
// the listed tools are the SDK's own.
func (s *Server) linkAppTool(r *mcp.ListToolsResult) {
	i := slices.IndexFunc(r.Tools, func(t *mcp.Tool) bool { return t.Name == appToolName })
	if i < 0 {
		return
	}
	t := *r.Tools[i]
	t.Meta = appToolMeta(t.Meta)
	r.Tools = slices.Clone(r.Tools)
	r.Tools[i] = &t
	r.CacheScope = "private"
}

// appDocs is docs/tools.md's section on the pane view.
const appDocs = `## Live pane view (MCP App)

A host that renders MCP Apps (the ` + "`io.modelcontextprotocol/ui`" + ` extension: Claude, ChatGPT, VS Code, Goose and others)
shows ` + "`capture_pane_image`" + `'s result as a live view of the pane: the screen with its colours, attributes and cursor,
read again every 0.5 s (0.25 s to 5 s, as the person chooses), with a button that pauses and resumes it.

![The pane view in Chromium, hosted by the official MCP Apps host bridge](images/pane-app.png)

- The view is the resource ` + "`ui://tmux-mcp/pane`" + ` (` + "`text/html;profile=mcp-app`" + `): one HTML file in the binary, its script and
  styles inline. It loads nothing and opens no connection, and its ` + "`_meta.ui.csp`" + ` declares no domain of any kind.
- It reads the pane by asking the host to call ` + "`snapshot_pane`" + ` with ` + "`styles: true`" + ` for the pane the tool call named
  (its ` + "`pane_id`" + ` or other target, ` + "`socket_name`" + `, ` + "`socket_path`" + `, ` + "`host`" + `). That is the only tool it calls: it never types
  into the pane, never subscribes, and its calls are audited like any other (under the host's client).
- Only a client that declares the extension with ` + "`text/html;profile=mcp-app`" + ` in its ` + "`mimeTypes`" + ` (in
  ` + "`capabilities.extensions`" + `: at initialization, or in each request's ` + "`_meta`" + ` on 2026-07-28) sees the extension in the
  server's capabilities, the resource in ` + "`resources/list`" + ` and ` + "`_meta.ui.resourceUri`" + ` on ` + "`capture_pane_image`" + ` (the
  only tool that names the view: hosts open it for every result of such a tool). Those answers are marked
  ` + "`cacheScope: \"private\"`" + `. For every other client ` + "`initialize`" + `, ` + "`tools/list`" + ` and ` + "`resources/list`" + ` are byte for
  byte what they were before the view existed. Reading ` + "`ui://tmux-mcp/pane`" + ` works for any client: the page is static and
  holds no tmux data.
- Wide characters are laid out by the view's own width table (the common East Asian and emoji blocks); a rarer wide
  character counts as one column there, which shifts only the colours after it on its line.

`
