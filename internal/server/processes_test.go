package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// countingTmux writes a wrapper that logs every invocation and then runs
// the real tmux, so a test can count the processes a tool really spawns.
func countingTmux(t *testing.T, real string) (bin string, count func() int) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	bin = filepath.Join(dir, "tmux")
	script := fmt.Sprintf("#!/bin/sh\necho x >> '%s'\nexec '%s' \"$@\"\n", log, real)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
}

// readToolSamples are arguments for one call of every read-only tool,
// targeting by id as an agent is told to, and the number of tmux processes
// that call may spawn. A read-only tool missing here fails the test.
var readToolSamples = map[string]struct {
	args  map[string]any
	procs int
}{
	"get_pane_info": {map[string]any{"pane_id": "%0"}, 1},
	"list_panes":    {map[string]any{}, 1},
	"call_readonly_tools_batch": {map[string]any{"operations": []any{
		map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0"}}}}, 1},
}

// TestProcessesPerReadTool counts tmux processes per read tool call with
// the exec transport, through a wrapper binary given as the tmux path.
func TestProcessesPerReadTool(t *testing.T) {
	ts := tmuxtest.New(t)
	bin, count := countingTmux(t, ts.Bin)
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: bin, Safety: config.Readonly, WaitMax: 5}
	e := newEnvWith(t, ts, cfg, &tmux.ExecRunner{Bin: bin, Env: tmuxtest.CleanEnv()})
	var report []string
	for _, tool := range e.srv.Visible() {
		sample, ok := readToolSamples[tool.Name]
		if !ok {
			t.Errorf("%s: no sample in readToolSamples", tool.Name)
			continue
		}
		before := count()
		if res := e.call(tool.Name, sample.args); res.IsError {
			t.Errorf("%s: %s", tool.Name, text(res))
			continue
		}
		n := count() - before
		report = append(report, fmt.Sprintf("%s=%d", tool.Name, n))
		if n > sample.procs {
			t.Errorf("%s spawned %d tmux processes, budget %d", tool.Name, n, sample.procs)
		}
	}
	sort.Strings(report)
	t.Logf("tmux processes per call: %s", strings.Join(report, " "))
}
