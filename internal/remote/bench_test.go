package remote_test

import (
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// paneInfoFields is about what get_pane_info asks tmux for.
var paneInfoFields = []string{"pane_id", "pane_index", "pane_width", "pane_height", "pane_pid", "pane_active",
	"pane_dead", "pane_title", "window_id", "session_id", "pane_current_command", "pane_current_path"}

// p50 reports the median of ds as a metric in microseconds.
func p50(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
}

type benchRig struct {
	sshd   *sshtest.Server
	ts     *tmuxtest.Server
	host   *remote.Host
	remote *tmux.Client
	local  *tmux.Client
	sock   tmux.Socket
}

func newBenchRig(b *testing.B) *benchRig {
	s := sshtest.Start(b)
	ts := tmuxtest.New(b)
	h, err := remote.New(remote.Spec{Name: "box", Destination: sshtest.Alias}, remote.Options{SSHCommand: s.SSHCommand(), Env: tmuxtest.CleanEnv()})
	if err != nil {
		b.Fatal(err)
	}
	rr := h.NewRunner()
	lr := &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv()}
	b.Cleanup(func() {
		_ = rr.Close()
		_ = lr.Close()
		_ = h.Close()
	})
	return &benchRig{sshd: s, ts: ts, host: h, remote: &tmux.Client{Runner: rr}, local: &tmux.Client{Runner: lr},
		sock: tmux.Socket{Path: ts.SocketPath()}}
}

// BenchmarkRemotePaneInfo: a get_pane_info query (display-message of the
// pane's fields) locally over the control connection, on the loopback
// host over its control connection through ssh, and as one fresh "ssh
// host tmux display-message" per call (what users do through a shell
// tool today). Goals: remote <= 0.1x fresh ssh, remote <= 3x local.
func BenchmarkRemotePaneInfo(b *testing.B) {
	r := newBenchRig(b)
	ctx := context.Background()
	query := func(c *tmux.Client) func() error {
		return func() error {
			rows, err := c.Rows(ctx, r.sock, tmux.Command{"display-message", "-p", "-t", "%0"}, paneInfoFields)
			if err == nil && (len(rows) != 1 || rows[0]["pane_id"] != "%0") {
				b.Fatalf("rows %v", rows)
			}
			return err
		}
	}
	format := "'" + tmux.Format(paneInfoFields...) + "'"
	fresh := func() error {
		argv := append(r.sshd.SSHCommand(), "-T", "-o", "BatchMode=yes", "-o", "ControlMaster=no", "-o", "ControlPath=none",
			sshtest.Alias, "exec tmux -S "+r.sock.Path+" display-message -p -t %0 "+format)
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err == nil && !strings.Contains(string(out), "%0") {
			b.Fatalf("fresh ssh: %q", out)
		}
		return err
	}
	for _, c := range []struct {
		name string
		f    func() error
	}{{"local-control", query(r.local)}, {"remote-control", query(r.remote)}, {"fresh-ssh-exec", fresh}} {
		b.Run(c.name, func(b *testing.B) {
			if err := c.f(); err != nil { // connect outside the timing
				b.Fatal(err)
			}
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(t0))
			}
			b.StopTimer()
			p50(b, ds)
		})
	}
}

// BenchmarkRemoteWaitDetect: how long after a pane prints a line a
// subscription (what waits use) has it, locally and on the loopback host.
// The pane prints "M<unix ns>" every 20 ms with date, taken just before the
// write; the latency is the time of receipt minus that stamp. Goal on the
// remote host: p50 <= 10 ms.
func BenchmarkRemoteWaitDetect(b *testing.B) {
	r := newBenchRig(b)
	r.ts.MustRun("respawn-pane", "-k", "-t", "%0", "while :; do date +M%s%N; sleep 0.02; done")
	sess := r.ts.MustRun("display-message", "-p", "-t", "%0", "#{session_id}")
	win := r.ts.MustRun("display-message", "-p", "-t", "%0", "#{window_id}")
	local := &tmux.Watchers{Bin: r.ts.Bin, Env: tmuxtest.CleanEnv()}
	remoteWs := r.host.NewWatchers()
	b.Cleanup(local.CloseAll)
	b.Cleanup(remoteWs.CloseAll)
	for _, c := range []struct {
		name string
		ws   *tmux.Watchers
	}{{"local", local}, {"remote", remoteWs}} {
		b.Run(c.name, func(b *testing.B) {
			w, err := c.ws.Get(r.sock, sess)
			if err != nil {
				b.Fatal(err)
			}
			sub := w.Subscribe("%0", win)
			defer sub.Close()
			var pending string
			ds := make([]time.Duration, 0, b.N)
			first := true
			b.ResetTimer()
			for len(ds) < b.N {
				select {
				case <-sub.Notify():
				case <-time.After(5 * time.Second):
					b.Fatal("no output for 5s")
				}
				now := time.Now()
				pending += string(sub.Take())
				for {
					i := strings.IndexByte(pending, '\n')
					if i < 0 {
						break
					}
					line := strings.TrimSpace(pending[:i])
					pending = pending[i+1:]
					if first { // the first line may have been printed before we subscribed
						first = false
						continue
					}
					if ns, err := strconv.ParseInt(strings.TrimPrefix(line, "M"), 10, 64); err == nil && strings.HasPrefix(line, "M") {
						ds = append(ds, now.Sub(time.Unix(0, ns)))
					}
				}
			}
			b.StopTimer()
			p50(b, ds)
		})
	}
}
