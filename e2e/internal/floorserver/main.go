// Command floorserver is the floor of the per-call benchmarks in e2e
// (BenchmarkFloorGetPaneInfo): a bare MCP server on the same Go SDK, at
// the same GC settings (cli.ApplyGCSettings), whose tools carry our names,
// titles, annotations and schemas, taken from our registry when it starts
// (server.ListedTools), and answer with canned results recorded from our
// own server in the same run. It does no validation, no tmux, no audit:
// what it costs per call is the SDK's JSON-RPC and MCP work for our
// messages, so our cost above it is ours alone.
//
// Environment:
//
//	TMUX_MCP_FLOOR_ANSWERS  a JSON file: {"tool_name": <CallToolResult>, ...};
//	                        a tool without an entry answers {"content":[]}
//	TMUX_MCP_CPUPROFILE     write a CPU profile here until stdin ends
//	TMUX_MCP_MEMPROFILE     write an allocation profile here when stdin ends
//
// The tools are listed as our server lists them under the same
// configuration variables (TMUX_MCP_SAFETY, TMUX_MCP_TOOLSETS, ...).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/cli"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "floorserver:", err)
		os.Exit(1)
	}
}

func run() error {
	cli.ApplyGCSettings(os.Getenv)
	if path := os.Getenv("TMUX_MCP_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	if path := os.Getenv("TMUX_MCP_MEMPROFILE"); path != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
	answers := map[string]json.RawMessage{}
	if path := os.Getenv("TMUX_MCP_FLOOR_ANSWERS"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &answers); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	cfg, _, err := config.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	srv, err := server.New(cfg, server.Options{})
	if err != nil {
		return err
	}
	ms := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "0"}, nil)
	for _, t := range srv.ListedTools() {
		canned := &mcp.CallToolResult{Content: []mcp.Content{}}
		if raw, ok := answers[t.Name]; ok {
			if err := json.Unmarshal(raw, canned); err != nil {
				return fmt.Errorf("answer of %s: %w", t.Name, err)
			}
			// Held encoded, as our tools hold theirs (buildResult), so
			// both servers do the same encoding work per answer.
			var wire struct {
				Structured json.RawMessage `json:"structuredContent"`
			}
			if err := json.Unmarshal(raw, &wire); err != nil {
				return fmt.Errorf("answer of %s: %w", t.Name, err)
			}
			if len(wire.Structured) > 0 {
				canned.StructuredContent = wire.Structured
			}
		}
		ms.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res := *canned // a copy per call: the SDK may fill in fields of what it is given
			return &res, nil
		})
	}
	// Run ends when stdin does (the benchmark closes it); how it ended is
	// no concern of a floor.
	_ = ms.Run(context.Background(), &mcp.StdioTransport{})
	return nil
}
