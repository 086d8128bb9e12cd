package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/sshtest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkRemoteStartDirectory is what checking a start_directory on a
// remote host adds to a spawn: respawn_pane (kill: true) on host "box"
// (loopback sshd) without start_directory, the baseline, and with one,
// which first checks the directory on the host (one more process over the
// host's ssh connection); that check alone; and the median of the paired
// differences (added). One op is the three in turn.
func BenchmarkRemoteStartDirectory(b *testing.B) {
	sshtest.Need(b)
	ts := tmuxtest.New(b)
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive,
		WaitMax: config.DefaultWaitMax, SuppressHistory: true}
	e := newSSHEnv(b, ts, cfg)
	dir := b.TempDir()
	ctx := context.Background()
	spawn := func(args map[string]any) func() {
		params := &mcp.CallToolParams{Name: "respawn_pane", Arguments: args}
		return func() {
			res, err := e.cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(err, text(res))
			}
		}
	}
	eng, err := e.srv.hosts.Get("box")
	if err != nil {
		b.Fatal(err)
	}
	check := func() {
		if err := eng.Runner.CheckRemoteDir(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
	base := spawn(map[string]any{"host": "box", "pane_id": "%0", "kill": true, "shell": "sleep 300"})
	withDir := spawn(map[string]any{"host": "box", "pane_id": "%0", "kill": true, "shell": "sleep 300", "start_directory": dir})
	// The three run in turn within each iteration, so a load that changes
	// during the run (the machine is shared) weighs on each alike.
	ops := []func(){base, withDir, check}
	for _, op := range ops {
		op() // connections up
	}
	ds := make([][]time.Duration, len(ops))
	for b.Loop() {
		for i, op := range ops {
			t0 := time.Now()
			op()
			ds[i] = append(ds[i], time.Since(t0))
		}
	}
	diffs := make([]time.Duration, len(ds[0]))
	for i := range diffs {
		diffs[i] = ds[1][i] - ds[0][i]
	}
	for i, unit := range []string{"base-p50-µs", "dir-p50-µs", "check-p50-µs"} {
		b.ReportMetric(p50us(ds[i]), unit)
	}
	b.ReportMetric(p50us(diffs), "added-p50-µs")
}

// p50us is the median of ds in microseconds.
func p50us(ds []time.Duration) float64 {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return float64(ds[len(ds)/2].Microseconds())
}
