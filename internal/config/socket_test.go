package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSocket: a configured socket that tmux must not be given is an
// ErrInvalid naming the variable it came from and the rule, never the
// value.
func TestCheckSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "cfg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	file := filepath.Join(dir, "secret-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" when valid
	}{
		{"none", nil, ""},
		{"plain name", map[string]string{"TMUX_MCP_SOCKET": "work", "TMUX_TMPDIR": dir}, ""},
		{"new path", map[string]string{"TMUX_MCP_SOCKET_PATH": filepath.Join(dir, "s")}, ""},
		{"path at a file", map[string]string{"TMUX_MCP_SOCKET_PATH": file}, "TMUX_MCP_SOCKET_PATH: a regular file exists there"},
		{"reference path at a file", map[string]string{"LIBTMUX_SOCKET_PATH": file}, "LIBTMUX_SOCKET_PATH: a regular file exists there"},
		{"relative path", map[string]string{"TMUX_MCP_SOCKET_PATH": "s"}, "TMUX_MCP_SOCKET_PATH: must be an absolute path"},
		{"path in a missing directory", map[string]string{"TMUX_MCP_SOCKET_PATH": filepath.Join(dir, "nosuch", "s")}, "TMUX_MCP_SOCKET_PATH: its directory does not exist"},
		{"name with a slash", map[string]string{"TMUX_MCP_SOCKET": "../secret-file"}, "TMUX_MCP_SOCKET: must be a plain name"},
		{"reference name dot-dot", map[string]string{"LIBTMUX_SOCKET": ".."}, "LIBTMUX_SOCKET: must not be '.' or '..'"},
		{"bad name beside a good path", map[string]string{"TMUX_MCP_SOCKET": "a/b", "TMUX_MCP_SOCKET_PATH": filepath.Join(dir, "s")}, "TMUX_MCP_SOCKET: must be a plain name"},
	} {
		c, _, err := FromEnv(envOf(tc.env))
		if err != nil {
			t.Fatalf("%s: FromEnv: %v", tc.name, err)
		}
		err = c.CheckSocket()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: unexpected %v", tc.name, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), dir) {
			t.Errorf("%s: got %v, want ErrInvalid with %q and no path", tc.name, err, tc.want)
		}
	}

	// A file in tmux's own directory, where a name resolves.
	c := Config{SocketName: "sock", TmuxTmpdir: dir}
	if err := os.MkdirAll(c.SocketDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.SocketDir(), "sock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckSocket(); err == nil || !strings.Contains(err.Error(), "TMUX_MCP_SOCKET: a regular file exists there") {
		t.Errorf("file at the name's socket: %v", err)
	}
}
