package tmux_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// awkwardContent is content that only a byte-exact path keeps: every byte
// value (NUL too), invalid UTF-8, CR, lines that look like control-mode
// framing or a marker, tmux syntax, and no final newline.
func awkwardContent() string {
	var b strings.Builder
	for i := 0; i < 256; i++ {
		b.WriteByte(byte(i))
	}
	b.WriteString("\n%begin 1700000000 5 1\n%end 1700000000 5 1\n%exit\n\x1etmux-mcp-00-start\n")
	b.WriteString("\xff\xfe\xc3(invalid)\r\n;\\; #{pane_id} $(id) '\"\n\x00\x00trailing")
	return b.String()
}

// savedBuffer is buffer name's bytes as tmux holds them.
func savedBuffer(t *testing.T, ts *tmuxtest.Server, name string) []byte {
	t.Helper()
	f := filepath.Join(t.TempDir(), "saved")
	cmd := exec.Command(ts.Bin, "-L", ts.Socket.Name, "save-buffer", "-b", name, f)
	cmd.Env = tmuxtest.CleanEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("save-buffer %s: %v %s", name, err, out)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadBufferStreams: LoadBuffer puts content into a buffer byte for
// byte, here (exec and control runners) and through each login shell a
// remote host may have (the fixed "echo ; exec tmux load-buffer -" line);
// 3 MB takes well under the call bound; a missing server is ErrNoServer,
// with no buffer made anywhere.
func TestLoadBufferStreams(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 3_000_000/17) + awkwardContent()
	runners := map[string]func(ts *tmuxtest.Server) tmux.Runner{
		"exec": func(ts *tmuxtest.Server) tmux.Runner { return ts.Runner() },
		"control": func(ts *tmuxtest.Server) tmux.Runner {
			return &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv()}
		},
	}
	for _, sh := range []string{"bash", "zsh", "dash", "fish", "tcsh"} {
		runners["via-"+sh] = func(ts *tmuxtest.Server) tmux.Runner {
			path, err := exec.LookPath(sh)
			if err != nil {
				return nil
			}
			return &tmux.ControlRunner{Bin: ts.Bin, Env: tmuxtest.CleanEnv(), Via: shellVia{path}}
		}
	}
	for name, mk := range runners {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ts := tmuxtest.New(t)
			r := mk(ts)
			if r == nil {
				t.Skip("shell not installed")
			}
			if cr, ok := r.(*tmux.ControlRunner); ok {
				t.Cleanup(func() { _ = cr.Close() })
			}
			c := &tmux.Client{Runner: r}
			sock := tmux.Socket{Name: ts.Socket.Name}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i, content := range []string{awkwardContent(), "x", big} {
				start := time.Now()
				if err := c.LoadBuffer(ctx, sock, "lb", content); err != nil {
					t.Fatalf("content %d: %v", i, err)
				}
				took := time.Since(start)
				if got := savedBuffer(t, ts, "lb"); !bytes.Equal(got, []byte(content)) {
					t.Fatalf("content %d: %d bytes back, want %d; differ from byte %d", i, len(got), len(content), firstDiff(got, []byte(content)))
				}
				if len(content) > 1_000_000 {
					t.Logf("%d bytes in %v", len(content), took)
					if took > 5*time.Second {
						t.Errorf("%d bytes took %v, half the call bound", len(content), took)
					}
				}
			}
			fresh := tmuxtest.NewWith(t) // no server
			err := c.LoadBuffer(ctx, tmux.Socket{Name: fresh.Socket.Name}, "lb", "x")
			if !errors.Is(err, tmux.ErrNoServer) {
				t.Fatalf("no server: %v", err)
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
