package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkFloorGetPaneInfo judges our own share of a tools/call against a
// floor server (e2e/internal/floorserver): a bare server on the same Go SDK
// version, at the same GC settings, whose tools are ours (names, schemas
// and annotations taken from our registry when it starts) and which answers
// with canned results recorded from our server earlier in the same run. It
// does nothing a tool does, so everything above it is ours.
//
// Both servers run at once, driven over stdio by the same raw JSON-RPC line
// client (one line out, one line back). Each iteration is one round, and
// each round alternates short blocks between the two (a machine shared with
// other work changes its speed over seconds, which a long stretch per
// server would measure instead of the server):
//
//   - a block of sequential get_pane_info calls (TMUX_MCP_FLOOR_BLOCK,
//     default 300) to each: server CPU per call (utime+stime of the server
//     process from /proc/PID/stat, and the sum of its threads' schedstat run
//     time, which has nanosecond resolution where stat has 10 ms ticks) and
//     the p50 latency of the block, and the context switches of the
//     server's threads per call (ctxsw/call);
//   - a block of as many round trips of a bare tmux control-mode client
//     (tmux -C) asking display-message for 18 pane fields, tmux's own share
//     of a get_pane_info: its p50 (tmux-p50-us) and the tmux server's CPU
//     per round trip (tmux-tmuxsrv-cpu-us, beside ours-tmuxsrv-cpu-us per
//     get_pane_info);
//   - a block of as many calls with 8 in flight to each: calls per second.
//
// x-p50-floor+tmux is our p50 over the sum of the floor's and the bare
// tmux round trip's: the floor answers without tmux, which we may not.
// It reports each server's median over the rounds (ours-*, floor-*) and the
// median over the rounds of each round's ratio ours/floor: x-cpu and x-p50
// (lower is better) and x-inflight8, our throughput over the floor's
// (higher is better). Run:
//
//	go test ./e2e -run '^$' -bench FloorGetPaneInfo -benchtime 9x
//
// TMUX_MCP_FLOOR_OURS names another build of tmux-mcp to measure instead of
// this tree's (e.g. main's, for a before/after against the same floor).
// With TMUX_MCP_CPUPROFILE_DIR set, both servers write CPU profiles there
// (ours.pprof, floor.pprof; ours is then built with the cpuprofile tag),
// with TMUX_MCP_MEMPROFILE_TOO=1 also allocation profiles (ours.mem.pprof,
// floor.mem.pprof; sampling every 4 KB allocated costs CPU of its own),
// for `go tool pprof -top -diff_base floor.pprof ours.pprof`.
func BenchmarkFloorGetPaneInfo(b *testing.B) {
	ts := tmuxtest.New(b)
	dir := b.TempDir()
	block := 300
	if v, err := strconv.Atoi(os.Getenv("TMUX_MCP_FLOOR_BLOCK")); err == nil && v > 0 {
		block = v
	}
	profDir := os.Getenv("TMUX_MCP_CPUPROFILE_DIR")
	memProf := os.Getenv("TMUX_MCP_MEMPROFILE_TOO") != "" // sampling allocations costs CPU: not by default
	oursBin := binary
	if other := os.Getenv("TMUX_MCP_FLOOR_OURS"); other != "" {
		oursBin = other // another build of ours, e.g. main's, for a before/after
	}
	if profDir != "" {
		oursBin = filepath.Join(dir, "tmux-mcp-prof")
		buildGo(b, oursBin, "-tags", "cpuprofile", "../cmd/tmux-mcp")
	}
	floorBin := filepath.Join(dir, "floorserver")
	buildGo(b, floorBin, "./internal/floorserver")

	env := []string{"TMUX_MCP_AUDIT_LOG=/dev/null"}
	oursCmd := exec.Command(oursBin)
	oursCmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin)
	oursCmd.Env = append(oursCmd.Env, env...)
	if profDir != "" {
		oursCmd.Env = append(oursCmd.Env, "TMUX_MCP_CPUPROFILE="+filepath.Join(profDir, "ours.pprof"))
		if memProf {
			oursCmd.Env = append(oursCmd.Env, "TMUX_MCP_MEMPROFILE="+filepath.Join(profDir, "ours.mem.pprof"))
		}
	}
	ours := startLineClient(b, oursCmd)

	// The canned answers, recorded from our server now.
	answers := map[string]json.RawMessage{}
	for name, args := range floorRecorded {
		answers[name] = ours.result(b, name, args)
	}
	answersFile := filepath.Join(dir, "answers.json")
	data, err := json.Marshal(answers)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(answersFile, data, 0o600); err != nil {
		b.Fatal(err)
	}
	floorCmd := exec.Command(floorBin)
	floorCmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_FLOOR_ANSWERS="+answersFile)
	if profDir != "" {
		floorCmd.Env = append(floorCmd.Env, "TMUX_MCP_CPUPROFILE="+filepath.Join(profDir, "floor.pprof"))
		if memProf {
			floorCmd.Env = append(floorCmd.Env, "TMUX_MCP_MEMPROFILE="+filepath.Join(profDir, "floor.mem.pprof"))
		}
	}
	floor := startLineClient(b, floorCmd)
	// The floor answers exactly what we answer.
	if got, want := floor.result(b, "get_pane_info", floorRecorded["get_pane_info"]), answers["get_pane_info"]; string(got) != string(want) {
		b.Fatalf("the floor answers\n%s\nwhere we answer\n%s", got, want)
	}

	// tmux's own share: a bare control-mode client asking the same server
	// for one pane's fields, the round trip our get_pane_info makes.
	tmuxPID, _ := strconv.Atoi(ts.MustRun("display-message", "-p", "#{pid}"))
	raw := startControlClient(b, ts)

	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_pane_info","arguments":{"pane_id":"%%0"}}}`
	type sample struct{ cpu, stat, p50, rate, tmuxCPU, ctxsw float64 }
	var oursS, floorS, rawS []sample
	var xcpu, xp50, xrate, xp50tmux []float64
	measure := func(c *lineClient) sample {
		var s sample
		cpu0, stat0, tmux0, sw0 := c.schedCPU(b), processCPU(b, c.pid), schedCPU(b, tmuxPID), contextSwitches(b, c.pid)
		lat := c.sequential(b, block, call)
		s.ctxsw = float64(contextSwitches(b, c.pid)-sw0) / float64(block)
		s.cpu = float64((c.schedCPU(b) - cpu0).Microseconds()) / float64(block)
		s.stat = float64((processCPU(b, c.pid) - stat0).Microseconds()) / float64(block)
		s.tmuxCPU = float64((schedCPU(b, tmuxPID) - tmux0).Microseconds()) / float64(block)
		s.p50 = float64(lat.Microseconds())
		return s
	}
	round := 0
	for b.Loop() {
		// Who goes first alternates from round to round.
		first, second := ours, floor
		if round%2 == 1 {
			first, second = floor, ours
		}
		round++
		a, c := measure(first), measure(second)
		tmux0 := schedCPU(b, tmuxPID)
		r := sample{p50: float64(raw.sequential(b, block).Microseconds())}
		r.tmuxCPU = float64((schedCPU(b, tmuxPID) - tmux0).Microseconds()) / float64(block)
		rawS = append(rawS, r)
		ra, rc := first.inflight(b, block, 8, call), second.inflight(b, block, 8, call)
		a.rate, c.rate = ra, rc
		if first == floor {
			a, c = c, a
		}
		oursS, floorS = append(oursS, a), append(floorS, c)
		xcpu = append(xcpu, a.cpu/c.cpu)
		xp50 = append(xp50, a.p50/c.p50)
		xrate = append(xrate, a.rate/c.rate)
		xp50tmux = append(xp50tmux, a.p50/(c.p50+r.p50))
	}
	b.StopTimer()
	pick := func(ss []sample, f func(sample) float64) float64 {
		var v []float64
		for _, s := range ss {
			v = append(v, f(s))
		}
		return medianOf(v)
	}
	for _, side := range []struct {
		name string
		ss   []sample
	}{{"ours", oursS}, {"floor", floorS}} {
		b.ReportMetric(pick(side.ss, func(s sample) float64 { return s.cpu }), side.name+"-cpu-us")
		b.ReportMetric(pick(side.ss, func(s sample) float64 { return s.stat }), side.name+"-statcpu-us")
		b.ReportMetric(pick(side.ss, func(s sample) float64 { return s.p50 }), side.name+"-p50-us")
		b.ReportMetric(pick(side.ss, func(s sample) float64 { return s.rate }), side.name+"-inflight8-calls/s")
		b.ReportMetric(pick(side.ss, func(s sample) float64 { return s.ctxsw }), side.name+"-ctxsw/call")
	}
	b.ReportMetric(pick(oursS, func(s sample) float64 { return s.tmuxCPU }), "ours-tmuxsrv-cpu-us")
	b.ReportMetric(pick(rawS, func(s sample) float64 { return s.p50 }), "tmux-p50-us")
	b.ReportMetric(pick(rawS, func(s sample) float64 { return s.tmuxCPU }), "tmux-tmuxsrv-cpu-us")
	b.ReportMetric(medianOf(xp50tmux), "x-p50-floor+tmux")
	b.ReportMetric(medianOf(xcpu), "x-cpu")
	b.ReportMetric(medianOf(xp50), "x-p50")
	b.ReportMetric(medianOf(xrate), "x-inflight8")
	// The profiles are written when the servers end.
	ours.close()
	floor.close()
}

// floorRecorded are the calls whose answers the floor server is given,
// recorded from our server in the same run.
var floorRecorded = map[string]string{
	"get_pane_info": `{"pane_id":"%0"}`,
	"capture_pane":  `{"pane_id":"%0"}`,
	"list_panes":    `{}`,
}

// buildGo builds a Go main package into out.
func buildGo(b *testing.B, out string, args ...string) {
	b.Helper()
	cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %v: %v\n%s", args, err, msg)
	}
}

// lineClient is a raw JSON-RPC line client of one server process: it
// writes request lines to its stdin and reads answer lines from its stdout,
// with no client library in between.
type lineClient struct {
	pid   int
	in    io.WriteCloser
	r     *bufio.Reader
	cmd   *exec.Cmd
	id    int
	ended bool
}

// startLineClient starts cmd and initializes an MCP session with it. The
// process ends (its stdin is closed) when the benchmark does, if close was
// not called before.
func startLineClient(b *testing.B, cmd *exec.Cmd) *lineClient {
	b.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &lineClient{pid: cmd.Process.Pid, in: in, r: bufio.NewReaderSize(out, 1<<20), cmd: cmd}
	b.Cleanup(c.close)
	c.write(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	c.answer(b)
	c.write(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *lineClient) close() {
	if c.ended {
		return
	}
	c.ended = true
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

func (c *lineClient) write(b *testing.B, line string) {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		b.Fatal(err)
	}
}

// answer returns the next line that carries an id (notifications are
// skipped).
func (c *lineClient) answer(b *testing.B) string {
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.Contains(line, `"id"`) {
			if strings.Contains(line, `"isError":true`) || strings.Contains(line, `"error":{`) {
				b.Fatalf("error answer: %.300s", line)
			}
			return line
		}
	}
}

// result calls one tool and returns the result member of its answer.
func (c *lineClient) result(b *testing.B, tool, args string) json.RawMessage {
	b.Helper()
	c.id++
	c.write(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.id, tool, args))
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.answer(b)), &resp); err != nil || len(resp.Result) == 0 {
		b.Fatalf("%s: %v", tool, err)
	}
	return resp.Result
}

// sequential makes n calls one after another (format has one %d, the id)
// and returns the median latency.
func (c *lineClient) sequential(b *testing.B, n int, format string) time.Duration {
	durs := make([]time.Duration, n)
	for i := range durs {
		c.id++
		line := fmt.Sprintf(format, c.id)
		start := time.Now()
		c.write(b, line)
		c.answer(b)
		durs[i] = time.Since(start)
	}
	slices.Sort(durs)
	return durs[n/2]
}

// inflight makes n calls keeping k in flight (a new request is written as
// each answer arrives) and returns calls per second.
func (c *lineClient) inflight(b *testing.B, n, k int, format string) float64 {
	start := time.Now()
	sent := 0
	for ; sent < k && sent < n; sent++ {
		c.id++
		c.write(b, fmt.Sprintf(format, c.id))
	}
	for got := 0; got < n; got++ {
		c.answer(b)
		if sent < n {
			c.id++
			c.write(b, fmt.Sprintf(format, c.id))
			sent++
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// schedCPU is the CPU time the process's threads have run, summed from
// /proc/PID/task/*/schedstat (nanoseconds). A Go server's threads live as
// long as it does, so the sum does not lose an exited thread's time.
func (c *lineClient) schedCPU(b *testing.B) time.Duration { return schedCPU(b, c.pid) }

// schedCPU is the run time of all of a process's threads (schedstat).
func schedCPU(b *testing.B, pid int) time.Duration {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(raw))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		total += time.Duration(ns)
	}
	return total
}

// contextSwitches is how many times the process's threads have been
// switched out (voluntary and not), from /proc/PID/task/*/status: each
// goroutine hand-off that wakes an idle thread costs a pair.
func contextSwitches(b *testing.B, pid int) int64 {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(raw)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				x, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += x
			}
		}
	}
	return n
}

// processCPU is utime+stime of a process from /proc/PID/stat (10 ms
// ticks), its dead threads included.
func processCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * 10 * time.Millisecond
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// paneFormat asks for 18 pane fields, about what get_pane_info asks.
var paneFormat = "#{pane_id}\x1f#{pane_index}\x1f#{pane_width}\x1f#{pane_height}\x1f#{pane_left}\x1f#{pane_top}\x1f" +
	"#{pane_active}\x1f#{pane_tty}\x1f#{pane_pid}\x1f#{pane_title}\x1f#{pane_current_command}\x1f#{pane_current_path}\x1f" +
	"#{pane_dead}\x1f#{window_id}\x1f#{session_id}\x1f#{session_name}\x1f#{window_index}\x1f#{pane_in_mode}"

// controlClient is a bare tmux control-mode client (tmux -C).
type controlClient struct {
	in io.WriteCloser
	r  *bufio.Reader
}

// startControlClient attaches a control-mode client to ts's first
// session; it is detached (its stdin closed) when the benchmark ends.
func startControlClient(b *testing.B, ts *tmuxtest.Server) *controlClient {
	b.Helper()
	in, out := attachControl(b, ts, "-f", "no-output,ignore-size")
	c := &controlClient{in: in, r: bufio.NewReader(out)}
	c.roundTrip(b) // past the attach's own output
	return c
}

// attachControl runs `tmux -C attach-session args...` on ts and returns
// the client's stdin and stdout. When the benchmark ends its stdin is
// closed (which detaches it) and the process is killed and reaped.
func attachControl(b *testing.B, ts *tmuxtest.Server, args ...string) (io.WriteCloser, io.Reader) {
	b.Helper()
	cmd := exec.Command(ts.Bin, append([]string{"-L", ts.Socket.Name, "-C", "attach-session"}, args...)...)
	cmd.Env = tmuxtest.CleanEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return in, out
}

// roundTrip sends one display-message and reads to its %end.
func (c *controlClient) roundTrip(b *testing.B) {
	if _, err := io.WriteString(c.in, "display-message -p -t %0 '"+paneFormat+"'\n"); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasPrefix(line, "%error") {
			b.Fatalf("tmux: %s", line)
		}
		if strings.HasPrefix(line, "%end") {
			return
		}
	}
}

// sequential makes n round trips and returns the median.
func (c *controlClient) sequential(b *testing.B, n int) time.Duration {
	durs := make([]time.Duration, n)
	for i := range durs {
		start := time.Now()
		c.roundTrip(b)
		durs[i] = time.Since(start)
	}
	slices.Sort(durs)
	return durs[n/2]
}
