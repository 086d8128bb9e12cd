// Command tmux-mcp is a Model Context Protocol server that gives AI agents
// safe, fast and complete control of tmux. Run without arguments it serves
// MCP over stdio; see --help for the subcommands.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/tmux-mcp/tmux-mcp/internal/cli"
)

func main() {
	// The heap stays small (a few MB) while every call allocates JSON: a
	// less eager collector trims per-call latency at little memory cost.
	debug.SetGCPercent(400)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a bounded shutdown; a second one kills at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
