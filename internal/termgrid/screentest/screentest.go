// Package screentest starts real programs in tmux panes (ls, git, grep,
// vim, less, top, htop, dialog) and waits until each shows a settled
// screen: a corpus of what terminal programs mean by colour, for tests of
// styled captures. It is for tests only.
package screentest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// Screen is one program's settled screen: Pane is the pane showing it.
type Screen struct {
	Name string
	Pane string
}

// program is one screen of the corpus: the programs it needs (CI installs
// them), how to set it up in dir, the command the pane runs there, keys
// typed once it shows ready, and the text the settled screen shows.
type program struct {
	name  string
	needs []string
	setup func(t testing.TB, dir string)
	cmd   string
	ready string
	keys  []string
	want  string
}

var programs = []program{
	{name: "ls --color", needs: []string{"ls"}, setup: lsDir,
		cmd: "ls -l --color=always --time-style=+%F", want: "script.sh"},
	{name: "git diff --color", needs: []string{"git"}, setup: gitRepo,
		cmd: "git -c color.ui=always --no-pager diff", want: "return a * b"},
	{name: "grep --color", needs: []string{"grep"}, setup: gitRepo,
		cmd: "grep --color=always -rn --exclude-dir=.git return .", want: "calc.go"},
	{name: "vim syntax + visual selection", needs: []string{"vim"}, setup: gitRepo,
		cmd:   "vim -u NONE -i NONE -N -n -c 'syntax on' calc.go",
		ready: `"calc.go"`, keys: []string{"3G", "V", "2j"}, want: "-- VISUAL LINE --"},
	{name: "less search match", needs: []string{"less"}, setup: textFile,
		cmd: "less -R +/lorem text.txt", want: "lorem"},
	{name: "top", needs: []string{"top"},
		cmd: "top -d 3600", want: "PID"},
	{name: "htop", needs: []string{"htop"},
		cmd: "htop -d 36000", want: "PID"},
	{name: "dialog menu", needs: []string{"dialog"},
		cmd:   "dialog --menu 'Pick a fruit' 14 44 4 1 Apple 2 Banana 3 Cherry 4 Durian",
		ready: "Durian", keys: []string{"Down"}, want: "Banana"},
}

// Start starts every program of the corpus in a session of its own on ts
// (80x24, TERM tmux-256color) and returns their settled screens. A missing
// program fails the test under CI (CI=true), which installs them all, and
// leaves its screen out elsewhere.
func Start(t testing.TB, ts *tmuxtest.Server) []Screen {
	t.Helper()
	ts.MustRun("set-option", "-g", "default-terminal", "tmux-256color")
	var out []Screen
	for i, p := range programs {
		if missing := missing(p.needs); missing != "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s: %s is not installed (.ci/run installs it)", p.name, missing)
			}
			t.Logf("%s: %s is not installed; the screen is left out", p.name, missing)
			continue
		}
		dir := t.TempDir()
		if p.setup != nil {
			p.setup(t, dir)
		}
		// The program's screen stays after it ends (ls, git, grep).
		id := ts.MustRun("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", fmt.Sprintf("corpus%d", i),
			"-x", "80", "-y", "24", "-c", dir, "-e", "LANG=C.UTF-8", "-e", "HOME="+dir,
			"sh", "-c", p.cmd+"; exec sleep 100000")
		if len(p.keys) > 0 {
			settle(t, ts, id, p.ready)
			for _, k := range p.keys {
				ts.MustRun("send-keys", "-t", id, k)
			}
		}
		settle(t, ts, id, p.want)
		out = append(out, Screen{Name: p.name, Pane: id})
	}
	return out
}

func missing(progs []string) string {
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			return p
		}
	}
	return ""
}

// settle waits until the pane shows want and its styled capture has not
// changed for 300 ms.
func settle(t testing.TB, ts *tmuxtest.Server, id, want string) {
	t.Helper()
	var last string
	since := time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := ts.Run("capture-pane", "-p", "-e", "-t", id)
		if err != nil {
			t.Fatal(err)
		}
		if out != last || !strings.Contains(out, want) {
			last, since = out, time.Now()
		} else if time.Since(since) > 300*time.Millisecond {
			return
		}
		if time.Now().After(deadline) {
			plain, _ := ts.Run("capture-pane", "-p", "-t", id)
			t.Fatalf("pane %s did not settle showing %q:\n%s", id, want, plain)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

func write(t testing.TB, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

func lsDir(t testing.TB, dir string) {
	t.Helper()
	for _, d := range []string{"docs", "src"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "script.sh"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "README.md"), "readme\n", 0o644)
	write(t, filepath.Join(dir, "backup.tar.gz"), "x", 0o644)
	write(t, filepath.Join(dir, "photo.png"), "x", 0o644)
	for _, l := range [][2]string{{"README.md", "link"}, {"gone", "broken"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
}

const calcOld = `package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a + b
}

// Mul returns the product of a and b.
func Mul(a, b int) int {
	return a + b // wrong
}
`

func gitRepo(t testing.TB, dir string) {
	t.Helper()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	write(t, filepath.Join(dir, "calc.go"), calcOld, 0o644)
	git("init", "-q", ".")
	git("add", ".")
	git("commit", "-q", "-m", "calc")
	write(t, filepath.Join(dir, "calc.go"), strings.Replace(calcOld, "return a + b // wrong", "return a * b", 1), 0o644)
}

func textFile(t testing.TB, dir string) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "%3d lorem ipsum dolor sit amet, consectetur adipiscing elit %d\n", i, i*7)
	}
	write(t, filepath.Join(dir, "text.txt"), b.String(), 0o644)
}
