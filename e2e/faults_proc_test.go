package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// The fault suite's budget: TMUX_MCP_FAULT_DURATION (e.g. 5m) runs the fuzz
// that long and the fault rounds once a minute; unset, a short version runs
// in `go test ./...`. TMUX_MCP_FAULT_SEED replays a fuzz run.
const shortFuzz = 5 * time.Second

func faultDuration(t *testing.T) (time.Duration, bool) {
	v := os.Getenv("TMUX_MCP_FAULT_DURATION")
	if v == "" {
		return shortFuzz, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("TMUX_MCP_FAULT_DURATION=%q: want a Go duration such as 5m", v)
	}
	return d, true
}

// faultProc is the built binary started by the test itself (not by the SDK's
// CommandTransport) so the test can signal it, time its exit and see its
// children. It runs in its own process group, which cleanup ends by id.
type faultProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tailBuffer

	done     chan struct{} // closed once the process has exited
	exitErr  error
	exitedAt time.Time
}

// startFault starts the binary against ts with env added, in dir (the
// server's working directory, where relative paths resolve).
func startFault(t testing.TB, ts *tmuxtest.Server, dir string, env ...string) *faultProc {
	t.Helper()
	cmd := serverCmd(ts, env...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &faultProc{t: t, cmd: cmd, stderr: &tailBuffer{max: 1 << 20}, done: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, started := stdoutPipe(t, cmd)
	p.stdout = stdout
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started()
	go func() {
		p.exitErr = cmd.Wait()
		p.exitedAt = time.Now()
		close(p.done)
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *faultProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// waitExit reports whether the process exited within d.
func (p *faultProc) waitExit(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// stop closes stdin, gives the server a moment, then kills its process
// group (the group this test created for it, by its id).
func (p *faultProc) stop() {
	_ = p.stdin.Close()
	if !p.waitExit(3 * time.Second) {
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		p.waitExit(3 * time.Second)
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// kill ends the process group at once (for servers whose graceful exit is
// not under test).
func (p *faultProc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.waitExit(3 * time.Second)
}

// client connects an SDK client over the process's pipes.
func (p *faultProc) client(t testing.TB) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "faults", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v (stderr: %s)", err, p.stderr.String())
	}
	return cs
}

// exitDescription says how the process ended, for failure messages.
func (p *faultProc) exitDescription() string {
	if p.alive() {
		return "still running"
	}
	return fmt.Sprintf("exited (%v); stderr tail: %s", p.exitErr, clip(p.stderr.String(), 600))
}

// tailBuffer keeps the last max bytes written (the server's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// rawConn speaks newline-delimited JSON-RPC to the process by hand, for the
// inputs no SDK client would send. Replies are read a line at a time.
type rawConn struct {
	p     *faultProc
	lines chan []byte
}

func newRaw(p *faultProc) *rawConn {
	r := &rawConn{p: p, lines: make(chan []byte, 256)}
	go func() {
		defer close(r.lines)
		br := bufio.NewReaderSize(p.stdout, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				r.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

func (r *rawConn) write(s string) error {
	_, err := io.WriteString(r.p.stdin, s)
	return err
}

// rpcReply is one reply; ID keeps the id's exact text so an altered id shows.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m rpcReply) String() string {
	if m.Error != nil {
		return fmt.Sprintf("{id:%s error:%d %q}", m.ID, m.Error.Code, clip(m.Error.Message, 120))
	}
	return fmt.Sprintf("{id:%s result:%s}", m.ID, clip(string(m.Result), 120))
}

// collect reads replies until want returns true for the replies so far, the
// stream ends, or d passes. Lines that are arrays (batch answers) are split.
func (r *rawConn) collect(d time.Duration, want func([]rpcReply) bool) ([]rpcReply, []string) {
	var got []rpcReply
	var bad []string
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		if want != nil && want(got) {
			return got, bad
		}
		select {
		case line, ok := <-r.lines:
			if !ok {
				return got, bad
			}
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) > 0 && trimmed[0] == '[' {
				var batch []rpcReply
				if err := json.Unmarshal(trimmed, &batch); err != nil {
					bad = append(bad, clip(string(trimmed), 200))
				}
				got = append(got, batch...)
				continue
			}
			var m rpcReply
			if err := json.Unmarshal(trimmed, &m); err != nil {
				bad = append(bad, clip(string(trimmed), 200))
				continue
			}
			got = append(got, m)
		case <-timer.C:
			return got, bad
		}
	}
}

func hasID(id string) func([]rpcReply) bool {
	return func(ms []rpcReply) bool {
		for _, m := range ms {
			if string(m.ID) == id {
				return true
			}
		}
		return false
	}
}

// initialize performs the handshake by hand (protocol 2025-06-18).
func (r *rawConn) initialize(t testing.TB) {
	t.Helper()
	_ = r.write(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}` + "\n")
	if got, _ := r.collect(10*time.Second, hasID(`"init"`)); !hasID(`"init"`)(got) {
		t.Fatalf("no initialize reply: %v; %s", got, r.p.exitDescription())
	}
	_ = r.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
}

// procInfo is one process seen in /proc.
type procInfo struct {
	pid, ppid int
	state     byte
	start     string // start time in clock ticks, to tell a reused pid apart
	cmdline   string
}

func readProc(pid int) (procInfo, bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procInfo{}, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	pi := procInfo{pid: pid, state: f[0][0], start: f[19]}
	pi.ppid, _ = strconv.Atoi(f[1])
	cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	pi.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
	return pi, true
}

// descendants lists the live processes below pid.
func descendants(pid int) []procInfo {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]procInfo{}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pi, ok := readProc(n); ok {
			children[pi.ppid] = append(children[pi.ppid], pi)
		}
	}
	var out []procInfo
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// stillRunning reports whether a process recorded earlier still runs (same
// pid and start time, not a zombie).
func stillRunning(pi procInfo) bool {
	now, ok := readProc(pi.pid)
	return ok && now.start == pi.start && now.state != 'Z' && now.state != 'X'
}
