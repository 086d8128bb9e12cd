package cli

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// needProgram returns the path of a program a test drives. Missing, it
// skips the test, except under CI (CI=true), which installs every such
// program (.ci/run): there a missing one fails.
func needProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI (.ci/run installs it): %v", name, err)
		}
		t.Skipf("%s is not installed (CI installs it)", name)
	}
	return p
}

// script writes `tmux-mcp completion SHELL` to a file and returns its path.
func script(t *testing.T, shell string) string {
	t.Helper()
	code, out, errOut := run(t, nil, "completion", shell)
	if code != 0 || errOut != "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, errOut)
	}
	p := filepath.Join(t.TempDir(), "tmux-mcp."+shell)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// registryTools lists every tool name from the registry itself.
func registryTools(t *testing.T) []string {
	t.Helper()
	srv, err := server.New(config.Config{Safety: config.Destructive, PromptsAsTools: true}, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range srv.All() {
		names = append(names, tl.Name)
	}
	if len(names) < 50 {
		t.Fatalf("registry has %d tools", len(names))
	}
	return names
}

// completionCases are command lines (the last word is the one completed)
// and the completions each shell must offer for them: exactly these
// (want), or at least these (some) when the list is long.
var completionCases = []struct {
	name  string
	words []string
	want  []string
	some  []string
}{
	{name: "a flag", words: []string{"--saf"}, want: []string{"--safety"}},
	{name: "flags sharing a prefix", words: []string{"--socket"}, want: []string{"--socket", "--socket-path"}},
	{name: "a subcommand", words: []string{"do"}, want: []string{"docs", "doctor"}},
	{name: "every subcommand", words: []string{""}, want: []string{"call", "completion", "docs", "doctor", "help", "man", "serve", "tools"}},
	{name: "a tool name", words: []string{"call", "get_pa"}, want: []string{"get_pane_info"}},
	{name: "tool names after a flag and its value", words: []string{"--socket", "work", "call", "list_s"}, want: []string{"list_servers", "list_sessions"}},
	{name: "every tool", words: []string{"call", ""}, some: []string{"capture_pane", "send_keys", "kill_server", "get_prompt", "wait_for_text"}},
	{name: "nothing after the tool", words: []string{"call", "get_pane_info", ""}, want: nil},
	{name: "a subcommand's flag", words: []string{"call", "--r"}, want: []string{"--raw"}},
	{name: "settings after serve", words: []string{"serve", "--ht"}, want: []string{"--http"}},
	{name: "a flag's choices", words: []string{"--safety", ""}, want: []string{"destructive", "mutating", "readonly"}},
	{name: "a flag's choices after =", words: []string{"--engine=e"}, want: []string{"--engine=exec"}},
	{name: "a list's next element", words: []string{"--toolsets=pane,w"}, want: []string{"--toolsets=pane,wait", "--toolsets=pane,window"}},
	{name: "the shells", words: []string{"completion", ""}, want: []string{"bash", "fish", "zsh"}},
}

// Bash: the generated script loaded in a real bash, its completion
// function driven as bash's programmable completion drives it (COMP_WORDS,
// split at "=" as COMP_WORDBREAKS does by default).
func TestBashCompletion(t *testing.T) {
	bash := needProgram(t, "bash")
	p := script(t, "bash")
	var drv strings.Builder
	drv.WriteString("source " + strconv.Quote(p) + " || exit 1\ncomplete -p tmux-mcp\n")
	for i, c := range completionCases {
		words := []string{"tmux-mcp"}
		for _, w := range c.words {
			// bash's own split of --flag=value
			if f, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
				words = append(words, f, "=", v)
				continue
			}
			words = append(words, w)
		}
		drv.WriteString("COMP_WORDS=(")
		for _, w := range words {
			drv.WriteString(strconv.Quote(w) + " ")
		}
		drv.WriteString(")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\nCOMPREPLY=()\n_tmux_mcp\n")
		drv.WriteString("printf 'case " + strconv.Itoa(i) + "'; for w in \"${COMPREPLY[@]}\"; do printf '\\t%s' \"$w\"; done; echo\n")
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", drv.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if lines[0] != "complete -F _tmux_mcp tmux-mcp" {
		t.Errorf("complete -p tmux-mcp: %q", lines[0])
	}
	got := map[int][]string{}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		n, err := strconv.Atoi(strings.TrimPrefix(f[0], "case "))
		if err != nil {
			t.Fatalf("unexpected output line %q\n%s", l, out)
		}
		got[n] = append(got[n], f[1:]...)
	}
	for i, c := range completionCases {
		want := c.want
		// After "=" bash completes the value alone: the word is "e", not "--engine=e".
		if len(c.words) > 0 && strings.HasPrefix(c.words[len(c.words)-1], "-") && strings.Contains(c.words[len(c.words)-1], "=") {
			want = nil
			for _, w := range c.want {
				want = append(want, w[strings.Index(w, "=")+1:])
			}
		}
		checkCompletions(t, "bash", c.name, got[i], want, c.some)
	}
}

// checkCompletions compares one case's completions.
func checkCompletions(t *testing.T, shell, name string, got, want, some []string) {
	t.Helper()
	slices.Sort(got)
	if some != nil {
		for _, w := range some {
			if !slices.Contains(got, w) {
				t.Errorf("%s, %s: %q missing from %d completions", shell, name, w, len(got))
			}
		}
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s, %s: completions %q, want %q", shell, name, got, want)
	}
}

// Fish: the script sourced in a real fish, which completes a command line
// with `complete -C` as it would at its prompt.
func TestFishCompletion(t *testing.T) {
	fish := needProgram(t, "fish")
	p := script(t, "fish")
	var drv strings.Builder
	drv.WriteString("source " + strconv.Quote(p) + "; or exit 1\n")
	for i, c := range completionCases {
		line := "tmux-mcp " + strings.Join(c.words, " ")
		drv.WriteString("for c in (complete -C " + fishQuote(line) + "); echo case " + strconv.Itoa(i) + "\\t$c; end\n")
	}
	cmd := exec.Command(fish, "--no-config", "-c", drv.String())
	cmd.Dir = t.TempDir() // "nothing after the tool" must not list files
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	got := map[int][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		f := strings.Split(l, "\t") // case N, completion, description
		n, err := strconv.Atoi(strings.TrimPrefix(f[0], "case "))
		if err != nil || len(f) < 2 {
			t.Fatalf("unexpected output line %q\n%s", l, out)
		}
		got[n] = append(got[n], f[1])
	}
	for i, c := range completionCases {
		checkCompletions(t, "fish", c.name, got[i], c.want, c.some)
	}
}

// Zsh: the script installed on $fpath of an interactive zsh (compinit)
// running in a tmux pane on the test's own server; Tab is pressed as a
// person would, and the screen read back.
func TestZshCompletion(t *testing.T) {
	zsh := needProgram(t, "zsh")
	p := script(t, "zsh")
	dir := t.TempDir()
	if err := os.Rename(p, filepath.Join(dir, "_tmux-mcp")); err != nil {
		t.Fatal(err)
	}
	rc := "fpath=(" + dir + " $fpath)\nautoload -Uz compinit && compinit -u -D\nPROMPT='%% '\nunsetopt beep\n"
	if err := os.WriteFile(filepath.Join(dir, ".zshrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := tmuxtest.NewWith(t)
	srv.MustRun("new-session", "-d", "-s", "z", "-x", "200", "-y", "50",
		"env", "-i", "HOME="+dir, "ZDOTDIR="+dir, "TERM=screen", "PATH="+os.Getenv("PATH"), zsh, "-i")
	screen := func() string { out, _ := srv.Run("capture-pane", "-p", "-t", "z"); return out }
	tmuxtest.WaitFor(t, 20*time.Second, func() bool { return strings.HasPrefix(screen(), "%") })
	for _, c := range []struct {
		typed string
		want  []string // each on the screen after Tab
	}{
		{"tmux-mcp --saf", []string{"% tmux-mcp --safety="}},
		{"tmux-mcp --safety=", []string{"destructive", "mutating", "readonly"}},
		{"tmux-mcp call get_pa", []string{"% tmux-mcp call get_pane_info"}},
		{"tmux-mcp doc", []string{"docs", "doctor", "check tmux, the socket"}},
		{"tmux-mcp completion ", []string{"bash", "fish", "zsh"}},
		{"tmux-mcp call --r", []string{"% tmux-mcp call --raw"}},
	} {
		srv.MustRun("send-keys", "-t", "z", "C-u", "C-l")
		tmuxtest.WaitFor(t, 5*time.Second, func() bool { return strings.TrimSpace(screen()) == "%" })
		srv.MustRun("send-keys", "-t", "z", "-l", c.typed)
		srv.MustRun("send-keys", "-t", "z", "Tab")
		deadline := time.Now().Add(10 * time.Second)
		for {
			s := screen()
			ok := true
			for _, w := range c.want {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("zsh, %q then Tab: want %q on the screen, got:\n%s", c.typed, c.want, s)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Every flag, subcommand and tool the binary has is in every script, read
// from the binary's own flag sets and the registry.
func TestCompletionCoversEverything(t *testing.T) {
	fs, _, _ := globalFlags()
	var flags []string
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, "--"+f.Name) })
	tools := registryTools(t)
	for _, shell := range completionShells {
		_, out, _ := run(t, nil, "completion", shell)
		for _, group := range [][]string{flags, tools, {"serve", "call", "tools", "doctor", "docs", "completion", "man", "--raw", "--audit", "--stats", "--check"}} {
			for _, w := range group {
				word := strings.TrimPrefix(w, "--")
				if !strings.Contains(out, word) {
					t.Errorf("%s script lacks %s", shell, w)
				}
			}
		}
	}
}

// The value hints name real flags, and each choice is a value config.Load
// accepts without a warning.
func TestFlagHints(t *testing.T) {
	fs, _, _ := globalFlags()
	for name, h := range flagHints {
		if fs.Lookup(name) == nil {
			t.Errorf("hint for %q, which is not a flag", name)
			continue
		}
		for _, c := range h.choices {
			cfg, warns, err := config.Load(func(string) string { return "" }, map[string]string{name: c})
			if err == nil {
				err = cfg.CheckToolsets(server.Toolsets)
			}
			if err != nil || len(warns) > 0 {
				t.Errorf("--%s=%s: %v %v", name, c, warns, err)
			}
		}
	}
}

func TestCompletionUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"completion"}, "completion needs an argument: tmux-mcp completion bash|zsh|fish"},
		{[]string{"completion", "tcsh"}, `no script for \"tcsh\" (shells: bash, zsh, fish)`},
		{[]string{"completion", "bash", "zsh"}, "completion takes at most 1 arguments"},
	} {
		code, out, errOut := run(t, nil, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errOut, c.err)
		}
	}
	// Neither needs a valid configuration: they describe the binary.
	bad := map[string]string{"TMUX_MCP_ENGINE": "steam"}
	for _, args := range [][]string{{"completion", "bash"}, {"man"}} {
		if code, out, errOut := run(t, bad, args...); code != 0 || out == "" {
			t.Errorf("%v with an invalid configuration: exit %d, stderr %q", args, code, errOut)
		}
	}
}
