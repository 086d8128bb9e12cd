package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkStdioGetPaneInfo measures what an agent waits for: one
// tools/call get_pane_info line written to the built binary's stdin until
// its answer line comes back, beside one bare `tmux display-message`
// process measured in the same run. The client side is a plain line
// writer and reader, so the figure is the server's, not a client library's.
func BenchmarkStdioGetPaneInfo(b *testing.B) {
	ts := tmuxtest.New(b)
	b.Run("bare-exec-display-message", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(ts.Bin, "-L", ts.Socket.Name, "display-message", "-p", "-t", "%0", "#{pane_id}")
			cmd.Env = tmuxtest.CleanEnv()
			if out, err := cmd.Output(); err != nil || len(out) == 0 {
				b.Fatal(err)
			}
		}
	})
	for _, engine := range []string{"exec", "control"} {
		b.Run("stdio-get_pane_info-"+engine, func(b *testing.B) {
			send, _ := startLineServer(b, serverCmd(ts, "TMUX_MCP_ENGINE="+engine, "TMUX_MCP_AUDIT_LOG=/dev/null"))
			i := 0
			for b.Loop() {
				i++
				resp := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%%0"}}}`, i))
				if !strings.Contains(resp, `"pane_id":"%0"`) {
					b.Fatalf("%s", resp)
				}
			}
		})
	}
}

// startLineServer starts the server cmd with a plain line client: send
// writes one JSON-RPC line and returns the next line that carries an id (the
// answer; notifications are skipped). The session is initialized before it
// returns, and the process is ended when the benchmark does.
func startLineServer(b *testing.B, cmd *exec.Cmd) (send func(line string) string, pid int) {
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	r := bufio.NewReaderSize(stdout, 1<<20)
	send = func(line string) string {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			b.Fatal(err)
		}
		for {
			resp, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(resp, `"id"`) {
				return resp
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	return send, cmd.Process.Pid
}
