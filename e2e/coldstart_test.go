package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkColdStartToolsList measures what a client waits for before it
// can offer any tool: from spawning the server to the tools/list answer,
// through a raw JSON-RPC line client (initialize, notifications/initialized,
// tools/list). Beside it, in the same run:
//
//   - floor-go: a Go program that answers the same lines with constants
//     (testdata/coldfloor), the cost of starting any Go process here;
//   - exec-tmux-V: `tmux -V`, one small C process run to its exit;
//   - kcrong: Kcrong/tmux-mcp (a peer, Go, no output schemas) when
//     TMUX_MCP_PEER_KCRONG names its binary; it gets a private socket in a
//     temporary directory, which the benchmark removes.
//
// With TMUX_MCP_COLDSTART_BASELINE naming another build of tmux-mcp (say,
// of the commit before a change), a last sub-benchmark, vs-baseline,
// starts it and ours alternately, in turn first, each exactly as ours is
// started, and reports both medians and their ratio (x-baseline): a
// change's cost to start-up from pairs measured side by side, which the
// load of a shared machine shifts alike, rather than from two runs.
//
// Each sub-benchmark reports its median as p50-ms; tmux-mcp, measured
// last, also reports its median over each baseline's (x-kcrong, x-floor-go,
// x-exec-tmux-V).
func BenchmarkColdStartToolsList(b *testing.B) {
	ts := tmuxtest.New(b)
	dir := b.TempDir()
	floor := filepath.Join(dir, "coldfloor")
	if out, err := exec.Command("go", "build", "-o", floor, "./testdata/coldfloor").CombinedOutput(); err != nil {
		b.Fatalf("building the floor: %v\n%s", err, out)
	}
	medians := map[string]time.Duration{}
	run := func(name string, spawn func() *exec.Cmd, measure func(b *testing.B, cmd *exec.Cmd) time.Duration) {
		b.Run(name, func(b *testing.B) {
			var ds []time.Duration
			for b.Loop() {
				ds = append(ds, measure(b, spawn()))
			}
			slices.Sort(ds)
			p50 := ds[len(ds)/2]
			medians[name] = p50
			b.ReportMetric(float64(p50)/1e6, "p50-ms")
			if name != "tmux-mcp" {
				return
			}
			for _, base := range []string{"kcrong", "floor-go", "exec-tmux-V"} {
				if m := medians[base]; m > 0 {
					b.ReportMetric(float64(p50)/float64(m), "x-"+base)
				}
			}
		})
	}
	run("exec-tmux-V", func() *exec.Cmd { return exec.Command(ts.Bin, "-V") }, func(b *testing.B, cmd *exec.Cmd) time.Duration {
		start := time.Now()
		if out, err := cmd.Output(); err != nil || !strings.HasPrefix(string(out), "tmux") {
			b.Fatalf("tmux -V: %v %q", err, out)
		}
		return time.Since(start)
	})
	run("floor-go", func() *exec.Cmd { return exec.Command(floor) }, coldToolsList)
	if peer := os.Getenv("TMUX_MCP_PEER_KCRONG"); peer != "" {
		sock := filepath.Join(dir, "kcrong.sock")
		b.Cleanup(func() {
			if _, err := os.Stat(sock); err == nil { // a tmux server it started on its private socket
				_ = exec.Command(ts.Bin, "-S", sock, "kill-server").Run()
			}
		})
		run("kcrong", func() *exec.Cmd {
			cmd := exec.Command(peer)
			cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+sock, "TMUX_MCP_TMUX_BIN="+ts.Bin)
			return cmd
		}, coldToolsList)
	}
	// Ours last, so it can report its ratios to the baselines just measured.
	run("tmux-mcp", func() *exec.Cmd { return serverCmd(ts) }, coldToolsList)
	if base := os.Getenv("TMUX_MCP_COLDSTART_BASELINE"); base != "" {
		b.Run("vs-baseline", func(b *testing.B) {
			// Both run from a copy written the same way just now: a binary
			// fresh from the Go linker started 4-10% slower here than a
			// copy of the very same bytes.
			theirsBin, oursBin := copyFile(b, base, filepath.Join(dir, "baseline")), copyFile(b, binary, filepath.Join(dir, "ours"))
			from := func(bin string) *exec.Cmd {
				cmd := serverCmd(ts)
				cmd.Path, cmd.Args[0] = bin, bin
				return cmd
			}
			var ours, theirs []time.Duration
			baseline := func() *exec.Cmd { return from(theirsBin) }
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					theirs = append(theirs, coldToolsList(b, baseline()))
					ours = append(ours, coldToolsList(b, from(oursBin)))
				} else {
					ours = append(ours, coldToolsList(b, from(oursBin)))
					theirs = append(theirs, coldToolsList(b, baseline()))
				}
			}
			slices.Sort(ours)
			slices.Sort(theirs)
			p50, base50 := ours[len(ours)/2], theirs[len(theirs)/2]
			b.ReportMetric(float64(p50)/1e6, "p50-ms")
			b.ReportMetric(float64(base50)/1e6, "baseline-p50-ms")
			b.ReportMetric(float64(p50)/float64(base50), "x-baseline")
		})
	}
}

// copyFile copies the executable src to dst and returns dst.
func copyFile(b *testing.B, src, dst string) string {
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return dst
}

// coldToolsList starts cmd and returns the time from its start to the
// tools/list answer; the process is then ended by closing its input.
func coldToolsList(b *testing.B, cmd *exec.Cmd) time.Duration {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		b.StopTimer()
		_ = stdin.Close()
		_ = cmd.Wait()
		b.StartTimer()
	}()
	r := bufio.NewReaderSize(stdout, 1<<20)
	answer := func(id string) string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("reading answer %s: %v", id, err)
			}
			if strings.Contains(line, `"id":`+id+`,`) || strings.Contains(line, `"id":`+id+`}`) {
				return line
			}
		}
	}
	write := func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	answer("0")
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	line := answer("1")
	took := time.Since(start)
	if !strings.Contains(line, `"tools":[`) {
		b.Fatalf("tools/list answered %.200s", line)
	}
	return took
}
