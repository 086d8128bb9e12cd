package e2e

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func bufferNames(ts *tmuxtest.Server) string {
	out, _ := ts.Run("list-buffers", "-F", "#{buffer_name}")
	return out
}

// loadBuffer starts a server process, loads one buffer through it and
// returns the process (still running) and the buffer name.
func loadBuffer(t *testing.T, ts *tmuxtest.Server) (*mcpProc, string) {
	t.Helper()
	p := startProc(t, serverCmd(ts))
	res, err := p.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "load_buffer", Arguments: map[string]any{"content": "secret stuff"}})
	if err != nil || res.IsError {
		t.Fatalf("load_buffer: %v %+v", err, res)
	}
	name := res.StructuredContent.(map[string]any)["buffer_name"].(string)
	if !strings.Contains(bufferNames(ts), name) {
		t.Fatalf("buffer %s not on the server", name)
	}
	return p, name
}

func TestBuffersCleanedUpOnExit(t *testing.T) {
	for _, how := range []string{"SIGTERM", "SIGINT", "EOF"} {
		t.Run(how, func(t *testing.T) {
			ts := tmuxtest.New(t)
			p, name := loadBuffer(t, ts)
			switch how {
			case "SIGTERM":
				_ = p.cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				_ = p.cmd.Process.Signal(os.Interrupt)
			case "EOF":
				_ = p.cs.Close()
			}
			p.wait(t)
			if strings.Contains(bufferNames(ts), name) {
				t.Errorf("buffer %s left behind after %s", name, how)
			}
		})
	}
}

// A process killed with SIGKILL cannot clean up; the next server process
// that uses buffers on the same tmux server reclaims what it left.
func TestBuffersReclaimedAfterSIGKILL(t *testing.T) {
	ts := tmuxtest.New(t)
	p, name := loadBuffer(t, ts)
	_ = p.cmd.Process.Kill()
	p.wait(t)
	if !strings.Contains(bufferNames(ts), name) {
		t.Fatal("SIGKILL should leave the buffer (nothing could delete it)")
	}
	ts.MustRun("set-buffer", "-b", "users-own", "keep me")
	p2, name2 := loadBuffer(t, ts)
	defer p2.cmd.Process.Kill()
	got := bufferNames(ts)
	if strings.Contains(got, name) {
		t.Errorf("dead process's buffer %s not reclaimed: %s", name, got)
	}
	if !strings.Contains(got, name2) || !strings.Contains(got, "users-own") {
		t.Errorf("reclaim removed the wrong buffers: %s", got)
	}
}

// mcpProc is a server process with a connected client whose transport we
// control (so the test can signal the process itself).
type mcpProc struct {
	cmd  *exec.Cmd
	cs   *mcp.ClientSession
	done chan struct{}
}

func startProc(t *testing.T, cmd *exec.Cmd) *mcpProc {
	t.Helper()
	stdin, _ := cmd.StdinPipe()
	stdout, started := stdoutPipe(t, cmd)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started()
	transport := &mcp.IOTransport{Reader: stdout, Writer: stdin}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &mcpProc{cmd: cmd, cs: cs, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cs.Close() })
	return p
}

func (p *mcpProc) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("server process did not exit")
	}
}
