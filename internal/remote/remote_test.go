package remote_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
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
	// Keep-alives are short so a frozen network is noticed within seconds;
	// the connect and start bounds are roomy, because on a loaded machine
	// (CI runs packages side by side on 2 cores) a handshake and a login
	// shell took more than 3 s. Tests of those bounds set their own.
	return remote.Options{SSHCommand: s.SSHCommand(), ConnectTimeout: 10 * time.Second,
		AliveInterval: time.Second, AliveCount: 2, StartTimeout: 10 * time.Second, Env: tmuxtest.CleanEnv()}
}

// newRig starts an sshd (with sshdExtra config lines) and a rig on it,
// with fastOptions changed by tune when it is not nil; r.sshd is the sshd.
func newRig(t *testing.T, spec remote.Spec, tune func(*remote.Options), sshdExtra ...string) *rig {
	t.Helper()
	s := sshtest.Start(t, sshdExtra...)
	o := fastOptions(s)
	if tune != nil {
		tune(&o)
	}
	return newRigOn(t, s, spec, o)
}

func newRigOn(t *testing.T, s *sshtest.Server, spec remote.Spec, o remote.Options) *rig {
	t.Helper()
	r := &rig{sshd: s, ts: tmuxtest.New(t)}
	r.sock = tmux.Socket{Path: r.ts.SocketPath()}
	if spec.Name == "" {
		spec.Name = "box"
	}
	if spec.Destination == "" {
		spec.Destination = sshtest.Alias
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		kids := sshtest.Children()
		clients, _ := r.ts.Run("list-clients", "-F", "#{client_pid} #{client_control_mode}")
		clients = ourClients(clients)
		if len(kids) == 0 && strings.TrimSpace(clients) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind: ssh children %v, tmux clients %q\n%s\nsshd log:\n%s", kids, clients, psTree(clients), r.sshd.Log())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ourClients keeps the clients this test process started (through its
// sshd): another test package running at the same time can attach to any
// server in the shared socket directory (list_servers probes them all),
// and its clients are not this test's leftovers.
func ourClients(clients string) string {
	var keep []string
	for _, line := range strings.Split(strings.TrimSpace(clients), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		pid := strings.Fields(line)[0]
		for i := 0; i < 16 && pid != "" && pid != "0" && pid != "1"; i++ {
			if pid == strconv.Itoa(os.Getpid()) {
				keep = append(keep, line)
				break
			}
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				keep = append(keep, line) // gone or unreadable: count it
				break
			}
			s := string(stat)
			pid = strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[1]
		}
	}
	return strings.Join(keep, "\n")
}

// psTree describes each left-behind client and its ancestors (for the
// failure message: which connection's session it was).
func psTree(clients string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(clients), "\n") {
		pid := strings.Fields(line + " ")[0]
		for i := 0; i < 4 && pid != "" && pid != "0" && pid != "1"; i++ {
			stat, err := os.ReadFile("/proc/" + pid + "/stat")
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if err != nil {
				fmt.Fprintf(&b, "  %s: gone\n", pid)
				break
			}
			s := string(stat)
			f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
			fmt.Fprintf(&b, "  %s state %s: %s\n", pid, f[0], strings.ReplaceAll(string(cmdline), "\x00", " "))
			pid = f[1]
		}
	}
	return b.String()
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
	// ClientPIDs names the engine's client as the remote server lists it.
	clients := r.ts.MustRun("list-clients", "-F", "#{client_pid}")
	if pids := r.runner.ClientPIDs(); len(pids) != 1 || strings.TrimSpace(clients) != fmt.Sprint(pids[0]) {
		t.Fatalf("ClientPIDs %v, remote clients %q", pids, clients)
	}
}

// TestRemoteCaptureForgery: a pane that prints lines looking like the
// control protocol's framing and like exec markers changes nothing: the
// capture comes back as printed, the next call works on the same
// connection.
func TestRemoteCaptureForgery(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	forged := []string{"%begin 1700000000 5 1", "%end 1700000000 5 1", "%output %0 x", "%exit", "\x1etmux-mcp-0011223344556677-start"}
	data := t.TempDir() + "/forged"
	if err := os.WriteFile(data, []byte(strings.Join(forged, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.ts.MustRun("respawn-pane", "-k", "-t", "main", "cat "+data+"; exec sleep 60")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := r.ts.Run("capture-pane", "-p", "-t", "main")
		return strings.Contains(out, "%exit\n")
	})
	if _, err := r.client.Rows(ctx(t), r.sock, tmux.Command{"display-message", "-p", "-t", "main"}, []string{"pane_id"}); err != nil {
		t.Fatal(err)
	}
	id, _ := r.runner.Identity(r.sock)
	// The capture goes to the remote one-off path, not through a capture
	// file: that directory would be on this host, not the remote one.
	spawns := 0
	r.runner.ExecFallback().(*tmux.ExecRunner).OnSpawn = func([]string) { spawns++ }
	outs, err := r.client.Run(ctx(t), r.sock,
		tmux.Command{"capture-pane", "-p", "-t", "main"},
		tmux.Command{"list-panes", "-t", "main", "-F", "#{pane_id}"},
		tmux.Command{"capture-pane", "-p", "-t", "main", "-S", "0", "-E", "3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range forged[:4] {
		if !strings.Contains(string(outs[0]), f+"\n") {
			t.Fatalf("capture lost %q: %q", f, outs[0])
		}
	}
	if got := strings.TrimSpace(string(outs[1])); got != "%0" {
		t.Fatalf("list-panes after the capture: %q", got)
	}
	if len(strings.Split(strings.TrimRight(string(outs[2]), "\n"), "\n")) != 4 {
		t.Fatalf("ranged capture: %q", outs[2])
	}
	if spawns != 1 {
		t.Fatalf("%d remote one-off calls for the capture, want 1", spawns)
	}
	id2, ok := r.runner.Identity(r.sock)
	if !ok || id2 != id {
		t.Fatalf("the control connection did not survive the capture: %v %v", id, id2)
	}
}

// TestRemoteDotfileNoise: a login shell whose rc file prints banners (on
// stdout and stderr) before tmux starts changes no answer.
func TestRemoteDotfileNoise(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	r.sshd.SetRC("echo 'Welcome to box'; echo '%begin 1 2 1'; echo noise >&2\n")
	rows, err := r.client.Rows(ctx(t), r.sock, tmux.Command{"list-panes", "-t", "main"}, []string{"pane_id"})
	if err != nil || len(rows) != 1 || rows[0]["pane_id"] != "%0" {
		t.Fatalf("over control: %v %v", rows, err)
	}
	outs, err := r.client.Run(ctx(t), r.sock, tmux.Command{"capture-pane", "-p", "-t", "main", "-S", "0", "-E", "0"})
	if err != nil || strings.Contains(string(outs[0]), "Welcome") {
		t.Fatalf("over exec: %q %v", outs, err)
	}
	if _, ok := r.runner.Identity(r.sock); !ok {
		t.Fatal("no control connection")
	}
}

// TestRemoteShellStartBound: a login shell that hangs in its rc file gives
// a clear error naming the host within the start bound, not a hang.
func TestRemoteShellStartBound(t *testing.T) {
	r := newRig(t, remote.Spec{}, func(o *remote.Options) { o.StartTimeout = time.Second })
	s := r.sshd
	s.SetRC("sleep 30\n")
	start := time.Now()
	_, err := r.client.Rows(ctx(t), r.sock, tmux.Command{"list-panes", "-t", "main"}, []string{"pane_id"})
	if err == nil || !strings.Contains(err.Error(), "host box") || !strings.Contains(err.Error(), "did not start tmux within 1s") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("took %v", d)
	}
	s.SetRC("")
	if _, err := r.client.Rows(ctx(t), r.sock, tmux.Command{"list-panes", "-t", "main"}, []string{"pane_id"}); err != nil {
		t.Fatalf("after the rc file was fixed: %v", err)
	}
}

// TestRemoteNewSession: a call that starts a server works on a socket with
// no server yet, as an exec'd client would.
func TestRemoteNewSession(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	fresh := tmuxtest.NewWith(t) // no server
	sock := tmux.Socket{Path: fresh.SocketPath()}
	_, err := r.client.Run(ctx(t), sock, tmux.Command{"list-sessions"})
	if !errors.Is(err, tmux.ErrNoServer) {
		t.Fatalf("list-sessions on no server: %v", err)
	}
	if _, err := r.client.Run(ctx(t), sock, tmux.Command{"new-session", "-d", "-s", "made", "-x", "80", "-y", "24"}); err != nil {
		t.Fatal(err)
	}
	if out := fresh.MustRun("list-sessions", "-F", "#{session_name}"); out != "made" {
		t.Fatalf("sessions %q", out)
	}
	_, err = r.client.Run(ctx(t), sock, tmux.Command{"kill-pane", "-t", "%99"})
	var ce *tmux.CommandError
	if !errors.As(err, &ce) || !errors.Is(err, tmux.ErrNotFound) || !strings.Contains(err.Error(), "host box") {
		t.Fatalf("kill-pane %%99: %v", err)
	}
}

// TestRemoteServerGoneIsNoServer: a call on a host whose tmux server has
// exited fails with ErrNoServer, as it does locally, whether it meets the
// ended control connection (a remote client cannot look at the socket to
// tell "server gone" from "connection lost") or connects afresh. Callers
// branch on it: Close treats no server as nothing left to clean up, and a
// tool answers "no tmux server is running" instead of a lost connection.
func TestRemoteServerGoneIsNoServer(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	for i := range 5 {
		if _, err := r.client.Run(ctx(t), r.sock, tmux.Command{"display-message", "-p", "x"}); err != nil {
			t.Fatalf("round %d, before: %v", i, err)
		}
		r.ts.Kill()
		_, err := r.client.Run(ctx(t), r.sock, tmux.Command{"list-buffers", "-F", "#{buffer_name}"})
		if !errors.Is(err, tmux.ErrNoServer) {
			t.Fatalf("round %d, after the server exited: %v, want ErrNoServer", i, err)
		}
		r.ts.MustRun("new-session", "-d", "-s", "main")
	}
}
