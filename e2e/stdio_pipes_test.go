package e2e

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// fdFlags reads the open-file flags of process pid's descriptor fd
// (the octal "flags:" line of /proc/PID/fdinfo/FD).
func fdFlags(t *testing.T, pid int, fd string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "fdinfo", fd))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no flags in fdinfo %s of %d", fd, pid)
	return 0
}

// TestStdioPipesReadWithoutBlocking checks, on the running binary, that it
// reads and writes the client's pipes through descriptions of its own in
// non-blocking mode (so one processor serves requests without a thread
// parked in read(2); internal/cli/stdio_procs.go), and that the
// descriptions it inherited, which the client may share, are left
// blocking.
func TestStdioPipesReadWithoutBlocking(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/self/fd reopening is Linux only")
	}
	const oNonblock = 0o4000
	ts := tmuxtest.New(t)
	cmd := serverCmd(ts)
	cs := connect(t, cmd)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_sessions: %v %v", err, res)
	}
	pid := cmd.Process.Pid
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	link := func(fd string) string {
		l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, std := range []string{"0", "1"} {
		pipe := link(std)
		if !strings.HasPrefix(pipe, "pipe:") {
			t.Fatalf("fd %s is %s, not a pipe", std, pipe)
		}
		if fdFlags(t, pid, std)&oNonblock != 0 {
			t.Errorf("fd %s (the client's description) was made non-blocking", std)
		}
		var own []string
		for _, e := range fds {
			if e.Name() != std && link(e.Name()) == pipe && fdFlags(t, pid, e.Name())&oNonblock != 0 {
				own = append(own, e.Name())
			}
		}
		if len(own) != 1 {
			t.Errorf("fd %s (%s): %d non-blocking descriptions of the same pipe (%v), want 1", std, pipe, len(own), own)
		}
	}
}

// TestStdioSocketsRestored runs the binary as Node's child_process starts
// a server, with a socket pair for stdin and another for stdout, and holds
// a copy of the server's ends (so the same descriptions): while it serves
// they are non-blocking, and once it has exited they are blocking again.
func TestStdioSocketsRestored(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	const oNonblock = 0o4000
	pair := func() (server, client *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		server, client = os.NewFile(uintptr(fds[0]), "server"), os.NewFile(uintptr(fds[1]), "client")
		t.Cleanup(func() { server.Close(); client.Close() })
		return server, client
	}
	// The descriptions' flags, read through this process's copies of the
	// server's ends.
	flags := func(f *os.File) int { return fdFlags(t, os.Getpid(), strconv.Itoa(int(f.Fd()))) }
	ts := tmuxtest.New(t)
	inServer, inClient := pair()
	outServer, outClient := pair()
	cmd := serverCmd(ts)
	cmd.Stdin, cmd.Stdout = inServer, outServer
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	lines := bufio.NewScanner(outClient)
	send := func(line string) {
		if _, err := inClient.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		return lines.Text()
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sockets","version":"0"}}}`)
	read()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`)
	if got := read(); !strings.Contains(got, `"id":2`) || strings.Contains(got, `"isError":true`) {
		t.Fatalf("list_sessions: %s", got)
	}
	if flags(inServer)&oNonblock == 0 || flags(outServer)&oNonblock == 0 {
		t.Errorf("while serving: stdin flags %o, stdout flags %o; want both non-blocking", flags(inServer), flags(outServer))
	}
	inClient.Close() // end of input: the server exits
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit at end of input")
	}
	if flags(inServer)&oNonblock != 0 || flags(outServer)&oNonblock != 0 {
		t.Errorf("after exit: stdin flags %o, stdout flags %o; want both blocking again", flags(inServer), flags(outServer))
	}
}
