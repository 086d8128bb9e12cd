//go:build unix

package tmux_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// A pipe this process inherited without close-on-exec does not reach a
// tmux server it starts: the parent holding the pipe's other end sees it
// close when this process exits, not when the tmux server does. The
// helper process is this test binary again, given the pipe as fd 3 (the
// way Go's fuzz coordinator hands its workers their pipes); it starts a
// server that outlives it and exits.
func TestInheritedFilesDoNotReachTmux(t *testing.T) {
	bin := tmuxtest.Bin(t)
	if sock := os.Getenv("TMUX_MCP_TEST_INHERIT_SOCKET"); sock != "" {
		cmd := exec.Command(bin, "-S", sock, "-f", "/dev/null", "new-session", "-d", "sleep 120")
		cmd.Env = tmuxtest.CleanEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("new-session: %v: %s", err, out)
		}
		return
	}
	sock := filepath.Join(t.TempDir(), "s")
	t.Cleanup(func() {
		// Ends the server the helper started, whatever the outcome.
		_ = exec.Command(bin, "-S", sock, "kill-server").Run()
	})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	helper := exec.Command(os.Args[0], "-test.run=^TestInheritedFilesDoNotReachTmux$", "-test.count=1")
	helper.Env = append(os.Environ(), "TMUX_MCP_TEST_INHERIT_SOCKET="+sock)
	helper.ExtraFiles = []*os.File{w}
	out, err := helper.CombinedOutput()
	w.Close()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the helper started no tmux server: %v\n%s", err, out)
	}
	eof := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		eof <- err
	}()
	select {
	case err := <-eof:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pipe stays open after the helper exited: the tmux server it started holds the helper's inherited descriptor")
	}
}
