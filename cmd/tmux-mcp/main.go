// Command tmux-mcp is a Model Context Protocol server that gives AI agents
// safe, fast and complete control of tmux. Run without arguments it serves
// MCP over stdio; see -help for the subcommands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tmux-mcp/tmux-mcp/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
