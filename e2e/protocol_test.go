package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// rawProc is the binary driven line by line, the way a careless or hostile
// client would: whatever bytes it likes on stdin, every stdout line read.
type rawProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte   // stdout, one line each
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, once exited is closed
	stderr bytes.Buffer
}

func startRaw(t *testing.T, ts *tmuxtest.Server, protocolVersion string, extraEnv ...string) *rawProc {
	t.Helper()
	p := &rawProc{t: t, cmd: serverCmd(ts, extraEnv...), lines: make(chan []byte, 64), exited: make(chan struct{})}
	p.stdin, _ = p.cmd.StdinPipe()
	stdout, started := stdoutPipe(t, p.cmd)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("server stderr:\n%s", p.stderr.String())
		}
	})
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, protocolVersion))
	if m := p.until(`"init"`, 10*time.Second); m.others != nil || m.reply["result"] == nil {
		t.Fatalf("initialize: %s", m.line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *rawProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("writing to the server: %v", err)
	}
}

// answer is the reply with a given id and every other line read before it.
type answer struct {
	reply  map[string]json.RawMessage
	line   []byte
	others [][]byte
}

// until reads stdout until the response whose id is the JSON text id.
func (p *rawProc) until(id string, timeout time.Duration) answer {
	p.t.Helper()
	var a answer
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout closed before the answer to %s (others: %q)", id, a.others)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				p.t.Fatalf("stdout line is not JSON: %.200q", line)
			}
			if string(m["id"]) == id && m["method"] == nil {
				a.reply, a.line = m, line
				return a
			}
			a.others = append(a.others, line)
		case <-deadline:
			p.t.Fatalf("no answer to %s within %v (others: %q)", id, timeout, a.others)
		}
	}
}

// malformedCases are lines a careless or hostile client may write. code is
// the JSON-RPC error each must get (0: no reply at all, for a malformed
// response), id the error's id as JSON text.
func malformedCases() []struct {
	name string
	line string
	code int
	id   string
} {
	deep := `{"jsonrpc":"2.0","id":10,"method":"ping","params":{"a":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`
	return []struct {
		name string
		line string
		code int
		id   string
	}{
		{"garbage text", "hello, world", -32700, "null"},
		{"NUL bytes", "\x00\x00{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\x00", -32700, "null"},
		{"empty array", "[]", -32600, "null"},
		{"number", "42", -32600, "null"},
		{"null", "null", -32600, "null"},
		{"string", `"x"`, -32600, "null"},
		{"true", "true", -32600, "null"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":"v","method":"ping"}`, -32600, `"v"`},
		{"missing jsonrpc", `{"id":8,"method":"ping"}`, -32600, "8"},
		{"object as id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"array as id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
		{"bool as id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, -32600, "null"},
		{"id beyond 2^63", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, -32600, "null"},
		{"id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, "null"},
		{"number as method", `{"jsonrpc":"2.0","id":9,"method":42}`, -32600, "9"},
		{"no method", `{"jsonrpc":"2.0","id":15}`, -32600, "15"},
		{"string params", `{"jsonrpc":"2.0","id":16,"method":"tools/list","params":"x"}`, -32600, "16"},
		{"deep nesting", strings.Repeat("[", 100000), -32700, "null"},
		{"deep but closed nesting", deep, -32600, "10"},
		{"two objects on one line", `{"jsonrpc":"2.0","id":12,"method":"ping"}{"jsonrpc":"2.0","id":13,"method":"ping"}`, -32700, "null"},
		{"two objects with a space", `{"jsonrpc":"2.0","id":12,"method":"ping"} {"jsonrpc":"2.0","id":13,"method":"ping"}`, -32700, "null"},
		{"partial line", `{"jsonrpc":"2.0","id":14,"meth`, -32700, "null"},
		{"batch without batching", `[{"jsonrpc":"2.0","id":17,"method":"ping"}]`, -32600, "null"},
		{"malformed response", `{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}}`, 0, ""},
		{"response to nothing", `{"jsonrpc":"2.0","id":"nothing","result":{}}`, 0, ""},
		{"16 MB line", `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"x":"` + strings.Repeat("a", 16<<20) + `"}}`, -32700, "null"},
		{"blank line", "   \t", 0, ""},
	}
}

// sendBad writes one bad line and a ping after it, and checks the error
// reply the bad line got and that the ping was answered.
func (p *rawProc) sendBad(line string, code int, id string, ping string) {
	t := p.t
	t.Helper()
	p.send(line)
	p.send(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)
	a := p.until(ping, 20*time.Second)
	var errs []map[string]json.RawMessage
	for _, o := range a.others {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(o, &m)
		if m["error"] == nil {
			t.Errorf("unexpected line: %.300s", o)
			continue
		}
		errs = append(errs, m)
	}
	if code == 0 {
		if len(errs) != 0 {
			t.Errorf("want no reply, got %q", a.others)
		}
		return
	}
	if len(errs) != 1 {
		t.Fatalf("want one error reply, got %d: %q", len(errs), a.others)
	}
	var e struct{ Code int }
	_ = json.Unmarshal(errs[0]["error"], &e)
	got, hasID := errs[0]["id"]
	if e.Code != code || !hasID || string(got) != id {
		t.Errorf("reply %s; want code %d, id %s", a.others[0], code, id)
	}
}

// TestMalformedLines: no line a client writes ends the server. Each bad
// line gets exactly the JSON-RPC error it calls for (or, for a malformed
// response, nothing), and the ping written after it is answered: first on
// a fresh process per case, then all of them in a row on one process.
func TestMalformedLines(t *testing.T) {
	ts := tmuxtest.New(t)
	for _, c := range malformedCases() {
		t.Run(c.name, func(t *testing.T) {
			p := startRaw(t, ts, "2025-06-18")
			p.sendBad(c.line, c.code, c.id, `"ping"`)
		})
	}
	p := startRaw(t, ts, "2025-06-18")
	for i, c := range malformedCases() {
		p.sendBad(c.line, c.code, c.id, fmt.Sprintf(`"ping-%d"`, i))
	}
	// A request reusing the id of one still in flight is refused (the SDK
	// would drop it unanswered); the first one is unaffected.
	p.send(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"wait_for_channel","arguments":{"channel":"never-signalled","timeout":20}}}`)
	time.Sleep(200 * time.Millisecond)
	p.sendBad(`{"jsonrpc":"2.0","id":"dup","method":"ping"}`, -32600, "null", `"after-dup"`)
	// Ids the SDK carries unchanged come back byte for byte.
	for _, id := range []string{`9007199254740992`, `-9007199254740992`, `0`, `-5`, `"é x"`, `""`} {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if a := p.until(id, 10*time.Second); a.reply["error"] != nil || len(a.others) != 0 {
			t.Errorf("id %s: %s (others %q)", id, a.line, a.others)
		}
	}
	// A CRLF line ending is one line ending.
	p.send("{\"jsonrpc\":\"2.0\",\"id\":\"crlf\",\"method\":\"ping\"}\r")
	if a := p.until(`"crlf"`, 10*time.Second); a.reply["error"] != nil || len(a.others) != 0 {
		t.Errorf("CRLF: %s (others %q)", a.line, a.others)
	}
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("exit after EOF: %v", p.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit after EOF")
	}
}

// TestBatches: a client that negotiated 2025-03-26 (which has JSON-RPC
// batching) gets its batches answered as one array; a batch with an invalid
// member is refused whole, with one error, and nothing in it runs.
func TestBatches(t *testing.T) {
	ts := tmuxtest.New(t)
	p := startRaw(t, ts, "2025-03-26")
	p.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}},{"jsonrpc":"2.0","id":"two","method":"tools/list"}]`)
	select {
	case line := <-p.lines:
		var arr []map[string]json.RawMessage
		if err := json.Unmarshal(line, &arr); err != nil || len(arr) != 2 {
			t.Fatalf("batch answer: %.300s", line)
		}
		ids := map[string]bool{}
		for _, m := range arr {
			if m["result"] == nil {
				t.Errorf("batch member failed: %v", m)
			}
			ids[string(m["id"])] = true
		}
		if !ids["1"] || !ids[`"two"`] {
			t.Errorf("batch answer ids: %v", ids)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the batch")
	}
	for i, bad := range []string{
		`[]`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"},42]`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":{},"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`[[{"jsonrpc":"2.0","id":6,"method":"ping"}]]`,
	} {
		ping := fmt.Sprintf(`"after-%d"`, i)
		p.send(bad)
		p.send(`{"jsonrpc":"2.0","id":` + ping + `,"method":"ping"}`)
		a := p.until(ping, 10*time.Second)
		if len(a.others) != 1 || !bytes.Contains(a.others[0], []byte(`"code":-32600`)) || !bytes.Contains(a.others[0], []byte(`"id":null`)) {
			t.Errorf("%s: want one -32600 with id null, got %q", bad, a.others)
		}
	}
}

// TestExitWithinBoundDuringWaits: SIGTERM, SIGINT or the end of stdin
// during a long wait cancels it; its answer (what it saw so far, like a
// timeout) is still written, and the process exits within 2 s.
func TestExitWithinBoundDuringWaits(t *testing.T) {
	waits := []struct {
		name string
		call string
		ok   func(result map[string]any) bool
	}{
		{"wait_for_text", `{"name":"wait_for_text","arguments":{"pane_id":"%0","patterns":["never-printed-xyzzy"],"timeout":20}}`,
			func(r map[string]any) bool {
				sc, _ := r["structuredContent"].(map[string]any)
				return r["isError"] != true && sc["outcome"] == "timeout" && sc["found"] == false
			}},
		{"run_command", `{"name":"run_command","arguments":{"pane_id":"%0","command":"sleep 25","timeout":20}}`,
			func(r map[string]any) bool {
				sc, _ := r["structuredContent"].(map[string]any)
				return r["isError"] != true && sc["timed_out"] == true && sc["run_id"] != nil
			}},
		{"wait_for_channel", `{"name":"wait_for_channel","arguments":{"channel":"never-signalled","timeout":20}}`,
			func(r map[string]any) bool {
				return r["isError"] == true && strings.Contains(fmt.Sprint(r["content"]), "shutting down")
			}},
	}
	for _, w := range waits {
		for _, how := range []string{"SIGTERM", "SIGINT", "EOF"} {
			t.Run(w.name+"/"+how, func(t *testing.T) {
				ts := tmuxtest.New(t)
				p := startRaw(t, ts, "2025-06-18", "TMUX_MCP_WAIT_MAX_SECONDS=30")
				p.send(`{"jsonrpc":"2.0","id":"wait","method":"tools/call","params":` + w.call + `}`)
				time.Sleep(1500 * time.Millisecond) // the wait is under way
				select {
				case line := <-p.lines:
					t.Fatalf("answered before the stop: %.300s", line)
				default:
				}
				start := time.Now()
				switch how {
				case "SIGTERM":
					_ = p.cmd.Process.Signal(syscall.SIGTERM)
				case "SIGINT":
					_ = p.cmd.Process.Signal(syscall.SIGINT)
				case "EOF":
					_ = p.stdin.Close()
				}
				a := p.until(`"wait"`, 5*time.Second)
				answered := time.Since(start)
				var result map[string]any
				_ = json.Unmarshal(a.reply["result"], &result)
				if !w.ok(result) {
					t.Errorf("answer after %s: %.600s", how, a.line)
				}
				select {
				case <-p.exited:
				case <-time.After(5 * time.Second):
					t.Fatal("no exit within 5 s")
				}
				took := time.Since(start)
				t.Logf("%s during %s: answered after %v, exited after %v (status %v)", how, w.name, answered.Round(time.Millisecond), took.Round(time.Millisecond), p.err)
				if took > 2*time.Second {
					t.Errorf("exit took %v, want under 2 s", took)
				}
				if p.err != nil {
					t.Errorf("exit status: %v", p.err)
				}
			})
		}
	}
}

// TestRequestJustBeforeEOF: requests written right before stdin closes are
// all answered before the process exits (what the old EOF hold-back kept),
// including one whose answer takes a tmux round trip.
func TestRequestJustBeforeEOF(t *testing.T) {
	ts := tmuxtest.New(t)
	p := startRaw(t, ts, "2025-06-18")
	p.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"list_panes","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":"b","method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":"c","method":"ping"}`)
	_ = p.stdin.Close()
	seen := map[string]bool{}
	for line := range p.lines {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(line, &m)
		if m["result"] != nil {
			seen[string(m["id"])] = true
		}
	}
	for _, id := range []string{`"a"`, `"b"`, `"c"`} {
		if !seen[id] {
			t.Errorf("request %s not answered before exit", id)
		}
	}
	<-p.exited
	if p.err != nil {
		t.Errorf("exit: %v", p.err)
	}
}
