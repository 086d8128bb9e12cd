package remote_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// rig is one test's sshd, an isolated tmux server on this machine (the
// "remote" side, reached as root over loopback ssh), and a Host for it.
type rig struct {
	sshd   *sshtest.Server
	ts     *tmuxtest.Server
	host   *remote.Host
	runner *tmux.ControlRunner
	client *tmux.Client
	sock   tmux.Socket // the test server's socket, always given explicitly
}

func fastOptions(s *sshtest.Server) remote.Options {
	return remote.Options{SSHCommand: s.SSHCommand(), ConnectTimeout: 3 * time.Second,
		AliveInterval: time.Second, AliveCount: 2, StartTimeout: 3 * time.Second, Env: tmuxtest.CleanEnv()}
}

func newRig(t *testing.T, spec remote.Spec, opts *remote.Options, sshdExtra ...string) *rig {
	t.Helper()
	s := sshtest.Start(t, sshdExtra...)
	r := &rig{sshd: s, ts: tmuxtest.New(t)}
	r.sock = tmux.Socket{Path: r.ts.SocketPath()}
	if spec.Name == "" {
		spec.Name = "box"
	}
	if spec.Destination == "" {
		spec.Destination = sshtest.Alias
	}
	o := fastOptions(s)
	if opts != nil {
		o = *opts
		if o.SSHCommand == nil {
			o.SSHCommand = s.SSHCommand()
		}
	}
	h, err := remote.New(spec, o)
	if err != nil {
		t.Fatal(err)
	}
	r.host = h
	r.runner = h.NewRunner()
	r.client = &tmux.Client{Runner: r.runner}
	t.Cleanup(func() {
		_ = r.runner.Close()
		_ = h.Close()
		checkNoChildren(t, r)
	})
	return r
}

// checkNoChildren: after Close, no ssh process of ours and no control
// client on the test's tmux server is left.
func checkNoChildren(t *testing.T, r *rig) {
	t.Helper()
	if pids := r.host.PIDs(); len(pids) > 0 {
		t.Errorf("masters alive after Close: %v", pids)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		kids := sshChildren()
		clients, _ := r.ts.Run("list-clients", "-F", "#{client_pid} #{client_control_mode}")
		if len(kids) == 0 && strings.TrimSpace(clients) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind: ssh children %v, tmux clients %q", kids, clients)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sshChildren lists this process's child processes named ssh (/proc).
func sshChildren() []string {
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		comm := s[strings.IndexByte(s, '(')+1 : i]
		if len(f) > 1 && f[1] == itoa(me) && comm == "ssh" {
			out = append(out, e.Name())
		}
	}
	return out
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRemoteRoundTrip(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	want := r.ts.MustRun("display-message", "-p", "-t", "main", "#{pid} #{pane_id}")
	var connects int
	r.runner.OnConnect = func([]string) { connects++ }
	for i := 0; i < 3; i++ {
		rows, err := r.client.Rows(ctx(t), r.sock, tmux.Command{"display-message", "-p", "-t", "main"}, []string{"pid", "pane_id"})
		if err != nil {
			t.Fatalf("call %d: %v\nsshd: %s", i, err, r.sshd.Log())
		}
		if got := rows[0]["pid"] + " " + rows[0]["pane_id"]; got != want {
			t.Fatalf("call %d: got %q want %q", i, got, want)
		}
	}
	if connects != 1 {
		t.Fatalf("%d control connections for 3 calls, want 1", connects)
	}
	if _, ok := r.runner.Identity(r.sock); !ok {
		t.Fatal("no live control connection after the calls")
	}
}
