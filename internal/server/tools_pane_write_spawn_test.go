package server

import (
	"path/filepath"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestSpawnReportsStartedProgram: split_window and respawn_pane report the
// new program's command and directory, never the state tmux is in right
// after forking it (pane_current_path null, pane_current_command "tmux"),
// which the same-round-trip read used to return on a busy machine.
func TestSpawnReportsStartedProgram(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defShell := e.tmux.MustRun("show-options", "-gv", "default-shell")
	shells := map[string]bool{"sleep": true, filepath.Base(defShell): true}
	if defShell == tmuxtest.Shell() {
		shells["sh"], shells["bash"] = true, true // the script and the bash it execs
	}
	check := func(what string, p PaneInfo) {
		t.Helper()
		// tmux runs the shell argument through default-shell -c, so the
		// program seen may still be that shell: either is the new program.
		cmd := strOrNil(p.PaneCurrentCommand)
		if !shells[cmd] || p.PaneCurrentPath == nil || *p.PaneCurrentPath != dir {
			t.Errorf("%s: pane_current_command %s, pane_current_path %s; want sleep (or its shell) in %s", what, strOrNil(p.PaneCurrentCommand), strOrNil(p.PaneCurrentPath), dir)
		}
	}
	for i := 0; i < 8; i++ {
		var p PaneInfo
		e.ok("split_window", map[string]any{"pane_id": "%0", "shell": "sleep 300", "start_directory": dir, "size": 1}, &p)
		check("split_window", p)
		e.ok("respawn_pane", map[string]any{"pane_id": p.PaneID, "kill": true, "shell": "sleep 301", "start_directory": dir}, &p)
		check("respawn_pane", p)
		e.tmux.MustRun("kill-pane", "-t", p.PaneID)
	}
}

func strOrNil(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
