package e2e

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

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
