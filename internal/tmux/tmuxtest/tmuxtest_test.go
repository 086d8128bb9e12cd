package tmuxtest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A server a test started ends when the test's process is killed before
// its cleanup runs. The helper is this test binary again: it starts a
// server, prints its socket name and waits to be killed.
func TestServerEndsWithItsProcess(t *testing.T) {
	if os.Getenv("TMUXTEST_HELPER") != "" {
		// The way tests that need their own first session start a server.
		s := NewWith(t)
		s.MustRun("new-session", "-d", "-s", "main")
		os.Stdout.WriteString(s.Socket.Name + "\n")
		time.Sleep(time.Minute)
		return
	}
	helper := exec.Command(os.Args[0], "-test.run=^TestServerEndsWithItsProcess$", "-test.count=1")
	helper.Env = append(os.Environ(), "TMUXTEST_HELPER=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	name := strings.TrimSpace(string(buf[:n]))
	if !strings.HasPrefix(name, "tmuxmcp-test-") {
		_ = helper.Process.Kill()
		t.Fatalf("helper printed %q", name)
	}
	srv := &Server{t: t, Bin: Bin(t)}
	srv.Socket.Name = name
	t.Cleanup(srv.Kill) // if the server outlives the check
	if _, err := srv.Run("has-session", "-t", "main"); err != nil {
		_ = helper.Process.Kill()
		t.Fatalf("the helper's server is not up: %v", err)
	}
	_ = helper.Process.Signal(syscall.SIGKILL)
	_ = helper.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := srv.Run("has-session"); err != nil {
			return // gone
		}
		if time.Now().After(deadline) {
			t.Fatal("the server of a killed test process still runs 5 s later")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
