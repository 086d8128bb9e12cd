package tmux_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func TestCheckSocketName(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule string // "" when valid
	}{
		{"work", ""},
		{"tmuxmcp-test-0a1b.c_d", ""},
		{"...", ""},
		{"", "must not be empty"},
		{"a/b", "without '/'"},
		{"../canary", "without '/'"},
		{"/etc/passwd", "without '/'"},
		{".", "'.' or '..'"},
		{"..", "'.' or '..'"},
		{"a\x00b", "NUL"},
		{strings.Repeat("n", tmux.MaxSocketName), ""},
		{strings.Repeat("n", tmux.MaxSocketName+1), "at most"},
		{strings.Repeat("n", 1<<20), "at most"},
	} {
		err := tmux.CheckSocketName(tc.name)
		short := tc.name
		if len(short) > 20 {
			short = short[:20] + "..."
		}
		if tc.rule == "" {
			if err != nil {
				t.Errorf("%q: unexpected refusal %v", short, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.rule) || !errors.Is(err, tmux.ErrUnsafeSocket) {
			t.Errorf("%q: got %v, want a refusal mentioning %q", short, err, tc.rule)
		}
	}
}

// listen makes a unix socket at p that stays until the test ends.
func listen(t *testing.T, p string) {
	t.Helper()
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
}

// shortTempDir is a temporary directory with a short path, so that socket
// paths inside it fit a socket address.
func shortTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

func TestCheckSocketPath(t *testing.T) {
	base := shortTempDir(t)
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := mk("own", 0o700)
	file := filepath.Join(own, "file")
	if err := os.WriteFile(file, []byte("canary"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(own, "sock")
	listen(t, sock)
	fifo := filepath.Join(own, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	linkFile := filepath.Join(own, "link-file")
	linkSock := filepath.Join(own, "link-sock")
	dangling := filepath.Join(own, "dangling")
	for target, link := range map[string]string{file: linkFile, sock: linkSock, filepath.Join(own, "nothing"): dangling} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range map[string]string{"Cargo.lock": "keep me", "stale.lock": "", "sock.lock": "keep me"} {
		if err := os.WriteFile(filepath.Join(own, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sock3 := filepath.Join(own, "sock3")
	listen(t, sock3)
	sock2 := filepath.Join(own, "sock2")
	listen(t, sock2)
	if err := os.Mkdir(sock2+".lock", 0o700); err != nil {
		t.Fatal(err)
	}
	open := mk("open", 0o777)
	groupW := mk("groupw", 0o770)
	sticky := mk("sticky", 0o777|os.ModeSticky)
	home := mk("home", 0o700)
	t.Setenv("HOME", home)

	type tc struct {
		name, path, rule string // rule "" when valid
	}
	cases := []tc{
		{"socket", sock3, ""},
		{"socket with a non-empty .lock", sock, `a regular file exists at the path plus ".lock"`},
		{"socket with a .lock directory", sock2, `a directory exists at the path plus ".lock"`},
		{"symlink to socket", linkSock, ""},
		{"new beside an empty .lock", filepath.Join(own, "stale"), ""},
		{"new beside a non-empty .lock", filepath.Join(own, "Cargo"), `a regular file exists at the path plus ".lock"`},
		{"new in own dir", filepath.Join(own, "new"), ""},
		{"new in sticky dir", filepath.Join(sticky, "new"), ""},
		{"new under ~", "~/new", ""},
		{"regular file", file, "a regular file exists there"},
		{"directory", own, "a directory exists there"},
		{"named pipe", fifo, "a named pipe exists there"},
		{"symlink to file", linkFile, "a regular file exists there"},
		{"dangling symlink", dangling, "symlink"},
		{"relative", "own/new", "absolute"},
		{"dot relative", "./new", "absolute"},
		{"~user", "~nobody/x", "absolute"},
		{"missing dir", filepath.Join(base, "nosuch", "s"), "directory does not exist"},
		{"parent is a file", filepath.Join(file, "s"), "not a directory"},
		{"world-writable dir", filepath.Join(open, "new"), "writable by group or others"},
		{"group-writable dir", filepath.Join(groupW, "new"), "writable by group or others"},
		{"NUL", own + "/a\x00b", "NUL"},
		{"empty", "", "empty"},
		{"too long", "/" + strings.Repeat("p", tmux.MaxSocketPath), "at most"},
		{"1 MB", "/" + strings.Repeat("p", 1<<20), "at most"},
		{"1 MB relative", strings.Repeat("p", 1<<20), "at most"},
	}
	if os.Geteuid() == 0 {
		// Only root can give a directory away.
		other := mk("other", 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		otherSticky := mk("othersticky", 0o777|os.ModeSticky)
		if err := os.Chown(otherSticky, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			tc{"dir of another user", filepath.Join(other, "new"), "owned by another user"},
			tc{"sticky dir of another user", filepath.Join(otherSticky, "new"), "owned by another user"})
	}
	for _, c := range cases {
		got, err := tmux.CheckSocketPath(c.path)
		if c.rule == "" {
			if err != nil {
				t.Errorf("%s: unexpected refusal %v", c.name, err)
			}
			if !filepath.IsAbs(got) {
				t.Errorf("%s: returned %q, want an absolute path", c.name, got)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.rule) || !errors.Is(err, tmux.ErrUnsafeSocket) {
			t.Errorf("%s: got %v, want a refusal mentioning %q", c.name, err, c.rule)
		}
	}
	if got, _ := tmux.CheckSocketPath("~/new"); got != filepath.Join(home, "new") {
		t.Errorf("~/new expanded to %q", got)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "canary" {
		t.Errorf("canary changed: %q %v", b, err)
	}
}

func TestCheckSocketInDir(t *testing.T) {
	dir := shortTempDir(t)
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	listen(t, filepath.Join(dir, "sock"))
	for _, tc := range []struct{ name, rule string }{
		{"sock", ""},
		{"new", ""},
		{"file", "a regular file exists there"},
		{strings.Repeat("n", tmux.MaxSocketPath-len(dir)), "longer than"},
	} {
		err := tmux.CheckSocketInDir(dir, tc.name)
		if (tc.rule == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.rule)) {
			t.Errorf("%.20s: got %v, want %q", tc.name, err, tc.rule)
		}
	}
}
