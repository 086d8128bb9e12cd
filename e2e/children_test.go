package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// proc is one process found in /proc.
type proc struct {
	pid, ppid int
	state     string
	argv      []string
}

// socketProcs lists the live processes whose command line names socket:
// the tmux clients the server started for this test's tmux server (and
// that server itself). Zombies are left out: they have exited.
func socketProcs(t *testing.T, socket string) []proc {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(socket)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut after ')'.
		rest := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(rest) < 2 || rest[0] == "Z" || rest[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		out = append(out, proc{pid: pid, ppid: ppid, state: rest[0], argv: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")})
	}
	return out
}

func hasArg(p proc, arg string) bool {
	for _, a := range p.argv {
		if a == arg {
			return true
		}
	}
	return false
}

// A SIGKILLed server leaves no tmux client behind: its control clients
// (the engine's and the watchers') detach, the wait-for child of an
// in-flight wait_for_channel dies, and tmux kill-server returns at once.
func TestChildrenDieWithKilledServer(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	for _, engine := range []string{"control", "exec"} {
		t.Run(engine, func(t *testing.T) {
			ts := tmuxtest.New(t)
			cmd := serverCmd(ts, "TMUX_MCP_ENGINE="+engine)
			cs := connect(t, cmd)
			pid := cmd.Process.Pid
			ctx := context.Background()

			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Fatalf("list_sessions: %v %+v", err, res)
			}
			// A watcher and a wait-for child, both in flight when the
			// server dies; their calls never get an answer.
			for _, c := range []*mcp.CallToolParams{
				{Name: "wait_for_text", Arguments: map[string]any{"pane_id": "%0", "patterns": []string{"never-printed-xyz"}, "timeout": 60}},
				{Name: "wait_for_channel", Arguments: map[string]any{"channel": "never-signalled", "timeout": 60}},
			} {
				go func() { _, _ = cs.CallTool(ctx, c) }()
			}
			wantControl := 1 // the watcher
			if engine == "control" {
				wantControl = 2 // and the engine's connection
			}
			var kids []proc
			tmuxtest.WaitFor(t, 10*time.Second, func() bool {
				kids = kids[:0]
				control, waitFor := 0, 0
				for _, p := range socketProcs(t, ts.Socket.Name) {
					if p.ppid != pid {
						continue
					}
					kids = append(kids, p)
					if hasArg(p, "-C") {
						control++
					}
					if hasArg(p, "wait-for") {
						waitFor++
					}
				}
				if control < wantControl || waitFor != 1 {
					return false
				}
				// Started is not yet attached: wait until tmux lists them.
				clients := ts.MustRun("list-clients", "-F", "#{client_control_mode}")
				return strings.Count(clients, "1") >= wantControl
			})
			var clients string

			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			deadline := killed.Add(5 * time.Second)
			for {
				var left []proc
				for _, p := range socketProcs(t, ts.Socket.Name) {
					for _, k := range kids {
						if p.pid == k.pid {
							left = append(left, p)
						}
					}
				}
				clients = ts.MustRun("list-clients", "-F", "#{client_pid} #{client_control_mode}")
				if len(left) == 0 && !strings.Contains(clients, " 1") {
					break
				}
				if time.Now().After(deadline) {
					for _, p := range left {
						t.Errorf("still running %s after the server was killed: pid %d (parent %d) %q", time.Since(killed).Round(time.Millisecond), p.pid, p.ppid, p.argv)
						_ = syscall.Kill(p.pid, syscall.SIGKILL) // started by the server under test, for this test
					}
					t.Fatalf("clients still attached: %q", clients)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("children gone %s after SIGKILL", time.Since(killed).Round(time.Millisecond))

			kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			start := time.Now()
			kill := exec.CommandContext(kctx, ts.Bin, "-L", ts.Socket.Name, "kill-server")
			kill.Env = tmuxtest.CleanEnv()
			if out, err := kill.CombinedOutput(); err != nil {
				t.Errorf("kill-server: %v %s", err, out)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("kill-server took %s", took)
			}
		})
	}
}
