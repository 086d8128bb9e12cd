package remote_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// savedBuffer is buffer name's bytes as the rig's tmux server holds them,
// and whether it exists.
func savedBuffer(t *testing.T, r *rig, name string) ([]byte, bool) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "saved")
	cmd := exec.Command(r.ts.Bin, "-L", r.ts.Socket.Name, "save-buffer", "-b", name, f)
	cmd.Env = tmuxtest.CleanEnv()
	if err := cmd.Run(); err != nil {
		return nil, false
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// TestRemoteLoadBuffer: 3 MB with every byte value, invalid UTF-8, CR and
// lines like control-mode framing reach the host's buffer byte for byte
// over ssh, well inside the call bound (set in argument pieces over the
// control connection it outlasted it), after a login shell that prints a
// banner; nothing is left behind (rig cleanup).
func TestRemoteLoadBuffer(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	r.sshd.SetRC("echo 'Welcome to box'; echo '%begin 1 2 1'; echo noise >&2\n")
	var awkward strings.Builder
	for i := 0; i < 256; i++ {
		awkward.WriteByte(byte(i))
	}
	awkward.WriteString("\n%begin 1700000000 5 1\n%end 1700000000 5 1\n\xff\xfe\r\n\x00last")
	content := strings.Repeat("0123456789abcdef\n", 3_000_000/17) + awkward.String()
	// The connection master is up before the clock starts, as for any
	// call but a host's first.
	if err := r.client.LoadBuffer(ctx(t), r.sock, "lb", "x"); err != nil {
		t.Fatalf("%v\nsshd: %s", err, r.sshd.Log())
	}
	start := time.Now()
	if err := r.client.LoadBuffer(ctx(t), r.sock, "lb", content); err != nil {
		t.Fatalf("%v\nsshd: %s", err, r.sshd.Log())
	}
	took := time.Since(start)
	t.Logf("%d bytes over ssh in %v", len(content), took)
	if got, _ := savedBuffer(t, r, "lb"); !bytes.Equal(got, []byte(content)) {
		t.Fatalf("%d bytes back, want %d", len(got), len(content))
	}
	if took > tmux.DefaultTimeout/2 {
		t.Errorf("took %v, more than half the call bound", took)
	}
}

// TestRemoteLoadBufferAsksFirst: a login shell whose rc file reads its
// standard input (a question) never gets any of the content: it is sent
// only once the shell is about to exec tmux. The call fails within the
// start bound, saying so, and no buffer is made, never one that lost its
// first line to the question.
func TestRemoteLoadBufferAsksFirst(t *testing.T) {
	r := newRig(t, remote.Spec{}, func(o *remote.Options) { o.StartTimeout = 2 * time.Second })
	s := r.sshd
	s.SetRC("read answer\n")
	err := r.client.LoadBuffer(ctx(t), r.sock, "asked", "yes\nthe content\n")
	if err == nil || !strings.Contains(err.Error(), "did not start tmux within 2s") || !strings.Contains(err.Error(), "host box") {
		t.Fatalf("err = %v", err)
	}
	if got, ok := savedBuffer(t, r, "asked"); ok {
		t.Fatalf("a buffer was made: %q", got)
	}
	s.SetRC("")
	if err := r.client.LoadBuffer(ctx(t), r.sock, "asked", "yes\nthe content\n"); err != nil {
		t.Fatalf("after the rc file was fixed: %v", err)
	}
	if got, _ := savedBuffer(t, r, "asked"); string(got) != "yes\nthe content\n" {
		t.Fatalf("buffer %q", got)
	}
}

// TestRemoteLoadBufferHostile: each value of the hostile-input table,
// twice with a NUL between, streamed into a host's buffer arrives
// exactly, and nothing runs on either side (the marker would be on this
// machine).
func TestRemoteLoadBufferHostile(t *testing.T) {
	r := newRig(t, remote.Spec{}, nil)
	marker := filepath.Join(t.TempDir(), "PWNED")
	for name, in := range hostile(marker) {
		content := in + "\x00" + in
		if err := r.client.LoadBuffer(ctx(t), r.sock, "hostile", content); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := savedBuffer(t, r, "hostile"); string(got) != content {
			t.Fatalf("%s: stored %d bytes, want %d", name, len(got), len(content))
		}
	}
	time.Sleep(200 * time.Millisecond) // a format job would run asynchronously
	assertNoFile(t, marker)
}
