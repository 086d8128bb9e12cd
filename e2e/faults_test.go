package e2e

// The protocol-and-fault suite of issue 9: malformed JSON-RPC lines,
// signals and kills, and (faults_fuzz_test.go) a schema-driven fuzz of every
// tool's arguments with clobber and injection canaries. Every test drives the
// built binary over stdio against an isolated tmux server. Run it longer with
// scripts/faults.sh; unset TMUX_MCP_FAULT_DURATION runs a ~20 s version.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// malformedCase is one hostile input line and what a correct server answers.
type malformedCase struct {
	kind  string
	input string
	// check judges the replies read before the follow-up ping was answered;
	// "" means the case passed.
	check func(replies []rpcReply) string
}

// expectError wants a reply with one of codes whose id text is one of ids.
// strictIDs also refuses any other reply id (an id must never be altered).
func expectError(codes []int, ids []string, strictIDs bool) func([]rpcReply) string {
	return func(replies []rpcReply) string {
		found := false
		for _, m := range replies {
			id := string(m.ID)
			if id == `"init"` || id == `"after"` {
				continue
			}
			if m.Error != nil && slices.Contains(codes, m.Error.Code) && slices.Contains(ids, id) {
				found = true
				continue
			}
			if strictIDs {
				return fmt.Sprintf("unexpected reply %v (an id must come back unaltered or as null)", m)
			}
		}
		if !found {
			return fmt.Sprintf("want an error %v with id in %v; got %v", codes, ids, replies)
		}
		return ""
	}
}

// answeredOr accepts either replies for every id in ids or an error reply
// with id null and one of codes (for inputs a server may legitimately split
// or refuse as a whole).
func answeredOr(ids []string, codes []int) func([]rpcReply) string {
	return func(replies []rpcReply) string {
		seen := map[string]bool{}
		for _, m := range replies {
			seen[string(m.ID)] = true
			if string(m.ID) == "null" && m.Error != nil && slices.Contains(codes, m.Error.Code) {
				return ""
			}
		}
		for _, id := range ids {
			if !seen[id] {
				return fmt.Sprintf("want replies for %v or an error %v with id null; got %v", ids, codes, replies)
			}
		}
		return ""
	}
}

func faultMalformedCases() []malformedCase {
	const parse, invalid = -32700, -32600
	deep := `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}}"
	big := `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"` + strings.Repeat("x", 16<<20) + `"}}`
	null := []string{"null"}
	return []malformedCase{
		{"garbage", "this is not json at all\n", expectError([]int{parse}, null, true)},
		{"nul-bytes", "\x00\x00\x00\x00\n", expectError([]int{parse}, null, true)},
		{"nul-in-object", `{"jsonrpc":"2.0","id":3,"method":"ping"` + "\x00}\n", expectError([]int{parse}, null, true)},
		{"empty-array", "[]\n", expectError([]int{invalid}, null, true)},
		{"number", "42\n", expectError([]int{invalid}, null, true)},
		{"null", "null\n", expectError([]int{invalid}, null, true)},
		{"string", `"x"` + "\n", expectError([]int{invalid}, null, true)},
		{"wrong-jsonrpc", `{"jsonrpc":"1.0","id":5,"method":"ping"}` + "\n", expectError([]int{invalid}, []string{"5", "null"}, true)},
		{"missing-jsonrpc", `{"id":6,"method":"ping"}` + "\n", expectError([]int{invalid}, []string{"6", "null"}, true)},
		{"object-id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n", expectError([]int{invalid}, null, true)},
		{"numeric-method", `{"jsonrpc":"2.0","id":7,"method":42}` + "\n", expectError([]int{invalid}, []string{"7", "null"}, true)},
		{"deep-nesting", deep + "\n", expectError([]int{parse, invalid}, []string{"8", "null"}, true)},
		{"16MB-line", big + "\n", answeredOr([]string{"9"}, []int{parse, invalid})},
		{"two-objects-one-line", `{"jsonrpc":"2.0","id":10,"method":"ping"}{"jsonrpc":"2.0","id":11,"method":"ping"}` + "\n", answeredOr([]string{"10", "11"}, []int{parse, invalid})},
		{"partial-line", `{"jsonrpc":"2.0","id":12,"meth` + "\n", expectError([]int{parse}, null, true)},
		{"batch", `[{"jsonrpc":"2.0","id":14,"method":"ping"},{"jsonrpc":"2.0","id":15,"method":"ping"}]` + "\n", answeredOr([]string{"14", "15"}, []int{invalid})},
		{"id-1.5", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}` + "\n", expectError([]int{invalid}, null, true)},
		{"id-2^63", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}` + "\n", expectError([]int{invalid}, null, true)},
		{"id-2^64", `{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}` + "\n", expectError([]int{invalid}, null, true)},
	}
}

// TestFaultMalformedInput writes each hostile line to a fresh server, then a
// valid ping: the ping must be answered, the process must still run, and the
// bad line must get its JSON-RPC error (-32700 parse, -32600 invalid request).
func TestFaultMalformedInput(t *testing.T) {
	ts := tmuxtest.New(t)
	dir := t.TempDir()
	pass, fail := 0, 0
	var failed []string
	for _, c := range faultMalformedCases() {
		p := startFault(t, ts, dir)
		r := newRaw(p)
		r.initialize(t)
		go func() { _ = r.write(c.input) }() // a 16 MB write blocks until read
		time.Sleep(50 * time.Millisecond)
		go func() { _ = r.write(`{"jsonrpc":"2.0","id":"after","method":"ping"}` + "\n") }()
		replies, junk := r.collect(15*time.Second, hasID(`"after"`))
		var why []string
		if !hasID(`"after"`)(replies) {
			why = append(why, "the valid request after it was not answered")
		}
		if len(junk) > 0 {
			why = append(why, fmt.Sprintf("non-JSON on stdout: %q", junk))
		}
		if msg := c.check(replies); msg != "" {
			why = append(why, msg)
		}
		time.Sleep(100 * time.Millisecond)
		if !p.alive() {
			why = append(why, "server "+p.exitDescription())
		}
		if len(why) == 0 {
			pass++
			t.Logf("malformed %-20s PASS", c.kind)
		} else {
			fail++
			failed = append(failed, c.kind)
			t.Errorf("malformed %-20s FAIL: %s", c.kind, strings.Join(why, "; "))
		}
		p.kill()
	}
	t.Logf("faults: malformed cases=%d pass=%d fail=%d failed=%v", pass+fail, pass, fail, failed)
	fmt.Printf("faults: malformed cases=%d pass=%d fail=%d failed=%v\n", pass+fail, pass, fail, failed)
}

// faultRounds is how often the signal and kill scenarios repeat: once in the
// short run, once per minute of TMUX_MCP_FAULT_DURATION (at most 5).
func faultRounds(t *testing.T) (int, time.Duration) {
	d, long := faultDuration(t)
	if !long {
		return 1, 5 * time.Second // exit times past 5 s are reported as such
	}
	return min(5, max(1, int(d/time.Minute))), 30 * time.Second
}

// callAsync runs one tool call in the background.
type callResult struct {
	res *mcp.CallToolResult
	err error
	at  time.Time
}

func callAsync(cs *mcp.ClientSession, name string, args map[string]any) chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		ch <- callResult{res, err, time.Now()}
	}()
	return ch
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return clip(b.String(), 300)
}

// TestFaultSignals: SIGTERM and stdin EOF during a 20 s wait_for_text must
// end the process within 2 s (EOF answering the wait first); SIGKILL must
// leave no tmux child or attached control client behind; a tmux server
// killed mid-wait gives a clear error and the next call recovers; a pane
// killed mid-run_command ends the call promptly.
func TestFaultSignals(t *testing.T) {
	rounds, capExit := faultRounds(t)
	var sigterm, eofAnswer, eofExit []time.Duration
	orphans, clients, tmuxRecovered, paneProm := 0, 0, 0, 0
	for round := 1; round <= rounds; round++ {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			t.Run("SIGTERMDuringWait", func(t *testing.T) {
				sigterm = append(sigterm, faultSIGTERM(t, capExit))
			})
			t.Run("EOFDuringWait", func(t *testing.T) {
				a, e := faultEOF(t, capExit)
				eofAnswer, eofExit = append(eofAnswer, a), append(eofExit, e)
			})
			t.Run("SIGKILLLeavesNoChildren", func(t *testing.T) {
				o, c := faultSIGKILL(t)
				orphans += o
				clients += c
			})
			t.Run("TmuxKilledMidWait", func(t *testing.T) {
				if faultTmuxKilled(t) {
					tmuxRecovered++
				}
			})
			t.Run("PaneKilledMidRun", func(t *testing.T) {
				if faultPaneKilled(t) {
					paneProm++
				}
			})
		})
	}
	line := fmt.Sprintf("faults: signals rounds=%d sigterm_exit=%v eof_answer=%v eof_exit=%v sigkill_orphans=%d sigkill_clients=%d tmux_kill_recovered=%d/%d pane_kill_prompt=%d/%d",
		rounds, durs(sigterm), durs(eofAnswer), durs(eofExit), orphans, clients, tmuxRecovered, rounds, paneProm, rounds)
	t.Log(line)
	fmt.Println(line)
}

func durs(ds []time.Duration) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.Round(time.Millisecond).String())
	}
	return "[" + strings.Join(s, ",") + "]"
}

// waitArgs is a wait_for_text on %0 for text that never appears.
func waitArgs(seconds int) map[string]any {
	return map[string]any{"pane_id": "%0", "patterns": []string{"never-printed-8c1f"}, "timeout": seconds}
}

func faultSIGTERM(t *testing.T, capExit time.Duration) time.Duration {
	ts := tmuxtest.New(t)
	p := startFault(t, ts, t.TempDir())
	cs := p.client(t)
	pending := callAsync(cs, "wait_for_text", waitArgs(20))
	time.Sleep(500 * time.Millisecond) // let the wait start
	sent := time.Now()
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	exited := p.waitExit(capExit)
	took := time.Since(sent)
	if exited {
		took = p.exitedAt.Sub(sent)
	} else {
		p.kill()
	}
	answered := "no"
	select {
	case r := <-pending:
		answered = fmt.Sprintf("yes after %v (err=%v isError=%v)", r.at.Sub(sent).Round(time.Millisecond), r.err, r.res != nil && r.res.IsError)
	default:
	}
	t.Logf("SIGTERM during a 20 s wait_for_text: exited=%v after %v; in-flight call answered: %s", exited, took.Round(time.Millisecond), answered)
	if !exited || took > 2*time.Second {
		t.Errorf("SIGTERM: the server took %v to exit (exited=%v, limit 2s)", took.Round(time.Millisecond), exited)
	}
	return took
}

func faultEOF(t *testing.T, capExit time.Duration) (answer, exit time.Duration) {
	ts := tmuxtest.New(t)
	p := startFault(t, ts, t.TempDir())
	r := newRaw(p)
	r.initialize(t)
	_ = r.write(`{"jsonrpc":"2.0","id":"wait","method":"tools/call","params":{"name":"wait_for_text","arguments":{"pane_id":"%0","patterns":["never-printed-8c1f"],"timeout":20}}}` + "\n")
	time.Sleep(500 * time.Millisecond)
	closed := time.Now()
	_ = p.stdin.Close()
	replies, _ := r.collect(capExit, hasID(`"wait"`))
	answer = time.Since(closed)
	answered := hasID(`"wait"`)(replies)
	exited := p.waitExit(capExit - min(answer, capExit) + 100*time.Millisecond)
	exit = time.Since(closed)
	if exited {
		exit = p.exitedAt.Sub(closed)
	} else {
		p.kill()
	}
	t.Logf("stdin EOF during a 20 s wait_for_text: answered=%v after %v, exited=%v after %v", answered, answer.Round(time.Millisecond), exited, exit.Round(time.Millisecond))
	if !answered {
		t.Errorf("EOF: the in-flight wait_for_text was not answered within %v", capExit)
	}
	if !exited || exit > 2*time.Second {
		t.Errorf("EOF: the server took %v to exit (exited=%v, limit 2s)", exit.Round(time.Millisecond), exited)
	}
	return answer, exit
}

// faultSIGKILL kills the server while it holds a control connection, a
// watcher and a wait-for child, then looks for survivors.
func faultSIGKILL(t *testing.T) (orphans, clients int) {
	ts := tmuxtest.New(t)
	p := startFault(t, ts, t.TempDir())
	cs := p.client(t)
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("list_sessions: %v %s", err, resultText(res))
	}
	callAsync(cs, "wait_for_channel", map[string]any{"channel": "fault-never-signalled", "timeout": 20})
	callAsync(cs, "wait_for_text", waitArgs(20))
	time.Sleep(500 * time.Millisecond)
	kids := descendants(p.cmd.Process.Pid)
	before, _ := ts.Run("list-clients", "-F", "#{client_pid} #{client_flags}")
	var desc []string
	for _, k := range kids {
		desc = append(desc, fmt.Sprintf("%d:%s", k.pid, clip(k.cmdline, 60)))
	}
	t.Logf("before SIGKILL: children %v; tmux clients %q", desc, before)
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
	p.waitExit(2 * time.Second)
	var left []procInfo
	var attached string
	deadline := time.Now().Add(2 * time.Second)
	for {
		left = left[:0]
		for _, k := range kids {
			if stillRunning(k) {
				left = append(left, k)
			}
		}
		attached, _ = ts.Run("list-clients", "-F", "#{client_pid} #{client_flags}")
		if (len(left) == 0 && attached == "") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, k := range left {
		t.Errorf("SIGKILL: child %d (%s) still runs 2 s after the server died", k.pid, k.cmdline)
		// It is ours (a child of the server this test started): end it by pid
		// so the tmux server can be killed at cleanup.
		_ = syscall.Kill(k.pid, syscall.SIGKILL)
	}
	if attached != "" {
		n := len(strings.Split(attached, "\n"))
		clients = n
		t.Errorf("SIGKILL: %d tmux client(s) still attached to the test server: %q", n, attached)
	}
	return len(left), clients
}

func faultTmuxKilled(t *testing.T) bool {
	ts := tmuxtest.New(t)
	p := startFault(t, ts, t.TempDir())
	cs := p.client(t)
	pid := ts.MustRun("display-message", "-p", "#{pid}")
	pending := callAsync(cs, "wait_for_text", waitArgs(10))
	time.Sleep(500 * time.Millisecond)
	var n int
	_, _ = fmt.Sscan(pid, &n)
	if n <= 1 {
		t.Fatalf("tmux server pid %q", pid)
	}
	killed := time.Now()
	_ = syscall.Kill(n, syscall.SIGKILL) // the test's own tmux server, by pid
	var r callResult
	select {
	case r = <-pending:
	case <-time.After(8 * time.Second):
		t.Errorf("tmux killed: wait_for_text still blocked 8 s later")
		return false
	}
	t.Logf("tmux killed mid-wait: answer after %v: err=%v isError=%v %s", r.at.Sub(killed).Round(time.Millisecond), r.err, r.res != nil && r.res.IsError, resultText(r.res))
	ok := true
	if r.err == nil && (r.res == nil || !r.res.IsError || resultText(r.res) == "") {
		t.Errorf("tmux killed: want a clear error, got %s", resultText(r.res))
		ok = false
	}
	if !p.alive() {
		t.Fatalf("tmux killed: server %s", p.exitDescription())
	}
	// Restart tmux once the killed server is really gone: a client that
	// reaches the dying server gets "server exited unexpectedly".
	if pi, ok := readProc(n); ok {
		tmuxtest.WaitFor(t, 3*time.Second, func() bool { return !stillRunning(pi) })
	}
	var rerr error
	for range 5 {
		if _, rerr = ts.Run("new-session", "-d", "-s", "main", "-x", "80", "-y", "24"); rerr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rerr != nil {
		t.Fatalf("restarting tmux: %v", rerr)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
	if err != nil || res.IsError || !strings.Contains(resultText(res)+fmt.Sprint(res.StructuredContent), "main") {
		t.Errorf("tmux restarted: the next call did not recover: %v %s", err, resultText(res))
		ok = false
	}
	return ok
}

func faultPaneKilled(t *testing.T) bool {
	ts := tmuxtest.New(t)
	pane := ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "sh")
	time.Sleep(300 * time.Millisecond)
	p := startFault(t, ts, t.TempDir())
	cs := p.client(t)
	pending := callAsync(cs, "run_command", map[string]any{"pane_id": pane, "command": "sleep 30", "timeout": 15})
	time.Sleep(1 * time.Second)
	killed := time.Now()
	ts.MustRun("kill-pane", "-t", pane)
	var r callResult
	select {
	case r = <-pending:
	case <-time.After(6 * time.Second):
		t.Errorf("pane killed: run_command still blocked 6 s after its pane was killed")
		return false
	}
	took := r.at.Sub(killed)
	var structured any
	if r.res != nil {
		structured = r.res.StructuredContent
	}
	t.Logf("pane killed mid-run_command: answer after %v: err=%v isError=%v %s %v", took.Round(time.Millisecond), r.err, r.res != nil && r.res.IsError, resultText(r.res), structured)
	if !p.alive() {
		t.Errorf("pane killed: server %s", p.exitDescription())
		return false
	}
	if r.err != nil && !strings.Contains(r.err.Error(), "pane") {
		t.Errorf("pane killed: protocol error instead of a clear result: %v", r.err)
		return false
	}
	return true
}

// TestGoroutineDumpOnSIGUSR1: SIGUSR1 makes the server log where every
// goroutine waits, as one JSON record, without ending it: a call in flight
// (a wait) shows up in the dump, and the server answers afterwards.
func TestGoroutineDumpOnSIGUSR1(t *testing.T) {
	ts := tmuxtest.New(t)
	p := startFault(t, ts, t.TempDir())
	pending := callAsync(p.client(t), "wait_for_text", waitArgs(2))
	time.Sleep(300 * time.Millisecond) // let the wait start
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var dump string
	for deadline := time.Now().Add(5 * time.Second); dump == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine dump in stderr after SIGUSR1:\n%s", tail(p.stderr.String(), 2000))
		}
		dump, _ = goroutinesOf(p.stderr.String())
	}
	if !strings.Contains(dump, "internal/server.") {
		t.Errorf("the dump shows no goroutine in internal/server while wait_for_text runs:\n%s", clip(dump, 3000))
	}
	if !p.alive() {
		t.Fatal("SIGUSR1 ended the server")
	}
	select {
	case r := <-pending:
		if r.err != nil || r.res.IsError {
			t.Errorf("the wait in flight, after the dump: err=%v result=%s", r.err, resultText(r.res))
		}
	case <-time.After(10 * time.Second):
		t.Error("the wait in flight was not answered after the dump")
	}
}
