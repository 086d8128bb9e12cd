// Command tmux-mcp is a Model Context Protocol server that gives AI agents
// safe, fast and complete control of tmux. Run without arguments it serves
// MCP over stdio; see --help for the subcommands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tmux-mcp/tmux-mcp/internal/cli"
)

func main() {
	cli.ApplyGCSettings(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal starts a bounded shutdown; a second one kills at once.
	go func() { <-ctx.Done(); stop() }()
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	stopProfile()
	os.Exit(code)
}

// stopProfile ends a CPU profile started by a cpuprofile build
// (cpuprofile.go); in every other build it does nothing.
var stopProfile = func() {}
