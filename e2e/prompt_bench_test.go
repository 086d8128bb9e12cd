package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The benchmarks of issue 20: how soon a program's wait for input is known,
// what send_and_wait costs over the bare minimum, and what a long wait
// costs while nothing happens. Each compares, in the same run and with
// turns alternated in short blocks, against what a bare control-mode
// client sees (and, when TMUX_MCP_PEER_KCRONG names Kcrong/tmux-mcp's
// binary, against its wait_for_stable with its defaults).
//
//	go test -run '^$' -bench 'Prompt|SendAndWait|WaitIdle' -benchtime 1x ./e2e/
//
// TURNS (default 60) sets the turns per benchmark.

// turnScript is the REPL turn the detection benchmark drives: it prints a
// prompt, notes (CLOCK_MONOTONIC) the moment it is about to block reading
// the terminal, reads a line, works 50 ms, answers.
const turnScript = `import sys, time
ts = open(sys.argv[1], 'a', buffering=1)
i = 0
while True:
    sys.stdout.write("turn %d> " % i); sys.stdout.flush()
    ts.write("%d %d\n" % (i, time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
    line = sys.stdin.readline()
    if not line:
        break
    time.sleep(0.05)
    sys.stdout.write("answer %d\n" % i)
    i += 1
`

func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func turns() int {
	if n, err := strconv.Atoi(os.Getenv("TURNS")); err == nil && n > 0 {
		return n
	}
	return 60
}

// observer is a bare control-mode client attached to a session: it notes
// when each pattern match first arrives in a pane's %output.
type observer struct {
	mu   sync.Mutex
	seen map[string]int64
	re   *regexp.Regexp
	cond *sync.Cond
}

func startObserver(b *testing.B, ts *tmuxtest.Server, session string, re *regexp.Regexp) *observer {
	_, stdout := attachControl(b, ts, "-r", "-t", session, "-f", "ignore-size")
	o := &observer{seen: map[string]int64{}, re: re}
	o.cond = sync.NewCond(&o.mu)
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if !strings.HasPrefix(line, "%output ") {
				continue
			}
			at := monoNow()
			for _, m := range re.FindAllString(line, -1) {
				o.mu.Lock()
				if _, ok := o.seen[m]; !ok {
					o.seen[m] = at
				}
				o.cond.Broadcast()
				o.mu.Unlock()
			}
		}
	}()
	return o
}

// wait returns when key was seen, or 0 after timeout.
func (o *observer) wait(key string, timeout time.Duration) int64 {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { o.mu.Lock(); o.cond.Broadcast(); o.mu.Unlock() })
	defer t.Stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		if at, ok := o.seen[key]; ok {
			return at
		}
		if time.Now().After(deadline) {
			return 0
		}
		o.cond.Wait()
	}
}

// blockedAt reads when the turn script was about to block before turn i.
func blockedAt(b *testing.B, path string, i int) int64 {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(data), "\n") {
			f := strings.Fields(l)
			if len(f) == 2 && f[0] == strconv.Itoa(i) {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				return v
			}
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatalf("turn %d never blocked", i)
	return 0
}

func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkPromptDetection: from the moment the program blocks on its
// read (its own timestamp) to wait_for_prompt's answer, against a bare
// control-mode client seeing the prompt's bytes, and against Kcrong's
// wait_for_stable (quiet_ms 400, step_ms 100) on the same kind of turn.
func BenchmarkPromptDetection(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3")
	}
	ts := tmuxtest.New(b)
	dir := b.TempDir()
	script, stamps := filepath.Join(dir, "turn.py"), filepath.Join(dir, "stamps")
	if err := os.WriteFile(script, []byte(turnScript), 0o600); err != nil {
		b.Fatal(err)
	}
	ts.MustRun("new-session", "-d", "-s", "repl", "-x", "100", "-y", "30", "python3 -u "+script+" "+stamps)
	pane := ts.MustRun("display-message", "-p", "-t", "repl", "#{pane_id}")
	obs := startObserver(b, ts, "repl", regexp.MustCompile(`turn [0-9]+>`))
	ours, _ := startLineServer(b, serverCmd(ts, "TMUX_MCP_AUDIT_LOG=/dev/null"))
	var kcrong func(string) string
	if bin := os.Getenv("TMUX_MCP_PEER_KCRONG"); bin != "" {
		cmd := exec.Command(bin)
		cmd.Env = append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.SocketPath(), "TMUX_MCP_TMUX_BIN="+ts.Bin)
		kcrong, _ = startLineServer(b, cmd)
	}
	delays := map[string][]float64{}
	id := 100
	n := turns()
	for i := 0; i < n; i++ {
		who := "ours"
		if kcrong != nil && (i/5)%2 == 1 {
			who = "kcrong"
		}
		blockedAt(b, stamps, i) // the program waits at turn i
		ts.MustRun("send-keys", "-t", pane, "go", "Enter")
		id++
		var resp string
		if who == "ours" {
			resp = ours(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait_for_prompt","arguments":{"pane_id":%q,"timeout":10}}}`, id, pane))
		} else {
			resp = kcrong(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait_for_stable","arguments":{"session":"repl"}}}`, id))
		}
		answered := monoNow()
		if who == "ours" && !strings.Contains(resp, `waiting_for_input`) {
			b.Fatalf("turn %d: %s", i, resp)
		}
		if strings.Contains(resp, `"isError":true`) || strings.Contains(resp, `"error"`) && who == "kcrong" && !strings.Contains(resp, "turn") {
			b.Fatalf("%s turn %d: %s", who, i, resp)
		}
		block := blockedAt(b, stamps, i+1)
		seen := obs.wait(fmt.Sprintf("turn %d>", i+1), 10*time.Second)
		if seen == 0 {
			b.Fatalf("the observer never saw turn %d", i+1)
		}
		delays[who] = append(delays[who], float64(answered-block)/1e6)
		delays["observer"] = append(delays["observer"], float64(seen-block)/1e6)
	}
	for _, who := range []string{"observer", "ours", "kcrong"} {
		if d := delays[who]; len(d) > 0 {
			b.ReportMetric(quantile(d, 0.5), who+"-p50-ms")
			b.ReportMetric(quantile(d, 0.99), who+"-p99-ms")
		}
	}
	b.ReportMetric(quantile(delays["ours"], 0.5)-quantile(delays["observer"], 0.5), "ours-above-observer-p50-ms")
	b.ReportMetric(quantile(delays["ours"], 0.99)-quantile(delays["observer"], 0.99), "ours-above-observer-p99-ms")
	if len(delays["kcrong"]) > 0 {
		b.ReportMetric(quantile(delays["ours"], 0.5)/quantile(delays["kcrong"], 0.5), "ours/kcrong-p50")
	}
}

// BenchmarkSendAndWait: send_and_wait of 1+1 to a Python REPL over stdio,
// against the bare minimum: send-keys written on a control-mode
// connection, until that connection sees the next prompt's bytes.
func BenchmarkSendAndWait(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3")
	}
	ts := tmuxtest.New(b)
	ts.MustRun("new-session", "-d", "-s", "py", "-x", "100", "-y", "30", "python3 -q")
	pane := ts.MustRun("display-message", "-p", "-t", "py", "#{pane_id}")
	tmuxtest.WaitFor(b, 10*time.Second, func() bool {
		out, _ := ts.Run("capture-pane", "-p", "-t", pane)
		return strings.Contains(out, ">>>")
	})
	// The bare client: its own control connection, typing and watching.
	stdin, stdout := attachControl(b, ts, "-t", "py", "-f", "ignore-size")
	lines := make(chan string, 1024)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if os.Getenv("BENCH_DEBUG") != "" {
				fmt.Fprintf(os.Stderr, "bare: %q\n", l)
			}
			lines <- l
		}
	}()
	// Each turn computes a different sum, so neither side can take an
	// earlier turn's answer for its own.
	k := 1000
	// bare types with a tmux send-keys process (exec) or, the floor, on
	// the observer's own control connection.
	bare := func(exec bool) float64 {
		k++
		want := fmt.Sprintf("%d", k+1)
		for len(lines) > 0 {
			<-lines
		}
		start := time.Now()
		if exec {
			ts.MustRun("send-keys", "-t", pane, fmt.Sprintf("%d+1", k), "Enter")
		} else if _, err := io.WriteString(stdin, fmt.Sprintf("send-keys -t %s %d+1 Enter\n", pane, k)); err != nil {
			b.Fatal(err)
		}
		// The pane's output since the keys, unescaped: the answer's line
		// and then the prompt, however tmux splits it into events.
		var seen strings.Builder
		timeout := time.After(10 * time.Second)
		for {
			var l string
			select {
			case l = <-lines:
			case <-timeout:
				b.Fatalf("the bare client never saw %s and a prompt: %q", want, seen.String())
			}
			rest, ok := strings.CutPrefix(l, "%output "+pane+" ")
			if !ok {
				continue
			}
			seen.WriteString(unescapeOutput(strings.TrimSuffix(rest, "\n")))
			if s := seen.String(); strings.Contains(s, "\r\n"+want+"\r\n") && strings.HasSuffix(s, ">>> ") {
				return float64(time.Since(start).Microseconds()) / 1000
			}
		}
	}
	ours, _ := startLineServer(b, serverCmd(ts, "TMUX_MCP_AUDIT_LOG=/dev/null"))
	id := 100
	send := func() float64 {
		id++
		k++
		start := time.Now()
		resp := ours(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send_and_wait","arguments":{"pane_id":%q,"keys":"%d+1"}}}`, id, pane, k))
		el := float64(time.Since(start).Microseconds()) / 1000
		if !strings.Contains(resp, fmt.Sprintf(`"output":["%d"]`, k+1)) || !strings.Contains(resp, `"prompt":"\u003e\u003e\u003e "`) {
			b.Fatalf("%s", resp)
		}
		return el
	}
	// Settle: both paths warm (the first send_and_wait attaches a watcher).
	for range 3 {
		bare(true)
		bare(false)
		send()
	}
	var execMs, connMs, oursMs []float64
	n := turns()
	for i := 0; i < n; i++ {
		switch (i / 5) % 3 {
		case 0:
			execMs = append(execMs, bare(true))
		case 1:
			connMs = append(connMs, bare(false))
		default:
			oursMs = append(oursMs, send())
		}
		time.Sleep(20 * time.Millisecond) // let the REPL's output drain
	}
	b.ReportMetric(quantile(execMs, 0.5), "bare-exec-send-keys-p50-ms")
	b.ReportMetric(quantile(connMs, 0.5), "bare-control-send-keys-p50-ms")
	b.ReportMetric(quantile(oursMs, 0.5), "send_and_wait-p50-ms")
	b.ReportMetric(quantile(oursMs, 0.5)/quantile(execMs, 0.5), "ratio-to-exec-p50")
	b.ReportMetric(quantile(oursMs, 0.5)/quantile(connMs, 0.5), "ratio-to-control-p50")
}

// BenchmarkWaitIdle: a 5 s wait_for_prompt on a program that never reads
// (sleep): the processes the server starts meanwhile (sampled every
// millisecond among its descendants) and the CPU it uses, as a share of
// one core.
func BenchmarkWaitIdle(b *testing.B) {
	ts := tmuxtest.New(b)
	ts.MustRun("new-session", "-d", "-s", "idle", "sleep 600")
	pane := ts.MustRun("display-message", "-p", "-t", "idle", "#{pane_id}")
	ours, pid := startLineServer(b, serverCmd(ts, "TMUX_MCP_AUDIT_LOG=/dev/null"))
	// Warm: the watcher is attached by a first short wait.
	ours(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait_for_prompt","arguments":{"pane_id":%q,"timeout":0.2}}}`, pane))
	before := descendantSet(pid)
	cpu0 := cpuTicks(b, pid)
	start := time.Now()
	done := make(chan string, 1)
	go func() {
		done <- ours(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait_for_prompt","arguments":{"pane_id":%q,"timeout":5}}}`, pane))
	}()
	spawned := map[int]bool{}
	for waiting := true; waiting; {
		select {
		case resp := <-done:
			if !strings.Contains(resp, `"outcome":"timeout"`) {
				b.Fatalf("%s", resp)
			}
			waiting = false
		case <-time.After(time.Millisecond):
			for p := range descendantSet(pid) {
				if !before[p] {
					spawned[p] = true
				}
			}
		}
	}
	el := time.Since(start)
	cpu := float64(cpuTicks(b, pid)-cpu0) / 100 // clock ticks to seconds
	b.ReportMetric(float64(len(spawned)), "processes-spawned")
	b.ReportMetric(100*cpu/el.Seconds(), "cpu-percent-of-a-core")
}

// descendants are the live processes below pid.
func descendantSet(pid int) map[int]bool {
	out := map[int]bool{}
	var walk func(int)
	walk = func(p int) {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", p, t.Name()))
			for _, w := range strings.Fields(string(b)) {
				c, _ := strconv.Atoi(w)
				if !out[c] {
					out[c] = true
					walk(c)
				}
			}
		}
	}
	walk(pid)
	return out
}

// cpuTicks is a process's user and system time, in clock ticks.
func cpuTicks(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// unescapeOutput decodes a %output payload (octal escapes for bytes below
// space and for the backslash).
func unescapeOutput(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s)+0 && i+3 <= len(s)-1+1 {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
