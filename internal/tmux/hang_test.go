package tmux_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// A control client that never attaches (here a tmux whose -C mode hangs)
// costs the first call the attach bound, not its whole timeout; the calls
// in flight meanwhile and the calls after it are answered over exec, and
// no new control client is tried for a while.
func TestControlRunnerHangingAttachDoesNotBlockCalls(t *testing.T) {
	srv := tmuxtest.New(t)
	dir := t.TempDir()
	starts := filepath.Join(dir, "control-starts")
	bin := filepath.Join(dir, "tmux")
	script := "#!/bin/sh\nfor a; do\n  if [ \"$a\" = -C ]; then echo C >> '" + starts + "'; exec sleep 1000; fi\ndone\nexec '" + srv.Bin + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cr := &tmux.ControlRunner{Bin: bin, Env: tmuxtest.CleanEnv(), AttachTimeout: 2 * time.Second}
	t.Cleanup(func() { _ = cr.Close() })
	cmd := tmux.Command{"display-message", "-p", "x"}

	run := func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		start := time.Now()
		outs, err := cr.Run(ctx, srv.Socket, cmd)
		if err == nil && string(outs[0]) != "x\n" {
			t.Errorf("reply %q", outs[0])
		}
		return time.Since(start), err
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if took, err := run(); err != nil || took > 4*time.Second {
				t.Errorf("a call while the control client hangs: %v after %s", err, took)
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 5; i++ {
		// Well under the attach bound, which a call that waited for the
		// hanging client would take (and roomy for a loaded machine).
		if took, err := run(); err != nil || took > time.Second {
			t.Errorf("a call after the control client hung: %v after %s", err, took)
		}
	}
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "C"); n != 1 {
		t.Errorf("%d control clients started, want 1 (then a pause)", n)
	}
}
