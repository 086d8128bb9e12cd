package server

import "github.com/modelcontextprotocol/go-sdk/mcp"

// ListedTools returns the visible tools as tools/list lists them (names,
// titles, annotations, input and output schemas), sorted by name. The
// floor server of the e2e benchmarks (e2e/internal/floorserver) registers
// exactly these on a bare SDK server, so every tool added to the registry
// is in the floor too, and a per-call ratio to the floor measures our own
// work and nothing of the SDK's.
func (s *Server) ListedTools() []*mcp.Tool {
	var out []*mcp.Tool
	for _, t := range s.Visible() {
		out = append(out, t.mcpTool())
	}
	return out
}
