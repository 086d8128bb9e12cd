package cli

import (
	"io"
	"log/slog"
	"os"
	"runtime"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/stdio"
)

// processStdio prepares the process's own stdin and stdout for serving one
// MCP client: when both are pipes or sockets, as every client that spawns
// a server makes them, they are read and written without blocking a thread
// (stdio.Pollable), and the server runs on one processor (GOMAXPROCS 1)
// unless the user set GOMAXPROCS. restore, called when serving ends, puts
// back the flags of a socket's description.
//
// Why one processor: a stdio server serves one client whose calls mostly
// wait on tmux, a process of its own. With two or more processors the Go
// scheduler wakes an idle processor's thread each time a goroutine becomes
// runnable (the request read, the SDK's handler, the control connection's
// reply), only for it to find nothing to do and sleep again; on
// get_pane_info that was ~4 of the ~7-10 context switches per call, and a
// third of the server's CPU per call (docs/per-call-cost.md measures it
// against the floor server). Calls in flight together still run
// concurrently, interleaved on the one processor, and tmux, the panes and
// the client keep the other cores. One processor needs the pollable pipes:
// with a blocking read(2) the only processor would sit in the system call
// between requests until sysmon took it back (up to 10 ms per request).
// serve --http keeps every processor: one daemon serves many clients.
//
// Anything else (a terminal, files, or streams that are not the process's
// own, as in tests that run Main in-process) is returned as it is, and the
// processors are left alone.
func processStdio(stdin io.Reader, stdout io.Writer, getenv config.Getenv, logger *slog.Logger) (io.Reader, io.Writer, func()) {
	in, ok := stdin.(*os.File)
	if !ok || in != os.Stdin {
		return stdin, stdout, func() {}
	}
	out, ok := stdout.(*os.File)
	if !ok || out != os.Stdout {
		return stdin, stdout, func() {}
	}
	pin, restoreIn, ok := stdio.Pollable(in, os.O_RDONLY)
	if !ok {
		return stdin, stdout, func() {}
	}
	pout, restoreOut, ok := stdio.Pollable(out, os.O_WRONLY)
	if !ok {
		restoreIn()
		pin.Close()
		return stdin, stdout, func() {}
	}
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	logger.Debug("stdin and stdout read and written without blocking a thread", "gomaxprocs", runtime.GOMAXPROCS(0))
	return pin, pout, func() { restoreIn(); restoreOut() }
}
