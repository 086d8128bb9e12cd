package tmux_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// strayVia is shellVia (sh) that keeps stray clients, as remote.Host does.
type strayVia struct {
	shellVia
	strays tmux.StrayClients
}

func (v *strayVia) Strays() *tmux.StrayClients { return &v.strays }

// stuckClient attaches a control client whose output pipe breaks with a
// reply pending, as when the ssh session carrying it dies: tmux then keeps
// it attached although its input has ended. It returns the client.
func stuckClient(t *testing.T, srv *tmuxtest.Server) *exec.Cmd {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(srv.Bin, "-S", srv.SocketPath(), "-C", "attach-session", "-t", "main")
	cmd.Env = tmuxtest.CleanEnv()
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	buf := make([]byte, 4096)
	if _, err := outR.Read(buf); err != nil { // attached: the first reply
		t.Fatal(err)
	}
	outR.Close() // the reader is gone, as sshd is
	if _, err := inW.Write([]byte("list-windows\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	inW.Close()
	time.Sleep(500 * time.Millisecond)
	if !strings.Contains(srv.MustRun("list-clients", "-F", "#{client_pid}"), strconv.Itoa(cmd.Process.Pid)) {
		t.Skip("this tmux lets such a client go by itself")
	}
	return cmd
}

// TestRemoteStrayClientReaped: a remote control client left attached by a
// lost connection is ended by the next connection to its server, and only
// a pid the server lists as its client is signalled.
func TestRemoteStrayClientReaped(t *testing.T) {
	srv := tmuxtest.New(t)
	stuck := stuckClient(t, srv)
	sock := tmux.Socket{Path: srv.SocketPath()}
	via := &strayVia{shellVia: shellVia{"sh"}}
	other := exec.Command("sleep", "30") // a pid that is no client of the server
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _, _ = other.Process.Wait() })
	via.Strays().Add(sock, stuck.Process.Pid)
	via.Strays().Add(sock, other.Process.Pid)

	r := &tmux.ControlRunner{Bin: srv.Bin, Env: tmuxtest.CleanEnv(), Via: via}
	t.Cleanup(func() { _ = r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.Run(ctx, sock, tmux.Command{"list-sessions", "-F", "#{session_id}"}); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _, _ = stuck.Process.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatalf("the stray client %d is still running; clients: %q", stuck.Process.Pid,
			srv.MustRun("list-clients", "-F", "#{client_pid} #{client_control_mode}"))
	}
	// Not waited for, a signalled sleep would be a zombie ("Z").
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(other.Process.Pid) + "/stat")
	if s := string(stat); err != nil || strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0] == "Z" {
		t.Fatalf("a pid the server does not list was signalled: %q %v", stat, err)
	}
	if got := via.Strays().Take(sock); len(got) != 0 {
		t.Fatalf("strays kept after reaping: %v", got)
	}
}
