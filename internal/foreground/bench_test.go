package foreground_test

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// BenchmarkInspect measures one pane's inspection on a machine holding at
// least 1,000 processes (the benchmark starts what is missing), for a
// shell at its prompt, a Python REPL and a Node REPL (eleven threads).
// The baseline is the cheapest other way to learn anything about a
// pane's foreground: one tmux process asked for #{pane_current_command}.
// Budget (issue 20): at most 100 µs per pane.
func BenchmarkInspect(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("linux")
	}
	fillProcesses(b, 1000)
	s := tmuxtest.New(b)
	panes := map[string]string{"bash": "bash --norc --noprofile", "python3": "python3 -q", "node": "node"}
	targets := map[string]foreground.Target{}
	for name, cmd := range panes {
		if _, err := exec.LookPath(strings.Fields(cmd)[0]); err != nil {
			if os.Getenv("CI") != "" { // as fgcorpus.Require: CI installs them all
				b.Fatalf("%s is required under CI (.ci/run installs it): %v", name, err)
			}
			b.Logf("%s is not installed: its pane is left out", name)
			continue
		}
		pane := s.MustRun("new-window", "-P", "-F", "#{pane_id}", "-t", "main", cmd)
		out := s.MustRun("display-message", "-p", "-t", pane, "#{pane_pid} #{pane_tty}")
		f := strings.Fields(out)
		pid, _ := strconv.Atoi(f[0])
		tg := foreground.Target{PanePID: pid, TTY: f[1]}
		deadline := time.Now().Add(10 * time.Second)
		for foreground.Inspect(tg, foreground.Options{}).State != foreground.WaitingForInput {
			if time.Now().After(deadline) {
				b.Fatalf("%s never waited for input", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
		targets[name] = tg
		panes[name] = pane
	}
	for _, name := range []string{"bash", "python3", "node"} {
		tg, ok := targets[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if r := foreground.Inspect(tg, foreground.Options{}); r.State == foreground.Unknown {
					b.Fatal(r)
				}
			}
		})
		b.Run(name+"/same-user-sources", func(b *testing.B) {
			for b.Loop() {
				foreground.Inspect(tg, foreground.Options{NoSyscall: true})
			}
		})
	}
	b.Run("baseline-tmux-display-message", func(b *testing.B) {
		for b.Loop() {
			s.MustRun("display-message", "-p", "-t", panes["bash"], "#{pane_current_command}")
		}
	})
}

// fillProcesses starts sleeping processes until the machine holds n, and
// ends exactly those at cleanup.
func fillProcesses(b *testing.B, n int) {
	entries, _ := os.ReadDir("/proc")
	have := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			have++
		}
	}
	var started []*exec.Cmd
	b.Cleanup(func() {
		for _, c := range started {
			_ = c.Process.Signal(syscall.SIGKILL)
			_ = c.Wait()
		}
	})
	for ; have < n; have++ {
		c := exec.Command("sleep", "600")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		started = append(started, c)
	}
	b.Logf("processes on the machine: at least %d (%d started)", have, len(started))
}

// BenchmarkReadServerChildren is list_panes's read of a tmux server's
// panes from /proc (the current command and path of each) at 500 panes,
// half a shell at its prompt and half sleep, as the e2e list_panes
// benchmark builds them: StartServerChildren joined at once by Wait (two
// goroutines), and ReadPaneProcs, the same read of a pid list spread over
// the cores.
func BenchmarkReadServerChildren(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("linux")
	}
	s := tmuxtest.New(b)
	s.GrowPanes(1, 500)
	server, _ := strconv.Atoi(s.MustRun("display-message", "-p", "#{pid}"))
	var pids []int
	for _, f := range strings.Fields(s.MustRun("list-panes", "-a", "-F", "#{pane_pid}")) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
	}
	time.Sleep(time.Second) // the shells start
	if got := len(foreground.StartServerChildren(server, foreground.Options{}).Wait()); got < 500 {
		b.Fatalf("read %d children, want 500", got)
	}
	b.Run("children", func(b *testing.B) {
		for b.Loop() {
			foreground.StartServerChildren(server, foreground.Options{}).Wait()
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/500, "µs/pane")
	})
	b.Run("pids", func(b *testing.B) {
		for b.Loop() {
			foreground.ReadPaneProcs(pids, foreground.Options{})
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/500, "µs/pane")
	})
}
