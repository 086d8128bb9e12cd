package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// canary is a file (or symlink) placed where a fuzzed socket argument would
// resolve; nothing may change or remove it.
type canary struct {
	path   string
	link   string // symlink target, when the canary is a symlink
	sum    [32]byte
	events int
}

func (c *canary) write(t testing.TB) {
	if c.link != "" {
		_ = os.Remove(c.path)
		if err := os.Symlink(c.link, c.path); err != nil {
			t.Fatal(err)
		}
		return
	}
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	if err := os.WriteFile(c.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c.sum = sha256.Sum256(b)
}

// intact reports whether the canary is unchanged, and what happened if not.
func (c *canary) intact() (bool, string) {
	fi, err := os.Lstat(c.path)
	if err != nil {
		return false, "gone: " + err.Error()
	}
	if c.link != "" {
		if fi.Mode()&fs.ModeSymlink == 0 {
			return false, "symlink replaced by " + fi.Mode().String()
		}
		if to, _ := os.Readlink(c.path); to != c.link {
			return false, "symlink now points to " + to
		}
		return true, ""
	}
	if !fi.Mode().IsRegular() {
		return false, "regular file replaced by " + fi.Mode().String()
	}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return false, err.Error()
	}
	if sha256.Sum256(b) != c.sum {
		return false, "content changed"
	}
	return true, ""
}

// fuzzCounts are the fuzz's tallies.
type fuzzCounts struct {
	calls, ok, toolErrors, protocolErrors, timeouts, crashes, unclear, tmuxStuck atomic.Int64
}

// fuzzRun is the state shared by the workers: the live server process (it
// is restarted after a crash, so one crash does not end the run), the
// canaries and the findings.
type fuzzRun struct {
	t   *testing.T
	ts  *tmuxtest.Server
	env *fuzzEnv

	mu     sync.Mutex
	gen    int
	proc   *faultProc
	cs     *mcp.ClientSession
	srvEnv []string

	canaryMu sync.Mutex
	canaries []*canary

	counts       fuzzCounts
	inflight     atomic.Int64
	callID       atomic.Int64
	inflightDesc sync.Map     // call id -> description, for timeout reports
	lastTmuxOK   atomic.Int64 // unix nanoseconds of the last probe tmux answered
	recentMu     sync.Mutex
	recentCalls  []timedDesc
	findMu       sync.Mutex
	findings     map[string][]string // kind -> examples
	dumped       atomic.Bool         // the server was asked for its goroutines (once a run)
}

// dumpGoroutines asks p (SIGUSR1) to log its goroutines while a call has
// gone unanswered for callBound, so a hang shows where the server waits;
// once a run.
func (f *fuzzRun) dumpGoroutines(p *faultProc) {
	if p.alive() && f.dumped.CompareAndSwap(false, true) {
		_ = p.cmd.Process.Signal(syscall.SIGUSR1)
	}
}

// goroutinesOf finds the last goroutine dump in a server's stderr. It
// returns the dump reduced to the stacks that pass through tmux-mcp's own
// packages (where a hang is) and stderr without the dump's record; ours is
// "" when there is no complete dump.
func goroutinesOf(stderr string) (ours, rest string) {
	i := strings.LastIndex(stderr, `"msg":"goroutine dump (SIGUSR1)"`)
	if i < 0 {
		return "", stderr
	}
	start := strings.LastIndexByte(stderr[:i], '\n') + 1
	end := strings.IndexByte(stderr[i:], '\n')
	if end < 0 {
		return "", stderr // not all written yet
	}
	var rec struct {
		Goroutines string `json:"goroutines"`
	}
	if json.Unmarshal([]byte(stderr[start:i+end]), &rec) != nil {
		return "", stderr
	}
	var groups []string
	for _, group := range strings.Split(rec.Goroutines, "\n\n") {
		if strings.Contains(group, "tmux-mcp/internal/") {
			groups = append(groups, compactStack(group))
		}
	}
	return strings.Join(groups, "\n"), stderr[:start] + stderr[i+end+1:]
}

// compactStack shortens one group of pprof's debug=1 goroutine profile
// ("N @ 0x… 0x…" then "#\t0xPC\tfunc+0xOFF\tfile:line" per frame) to
// "N goroutines:" and one "func file:line" per frame.
func compactStack(group string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(group), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[1] == "@":
			fmt.Fprintf(&b, "%s goroutines:\n", f[0])
		case len(f) >= 4 && f[0] == "#":
			fn := f[2]
			if k := strings.LastIndex(fn, "+0x"); k > 0 {
				fn = fn[:k]
			}
			fmt.Fprintf(&b, "  %s %s\n", strings.TrimPrefix(fn, "github.com/tmux-mcp/tmux-mcp/"), filepath.Base(f[3]))
		}
	}
	return b.String()
}

func (f *fuzzRun) note(kind, msg string) {
	f.findMu.Lock()
	defer f.findMu.Unlock()
	limit := 8
	if kind == "clobbered" || kind == "executed" || kind == "crash" {
		limit = 100
	}
	if len(f.findings[kind]) < limit {
		f.findings[kind] = append(f.findings[kind], msg)
	}
}

func (f *fuzzRun) current() (int, *faultProc, *mcp.ClientSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen, f.proc, f.cs
}

// restart replaces a crashed server (once per generation).
func (f *fuzzRun) restart(gen int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen != gen {
		return nil
	}
	p := startFault(f.t, f.ts, f.env.workdir, f.srvEnv...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "faults", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		return fmt.Errorf("reconnect after crash: %w (%s)", err, p.exitDescription())
	}
	f.gen++
	f.proc, f.cs = p, cs
	return nil
}

// checkCanaries records every canary that changed since the last check
// with desc, the call just made (in the concurrent phase another call in
// flight may be the culprit; the sweep is exact), then restores it so later
// damage is counted too.
func (f *fuzzRun) checkCanaries(desc string) {
	f.canaryMu.Lock()
	defer f.canaryMu.Unlock()
	for _, c := range f.canaries {
		ok, what := c.intact()
		if ok {
			continue
		}
		c.events++
		f.note("clobbered", fmt.Sprintf("%s %s, seen after %s", c.path, what, desc))
		if fi, err := os.Lstat(c.path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			f.killServerAt(c.path)
		}
		_ = os.Remove(c.path)
		c.write(f.t)
	}
}

// killServerAt ends a tmux server the fuzz started on another socket.
func (f *fuzzRun) killServerAt(path string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.ts.Bin, "-S", path, "kill-server")
	cmd.Env = tmuxtest.CleanEnv()
	_ = cmd.Run()
}

// callBound is how long one fuzzed call may take (waits are clamped to 2 s
// by TMUX_MCP_WAIT_MAX_SECONDS); longer counts as a hang.
const callBound = 15 * time.Second

// do makes one call and files its outcome; it returns false when the run
// cannot go on (the server could not be restarted after a crash).
func (f *fuzzRun) do(name string, args map[string]any, aimed bool, tally *[2]atomic.Int64) bool {
	raw, _ := json.Marshal(args)
	desc := fmt.Sprintf("%s %s", name, clip(string(raw), 400))
	gen, p, cs := f.current()
	f.inflight.Add(1)
	defer f.inflight.Add(-1)
	id := f.callID.Add(1)
	f.inflightDesc.Store(id, desc)
	defer f.inflightDesc.Delete(id)
	f.remember(desc)
	// Wait past the bound (up to twice it) to tell a slow answer from none.
	ctx, cancel := context.WithTimeout(context.Background(), 2*callBound)
	start := time.Now()
	watchdog := time.AfterFunc(callBound, func() { f.dumpGoroutines(p) })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	watchdog.Stop()
	cancel()
	f.counts.calls.Add(1)
	tally[0].Add(1)
	if err != nil && p.alive() {
		time.Sleep(20 * time.Millisecond) // let a dying process finish dying
	}
	ok := true
	switch {
	case !p.alive():
		f.counts.crashes.Add(1)
		f.note("crash", fmt.Sprintf("%s -> %v; server %s", desc, err, p.exitDescription()))
		if err := f.restart(gen); err != nil {
			f.note("crash", err.Error())
			ok = false
		}
	case errors.Is(err, context.DeadlineExceeded) || took > callBound:
		f.counts.timeouts.Add(1)
		// Is tmux itself stuck (something the fuzz did to it) or the server?
		t0 := time.Now()
		_, terr := tmuxRun(f.ts, 5*time.Second, "display-message", "-p", "ok")
		answer := "no answer"
		if err == nil {
			answer = fmt.Sprintf("answered isError=%v %q", res.IsError, clip(resultText(res), 120))
		}
		var others []string
		f.inflightDesc.Range(func(k, v any) bool {
			if k != id {
				others = append(others, clip(v.(string), 160))
			}
			return true
		})
		f.note("timeout", fmt.Sprintf("%s took %v (bound %v): %s; tmux answered a direct display-message in %v (err=%v); other calls in flight: %v; calls started in the 3 s before it: %v",
			desc, took.Round(time.Millisecond), callBound, answer, time.Since(t0).Round(time.Millisecond), terr, others, f.recent(start.Add(-3*time.Second), start)))
		if f.counts.timeouts.Load() == 1 {
			g, st := goroutinesOf(p.stderr.String())
			if g != "" {
				f.note("timeout", "the server's goroutines in tmux-mcp code, dumped after "+callBound.String()+" without an answer:\n"+clip(g, 8000))
			}
			f.note("timeout", "server stderr (last 2000 bytes) at the first timeout: "+st[max(0, len(st)-2000):])
		}
	case err != nil:
		f.counts.protocolErrors.Add(1)
		f.note("protocol_error:"+name, fmt.Sprintf("%s -> %v", desc, clip(err.Error(), 200)))
	case res.IsError:
		f.counts.toolErrors.Add(1)
		tally[1].Add(1)
		if txt := resultText(res); strings.Contains(txt, "Unexpected error") || strings.Contains(txt, "panic") {
			f.counts.unclear.Add(1)
			f.note("unclear_error", fmt.Sprintf("%s -> %s", desc, clip(txt, 200)))
		}
		if os.Getenv("TMUX_MCP_FAULT_DEBUG") != "" {
			f.note("debug:"+name, fmt.Sprintf("%s -> %s", clip(desc, 200), clip(resultText(res), 150)))
		}
	default:
		f.counts.ok.Add(1)
		f.env.learn(res.StructuredContent)
	}
	if aimed {
		f.checkCanaries(desc)
	}
	return ok
}

// remember keeps the last calls made, for timeout reports.
func (f *fuzzRun) remember(desc string) {
	f.recentMu.Lock()
	defer f.recentMu.Unlock()
	f.recentCalls = append(f.recentCalls, timedDesc{time.Now(), clip(desc, 300)})
	if len(f.recentCalls) > 400 {
		f.recentCalls = append([]timedDesc(nil), f.recentCalls[200:]...)
	}
}

func (f *fuzzRun) recent(from, to time.Time) []string {
	f.recentMu.Lock()
	defer f.recentMu.Unlock()
	var out []string
	for _, c := range f.recentCalls {
		if !c.at.Before(from) && !c.at.After(to) {
			out = append(out, c.at.Format("15:04:05.000")+" "+c.desc)
		}
	}
	return out
}

type timedDesc struct {
	at   time.Time
	desc string
}

// sweep aims each tool in tools at each canary target in turn, with its
// required arguments filled in, one call at a time, so a clobber is pinned
// to the exact call. It is the deterministic half of the clobber run.
func (f *fuzzRun) sweep(g *gen, tools []string, perTool map[string]*[2]atomic.Int64) {
	e := f.env
	var targets [][2]string
	for _, n := range []string{"cn-plain", "./cn-plain", "sub/cn-sub", "../cn-up1", "../../cn-up2", "../../work/cn-rel"} {
		targets = append(targets, [2]string{"socket_name", n})
	}
	for _, p := range []string{filepath.Join(e.root, "cn-abs"), "~/cn-home", "cn-rel", "./cn-rel2", "../cn-relup",
		"sub/../cn-rel", filepath.Join(e.root, "cn-link"), filepath.Join(e.workdir, "cn-rel"),
		filepath.Join(e.sockdir, "cn-plain"), filepath.Join(e.sockdir, "..", "cn-up1")} {
		targets = append(targets, [2]string{"socket_path", p})
	}
	for _, name := range tools {
		props, _ := g.tools[name]["properties"].(map[string]any)
		for i, tg := range targets {
			args := g.required(name)
			if name == "create_session" {
				args["session_name"] = fmt.Sprintf("sweep%d", i)
			}
			switch {
			case props[tg[0]] != nil:
				args[tg[0]] = tg[1]
			case props["extra_socket_paths"] != nil && tg[0] == "socket_path":
				args["extra_socket_paths"] = []string{tg[1]}
			default:
				continue
			}
			if !f.do(name, args, true, perTool[name]) {
				return
			}
		}
	}
}

// TestFaultFuzz calls every tool (destructive tier) with arguments made from
// its input schema, right and wrong types, boundary numbers, long strings,
// NUL, unicode, tmux-format and shell metacharacters, with socket arguments
// confined to the test's temp root. Each call must return within a bound
// and leave the server running; canary files at the socket targets must be
// untouched; no payload outside a shell field may run.
func TestFaultFuzz(t *testing.T) {
	dur, long := faultDuration(t)
	seed := time.Now().UnixNano()
	if v := os.Getenv("TMUX_MCP_FAULT_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("TMUX_MCP_FAULT_SEED=%q: %v", v, err)
		}
	}
	t.Logf("fuzz seed %d (replay with TMUX_MCP_FAULT_SEED=%d), duration %v", seed, seed, dur)
	fmt.Printf("faults: fuzz seed=%d duration=%v\n", seed, dur)

	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &fuzzEnv{
		root:     root,
		tmpdir:   filepath.Join(root, "tt"),
		workdir:  filepath.Join(root, "work"),
		home:     filepath.Join(root, "home"),
		pwned:    filepath.Join(root, "pwned"),
		shellok:  filepath.Join(root, "shellok"),
		pipedir:  filepath.Join(root, "pipe"),
		freshdir: filepath.Join(root, "fresh"),
	}
	e.sockdir = filepath.Join(e.tmpdir, fmt.Sprintf("tmux-%d", os.Geteuid()))
	panesDir := filepath.Join(root, "panes")
	for _, d := range []string{e.tmpdir, e.workdir, filepath.Join(e.workdir, "sub"), e.home, e.pwned, e.shellok, e.pipedir, e.freshdir, panesDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(e.sockdir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(e.sockdir, 0o700)
	// The isolated tmux server, its shells and the server under test all see
	// the temp TMUX_TMPDIR and HOME; panes start in panesDir.
	t.Setenv("TMUX_TMPDIR", e.tmpdir)
	t.Setenv("HOME", e.home)
	t.Setenv("SHELL", "/bin/sh")
	t.Setenv("HISTFILE", filepath.Join(e.home, "history"))
	t.Chdir(panesDir)
	ts := tmuxtest.NewWith(t, "main", "aux")
	ts.MustRun("split-window", "-d", "-t", "aux")
	e.mainName = ts.Socket.Name
	e.mainPath = ts.SocketPath()
	t.Cleanup(func() { killOtherServers(ts, e) })

	f := &fuzzRun{t: t, ts: ts, env: e, findings: map[string][]string{}, gen: -1,
		srvEnv: []string{"TMUX_MCP_SAFETY=destructive", "TMUX_MCP_WAIT_MAX_SECONDS=2"}}
	for _, p := range []string{
		filepath.Join(e.sockdir, "cn-plain"), filepath.Join(e.sockdir, "sub", "cn-sub"),
		filepath.Join(e.tmpdir, "cn-up1"), filepath.Join(root, "cn-up2"), filepath.Join(root, "cn-abs"),
		filepath.Join(e.home, "cn-home"), filepath.Join(e.workdir, "cn-rel"), filepath.Join(e.workdir, "cn-rel2"),
		filepath.Join(root, "cn-relup"), filepath.Join(root, "cn-target"),
	} {
		c := &canary{path: p}
		c.write(t)
		f.canaries = append(f.canaries, c)
	}
	link := &canary{path: filepath.Join(root, "cn-link"), link: filepath.Join(root, "cn-target")}
	link.write(t)
	f.canaries = append(f.canaries, link)
	// Positive control for the clobber check: tmux itself, started on a
	// canary, replaces it, and intact must see that.
	ctl := &canary{path: filepath.Join(root, "control-canary")}
	ctl.write(t)
	ctlCmd := exec.Command(ts.Bin, "-f", "/dev/null", "-S", ctl.path, "new-session", "-d")
	ctlCmd.Env = tmuxtest.CleanEnv()
	if out, err := ctlCmd.CombinedOutput(); err != nil {
		t.Fatalf("control: tmux -S %s: %v %s", ctl.path, err, out)
	}
	if ok, what := ctl.intact(); ok {
		t.Fatal("control: a tmux server started on a canary file went unnoticed")
	} else {
		t.Logf("control: tmux on a canary file is detected (%s)", what)
	}
	f.killServerAt(ctl.path)
	_ = os.Remove(ctl.path)
	before := map[string]bool{}
	_ = filepath.WalkDir(root, func(p string, _ fs.DirEntry, _ error) error { before[p] = true; return nil })

	if err := f.restart(-1); err != nil {
		t.Fatal(err)
	}
	_, _, cs := f.current()
	tools := map[string]map[string]any{}
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var s map[string]any
		_ = json.Unmarshal(raw, &s)
		tools[tool.Name] = s
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if len(names) < 50 {
		t.Fatalf("tools/list at the destructive tier lists %d tools", len(names))
	}

	// Positive control: a command run where commands are meant to run does
	// leave its marker, so an empty pwned directory means something.
	control := filepath.Join(e.shellok, "control")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command",
		Arguments: map[string]any{"pane_id": "%0", "command": "touch " + control, "timeout": 10}})
	if err != nil || res.IsError {
		t.Fatalf("positive control run_command: %v %s", err, resultText(res))
	}
	if _, err := os.Stat(control); err != nil {
		t.Fatalf("positive control: run_command did not create its marker: %v", err)
	}
	_ = os.Remove(control)

	stop := make(chan struct{})
	var maint sync.WaitGroup
	maint.Add(1)
	go func() {
		defer maint.Done()
		tick := time.NewTicker(700 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			f.tend()
			if n%4 == 3 {
				killOtherServers(ts, e)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	perTool := map[string]*[2]atomic.Int64{}
	for _, n := range names {
		perTool[n] = &[2]atomic.Int64{}
	}
	sweepTools := names
	if !long {
		sweepTools = []string{"create_session", "create_window", "get_server_info", "list_sessions", "list_servers", "kill_server"}
	}
	sweepStart := time.Now()
	f.sweep(&gen{r: mrand.New(mrand.NewSource(seed)), env: e, tools: tools, names: names}, sweepTools, perTool)
	t.Logf("clobber sweep: %d tools x 16 canary targets in %v", len(sweepTools), time.Since(sweepStart).Round(time.Millisecond))

	const workers = 3
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &gen{r: mrand.New(mrand.NewSource(seed + int64(w))), env: e, tools: tools, names: names}
			for time.Now().Before(deadline) {
				name := names[g.r.Intn(len(names))]
				if name == "kill_server" && g.r.Intn(5) > 0 {
					name = "get_server_info" // a killed server makes the next calls shallow
				}
				args := g.args(name)
				if !f.do(name, args, g.canary, perTool[name]) {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	maint.Wait()
	f.unstick()
	time.Sleep(500 * time.Millisecond) // let injected shells finish
	f.checkCanaries("the end of the run")

	clobbered := 0
	for _, c := range f.canaries {
		clobbered += c.events
	}
	executed, shellRan := markers(e.pwned), markers(e.shellok)
	for _, m := range executed {
		where, _ := e.markers.Load(m)
		f.note("executed", fmt.Sprintf("payload %s ran from %v", m, where))
	}
	var stray []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, _ error) error {
		if before[p] || d == nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		top := strings.Split(rel, string(filepath.Separator))[0]
		if top == "pipe" || top == "shellok" || top == "panes" || top == "fresh" || top == "home" ||
			strings.HasPrefix(filepath.Base(p), "pipe-rel-") || d.Type()&fs.ModeSocket != 0 {
			return nil
		}
		stray = append(stray, rel)
		return nil
	})

	c := &f.counts
	line := fmt.Sprintf("faults: seed=%d calls=%d ok=%d tool_errors=%d protocol_errors=%d timeouts=%d crashes=%d tmux_stuck=%d clobbered=%d executed=%d shell_executed=%d unclear_errors=%d stray_files=%d",
		seed, c.calls.Load(), c.ok.Load(), c.toolErrors.Load(), c.protocolErrors.Load(), c.timeouts.Load(),
		c.crashes.Load(), c.tmuxStuck.Load(), clobbered, len(executed), len(shellRan), c.unclear.Load(), len(stray))
	f.findMu.Lock()
	kinds := make([]string, 0, len(f.findings))
	for k := range f.findings {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		for _, m := range f.findings[k] {
			t.Logf("%s: %s", k, m)
		}
	}
	f.findMu.Unlock()
	if len(stray) > 0 {
		t.Logf("files created outside tmux's socket directory and the fuzz's own directories (informational): %v", clip(fmt.Sprint(stray), 600))
	}
	if long || testing.Verbose() {
		var per []string
		for _, n := range names {
			per = append(per, fmt.Sprintf("%s=%d/%d", n, perTool[n][1].Load(), perTool[n][0].Load()))
		}
		t.Logf("per tool (isError/calls): %s", strings.Join(per, " "))
	}
	t.Log(line)
	fmt.Println(line)
	if c.calls.Load() < int64(len(names)) {
		t.Errorf("only %d calls in %v", c.calls.Load(), dur)
	}
	if n := c.crashes.Load(); n > 0 {
		t.Errorf("%d crashes", n)
	}
	if n := c.timeouts.Load(); n > 0 {
		// The details again, last: CI keeps only the head and the tail of
		// a failing test's output, and the findings above sit between.
		f.findMu.Lock()
		var details []string
		for _, d := range f.findings["timeout"] {
			details = append(details, clip(d, 8000))
		}
		f.findMu.Unlock()
		t.Errorf("%d calls hung past %v:\n%s", n, callBound, strings.Join(details, "\n"))
	}
	if n := c.tmuxStuck.Load(); n > 0 {
		t.Errorf("%d times a call left the tmux server unresponsive (see tmux_stuck above)", n)
	}
	if clobbered > 0 {
		t.Errorf("%d canary files clobbered", clobbered)
	}
	if len(executed) > 0 {
		t.Errorf("%d injected payloads ran from non-shell fields", len(executed))
	}
}

// markers lists the marker files injected payloads created in dir.
func markers(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// tend keeps the isolated server usable for the fuzz: sessions main and aux
// exist (restarting the server if a kill_server ended it), extra sessions,
// windows and panes are pruned, and the target pools are refreshed.
func (f *fuzzRun) tend() {
	ts, e := f.ts, f.env
	f.unstick()
	for _, s := range []string{"main", "aux"} {
		if _, err := tmuxRun(ts, 5*time.Second, "has-session", "-t", "="+s); err != nil {
			_, _ = tmuxRun(ts, 5*time.Second, "new-session", "-d", "-s", s, "-x", "80", "-y", "24")
		}
	}
	out, err := tmuxRun(ts, 5*time.Second, "list-panes", "-a", "-F", "#{session_name}\t#{session_id}\t#{window_id}\t#{pane_id}\t#{window_index}")
	if err != nil {
		return
	}
	var panes, wins, sess []string
	winsOf := map[string][]string{}
	panesOf := map[string][]string{}
	extra := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			continue
		}
		if f[0] != "main" && f[0] != "aux" {
			extra[f[1]] = true
		}
		if !slices.Contains(sess, f[1]) {
			sess = append(sess, f[1])
		}
		if !slices.Contains(winsOf[f[1]], f[2]) {
			winsOf[f[1]] = append(winsOf[f[1]], f[2])
			wins = append(wins, f[2])
		}
		panesOf[f[2]] = append(panesOf[f[2]], f[3])
		panes = append(panes, f[3])
	}
	if len(extra) > 2 {
		for s := range extra {
			_, _ = tmuxRun(ts, 5*time.Second, "kill-session", "-t", s)
		}
	}
	for _, ws := range winsOf {
		for _, w := range ws[min(len(ws), 3):] {
			_, _ = tmuxRun(ts, 5*time.Second, "kill-window", "-t", w)
		}
	}
	for _, ps := range panesOf {
		for _, p := range ps[min(len(ps), 3):] {
			_, _ = tmuxRun(ts, 5*time.Second, "kill-pane", "-t", p)
		}
	}
	// Keep windows small: a fuzzed 10000x10000 window makes every later
	// capture slow for reasons that are tmux's, not the server's.
	if sizes, err := tmuxRun(ts, 5*time.Second, "list-windows", "-a", "-F", "#{window_id} #{window_width} #{window_height}"); err == nil {
		for _, l := range strings.Split(sizes, "\n") {
			var id string
			var w, h int
			if n, _ := fmt.Sscan(l, &id, &w, &h); n == 3 && w*h > 500*200 {
				_, _ = tmuxRun(ts, 5*time.Second, "resize-window", "-t", id, "-x", "80", "-y", "24")
			}
		}
	}
	e.poolMu.Lock()
	e.panes, e.wins, e.sess = panes, wins, sess
	e.poolMu.Unlock()
}

// errTmuxTimeout is tmuxRun's error when tmux did not answer in time.
var errTmuxTimeout = errors.New("tmux did not answer in time")

// tmuxRun runs one tmux command on the test's server with a short deadline
// that also covers its pipes (WaitDelay), so a wedged tmux cannot stall the
// harness.
func tmuxRun(ts *tmuxtest.Server, d time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, ts.Bin, append([]string{"-u", "-f", "/dev/null", "-L", ts.Socket.Name}, args...)...)
	cmd.Env = tmuxtest.CleanEnv()
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", fmt.Errorf("tmux %s: %w", strings.Join(args, " "), errTmuxTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, clip(string(out), 200))
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// unstick checks that the test's tmux server still answers. A fuzzed call
// can send tmux into a long loop (e.g. a huge repeat count); then every
// later call times out for reasons the report must show. The stuck server
// is counted, the calls made just before it are reported, and it is killed
// by pid (it runs on this test's unique socket) so tend can start a new one.
func (f *fuzzRun) unstick() {
	t0 := time.Now()
	// Only a probe that gets no answer counts: an error (no server, a
	// server shutting down after kill_server) is an answer.
	if _, err := tmuxRun(f.ts, 5*time.Second, "display-message", "-p", "ok"); !errors.Is(err, errTmuxTimeout) {
		if err == nil {
			f.lastTmuxOK.Store(t0.UnixNano())
		}
		return
	}
	if _, err := tmuxRun(f.ts, 5*time.Second, "display-message", "-p", "ok"); !errors.Is(err, errTmuxTimeout) {
		return
	}
	f.counts.tmuxStuck.Add(1)
	var killed []string
	for _, pi := range tmuxServersOn(f.env.mainName) {
		_ = syscall.Kill(pi.pid, syscall.SIGKILL)
		killed = append(killed, strconv.Itoa(pi.pid))
	}
	// The culprit started after tmux last answered (or just before).
	from := t0.Add(-6 * time.Second)
	if ok := f.lastTmuxOK.Load(); ok != 0 {
		from = time.Unix(0, ok).Add(-300 * time.Millisecond)
	}
	f.note("tmux_stuck", fmt.Sprintf("the test's tmux server stopped answering (killed pid %v); calls started between its last answer and the probe that failed: %v",
		killed, f.recent(from, t0)))
}

// tmuxServersOn finds the tmux server processes serving the socket named
// name (a random name unique to this test).
func tmuxServersOn(name string) []procInfo {
	ents, _ := os.ReadDir("/proc")
	var out []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if strings.TrimSpace(string(comm)) != "tmux: server" {
			continue
		}
		if pi, ok := readProc(pid); ok && strings.Contains(pi.cmdline, name) {
			out = append(out, pi)
		}
	}
	return out
}

// killOtherServers ends the tmux servers the fuzz started on sockets other
// than the test's own (fresh names and paths, anywhere under the temp root).
func killOtherServers(ts *tmuxtest.Server, e *fuzzEnv) {
	_ = filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSocket == 0 || p == e.mainPath {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, ts.Bin, "-S", p, "kill-server")
		cmd.Env = tmuxtest.CleanEnv()
		_ = cmd.Run()
		return nil
	})
}
