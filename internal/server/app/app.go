// Package app holds tmux-mcp's MCP App (the io.modelcontextprotocol/ui
// extension, "MCP Apps"): a live view of a pane that hosts which render
// MCP Apps (Claude, ChatGPT, VS Code, Goose...) show beside the result of
// capture_pane_image. It is one self-contained HTML file, scripts and
// styles inline, embedded in the binary, so a host needs nothing from any
// network to show it and the server declares no outside domain.
//
// The view talks only to its host, over the App protocol (JSON-RPC over
// postMessage: ui/initialize, then the tool input and result notifications),
// and keeps the pane current by asking the host to call read-only tools
// (snapshot_pane with styles). It never types into the pane and never
// subscribes. internal/server decides which clients see it (the ones that
// declare the extension) and serves it.
package app

import _ "embed"

// ExtensionID is the MCP Apps extension's identifier in the extensions
// map of client and server capabilities.
const ExtensionID = "io.modelcontextprotocol/ui"

// MIMEType is the type of an MCP App's HTML resource; a client declares
// the extension with it in its mimeTypes setting.
const MIMEType = "text/html;profile=mcp-app"

// PaneURI names the pane view among the server's resources.
const PaneURI = "ui://tmux-mcp/pane"

//go:embed pane.html
var paneHTML string

// PaneHTML is the pane view: one HTML5 document with its script and styles
// inline.
func PaneHTML() string { return paneHTML }
