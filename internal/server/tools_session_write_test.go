package server

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

type swObj = map[string]any

var swPaneIDRe = regexp.MustCompile(`^%[0-9]+$`)

// showEnv reads one variable of a session's environment ("" with ok=false
// when it is not set there).
func swShowEnv(e *env, session, name string) (string, bool) {
	out, err := e.tmux.Run("show-environment", "-t", session, name)
	if err != nil {
		return "", false
	}
	v, found := strings.CutPrefix(out, name+"=")
	return v, found
}

// procEnv reads the environment a pane's process was started with.
func swProcEnv(t *testing.T, pid string) map[string]string {
	t.Helper()
	// A pane's process is forked by the tmux server and then execs its
	// shell; until it has, /proc shows the server's environment.
	tmuxBin, _ := filepath.EvalSymlinks(tmuxtest.Bin(t))
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		exe, err := os.Readlink("/proc/" + pid + "/exe")
		return err == nil && exe != tmuxBin
	})
	raw, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Fatalf("read environ of %s: %v", pid, err)
	}
	m := map[string]string{}
	for _, kv := range strings.Split(string(raw), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// paneCwd waits for a pane's shell to report its working directory.
func swPaneCwd(t *testing.T, e *env, pane string) string {
	t.Helper()
	var got string
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		got = e.tmux.MustRun("display-message", "-p", "-t", pane, "#{pane_current_path}")
		return got != ""
	})
	return got
}

func swRealDir(t *testing.T, d string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func swSessionCount(e *env) int {
	out, err := e.tmux.Run("list-sessions", "-F", "#{session_id}")
	if err != nil || out == "" {
		return 0
	}
	return len(strings.Split(out, "\n"))
}

func TestCreateSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	var s SessionInfo
	e.ok("create_session", swObj{"session_name": "work", "window_name": "-editor;", "x": 100, "y": 30}, &s)
	if s.SessionName == nil || *s.SessionName != "work" || s.WindowCount == nil || *s.WindowCount != 1 ||
		s.ActivePaneID == nil || !swPaneIDRe.MatchString(*s.ActivePaneID) || !strings.HasPrefix(s.SessionID, "$") {
		t.Fatalf("create_session result: %+v", s)
	}
	if got := e.tmux.MustRun("display-message", "-p", "-t", s.SessionID, "#{window_name} #{window_width}x#{window_height} #{pane_id}"); got != "-editor; 100x30 "+*s.ActivePaneID {
		t.Fatalf("created session: %q", got)
	}

	// Format text stays literal everywhere tmux would expand it.
	pwned := filepath.Join(t.TempDir(), "pwned")
	dir := filepath.Join(t.TempDir(), "d#{pane_id}#(true)")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lit SessionInfo
	e.ok("create_session", swObj{"session_name": "s#{pane_id}#(touch " + pwned + ")", "window_name": "w##{session_name}", "start_directory": dir}, &lit)
	if *lit.SessionName != "s#{pane_id}#(touch "+pwned+")" {
		t.Fatalf("session name %q", *lit.SessionName)
	}
	if got := e.tmux.MustRun("display-message", "-p", "-t", lit.SessionID, "#{window_name}"); got != "w##{session_name}" {
		t.Fatalf("window name %q", got)
	}
	if got := swPaneCwd(t, e, *lit.ActivePaneID); swRealDir(t, got) != swRealDir(t, dir) {
		t.Fatalf("cwd %q, want %q", got, dir)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a name ran a shell command through tmux's #() format")
	}

	// No name: tmux picks one.
	var auto SessionInfo
	e.ok("create_session", swObj{}, &auto)
	if auto.SessionName == nil || *auto.SessionName == "" || auto.SessionID == s.SessionID {
		t.Fatalf("auto-named session: %+v", auto)
	}

	// Environment is stored in the session environment, mapping or JSON string.
	e.ok("create_session", swObj{"session_name": "envmap", "environment": map[string]string{"FOO": "bar baz"}}, nil)
	if v, ok := swShowEnv(e, "envmap", "FOO"); !ok || v != "bar baz" {
		t.Fatalf("session env FOO = %q, %v", v, ok)
	}
	e.ok("create_session", swObj{"session_name": "envstr", "environment": `{"FOO":"x"}`}, nil)
	if v, ok := swShowEnv(e, "envstr", "FOO"); !ok || v != "x" {
		t.Fatalf("session env FOO = %q, %v", v, ok)
	}
}

func TestCreateSessionSuppressHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var s SessionInfo
	e.ok("create_session", swObj{"session_name": "quiet", "suppress_persistent_history": true,
		"environment": map[string]string{"HISTCONTROL": "ignoredups", "KEEP": "1"}}, &s)
	want := map[string]string{"HISTFILE": "", "fish_history": "", "fish_private_mode": "1", "HISTCONTROL": "ignoredups:ignorespace", "KEEP": "1"}
	for k, w := range want {
		if v, ok := swShowEnv(e, "quiet", k); !ok || v != w {
			t.Errorf("session env %s = %q (set %v), want %q", k, v, ok, w)
		}
	}
	// Later windows inherit it from the session environment.
	e.tmux.MustRun("new-window", "-d", "-t", "quiet:", "-n", "later")
	pid := e.tmux.MustRun("display-message", "-p", "-t", "quiet:later", "#{pane_pid}")
	pe := swProcEnv(t, pid)
	if pe["fish_private_mode"] != "1" || pe["HISTFILE"] != "" {
		t.Errorf("later window env: fish_private_mode=%q HISTFILE=%q", pe["fish_private_mode"], pe["HISTFILE"])
	}

	// Without suppression nothing is added.
	e.ok("create_session", swObj{"session_name": "loud"}, nil)
	if _, ok := swShowEnv(e, "loud", "fish_private_mode"); ok {
		t.Error("fish_private_mode set without suppress_persistent_history")
	}
}

func TestCreateSessionStartDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	tmp := t.TempDir()
	for _, tc := range []struct{ name, dir, want string }{
		{"abs", tmp, tmp},
		{"tilde", "~", home},
		{"relative", ".", wd},
		{"relative-sub", "testdata", filepath.Join(wd, "testdata")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !filepath.IsAbs(tc.dir) {
				skipOverSSH(t, "a remote start_directory must be absolute")
			}
			var s SessionInfo
			e.ok("create_session", swObj{"session_name": "dir-" + tc.name, "start_directory": tc.dir}, &s)
			if got := swPaneCwd(t, e, *s.ActivePaneID); swRealDir(t, got) != swRealDir(t, tc.want) {
				t.Fatalf("cwd %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCreateSessionErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name     string
		args     swObj
		want     []string
		not      string
		wantType string
	}{
		{"duplicate", swObj{"session_name": "main"}, []string{"already exists", "main"}, "", "TmuxSessionExists"},
		{"colon", swObj{"session_name": "a:b"}, []string{"cannot contain ':' or '.'", "a_b"}, "", "BadSessionName"},
		{"dot", swObj{"session_name": "v1.2"}, []string{"cannot contain"}, "", "BadSessionName"},
		{"control", swObj{"session_name": "a\tb"}, []string{"control characters"}, "", "ExpectedToolError"},
		{"dollar", swObj{"session_name": "a$b"}, []string{"must not contain '$'"}, "", "ExpectedToolError"},
		{"backslash", swObj{"session_name": `a\b`}, []string{"must not contain"}, "", "ExpectedToolError"},
		{"histfile conflict", swObj{"session_name": "h", "suppress_persistent_history": true, "environment": map[string]string{"HISTFILE": "/tmp/secret-hist"}},
			[]string{"HISTFILE", "suppress_persistent_history"}, "secret-hist", "ExpectedToolError"},
		{"fish conflict", swObj{"session_name": "h", "suppress_persistent_history": true, "environment": `{"fish_private_mode":"0"}`},
			[]string{"fish_private_mode"}, "", "ExpectedToolError"},
		{"bad env json", swObj{"session_name": "h", "environment": "not json TOPSECRET"}, []string{"JSON object"}, "TOPSECRET", "JSONDecodeError"},
		{"bad env key", swObj{"session_name": "h", "environment": map[string]string{"A=B": "v"}}, []string{"environment keys"}, "", "ExpectedToolError"},
		{"missing dir", swObj{"session_name": "h", "start_directory": "/nonexistent/dir"}, []string{"not an existing directory"}, "", "ExpectedToolError"},
		{"zero width", swObj{"session_name": "h", "x": 0}, []string{"x must be"}, "", "ExpectedToolError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, meta := e.fail("create_session", tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if tc.not != "" && strings.Contains(msg, tc.not) {
				t.Errorf("error %q echoes %q", msg, tc.not)
			}
			if meta["error_type"] != tc.wantType || meta["expected"] != true {
				t.Errorf("meta %v, want type %s", meta, tc.wantType)
			}
		})
	}
	// Nothing was created by any failing call (tmux would have made "a_b").
	if n := swSessionCount(e); n != 1 {
		t.Fatalf("%d sessions after failing calls: %s", n, e.tmux.MustRun("list-sessions"))
	}
}

func TestCreateSessionStartsServer(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, tmuxtest.NewWith(t))
	var s SessionInfo
	e.ok("create_session", swObj{"session_name": "first"}, &s)
	if *s.SessionName != "first" || s.ActivePaneID == nil {
		t.Fatalf("%+v", s)
	}
	e.tmux.MustRun("has-session", "-t", "=first")
}

func TestRenameSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "zeta")
	zid := e.tmux.MustRun("display-message", "-p", "-t", "=zeta:", "#{session_id}")

	var s SessionInfo
	e.ok("rename_session", swObj{"session_name": "zeta", "new_name": "-omega"}, &s)
	if s.SessionID != zid || *s.SessionName != "-omega" || s.ActivePaneID == nil || *s.WindowCount != 1 {
		t.Fatalf("by name: %+v", s)
	}
	e.ok("rename_session", swObj{"session_id": zid, "session_name": "main", "new_name": "p#{pane_id}"}, &s)
	if s.SessionID != zid || *s.SessionName != "p#{pane_id}" {
		t.Fatalf("by id (wins over name), format text literal: %+v", s)
	}
	e.ok("rename_session", swObj{"session_name": "p#{pane_id}", "new_name": "psi"}, &s)
	if s.SessionID != zid || *s.SessionName != "psi" {
		t.Fatalf("by a name with '#': %+v", s)
	}
	// No target: the first session tmux lists ("main" sorts before "psi").
	e.ok("rename_session", swObj{"new_name": "alpha"}, &s)
	if *s.SessionName != "alpha" || s.SessionID == zid {
		t.Fatalf("fallback: %+v", s)
	}

	for _, tc := range []struct {
		name string
		args swObj
		want string
		typ  string
	}{
		{"colon", swObj{"session_name": "alpha", "new_name": "x:y"}, "cannot contain", "BadSessionName"},
		{"dot", swObj{"session_name": "alpha", "new_name": "x.y"}, "cannot contain", "BadSessionName"},
		{"dollar", swObj{"session_name": "alpha", "new_name": "$1"}, "must not contain", "ExpectedToolError"},
		{"empty", swObj{"session_name": "alpha", "new_name": ""}, "must not be empty", "BadSessionName"},
		{"duplicate", swObj{"session_name": "alpha", "new_name": "psi"}, "already exists", "TmuxSessionExists"},
		{"unknown name", swObj{"session_name": "nope", "new_name": "q"}, "Session not found: nope", "TmuxObjectDoesNotExist"},
		{"unknown id", swObj{"session_id": "$99", "new_name": "q"}, "Session not found: $99", "TmuxObjectDoesNotExist"},
		{"bad id", swObj{"session_id": "99", "new_name": "q"}, "malformed", "TmuxObjectDoesNotExist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, meta := e.fail("rename_session", tc.args)
			if !strings.Contains(msg, tc.want) || meta["error_type"] != tc.typ {
				t.Fatalf("%q %v", msg, meta)
			}
		})
	}
	if got := e.tmux.MustRun("list-sessions", "-F", "#{session_name}"); got != "alpha\npsi" {
		t.Fatalf("sessions after failures: %q", got)
	}

	dead := newEnvOn(t, tmuxtest.NewWith(t))
	if msg, meta := dead.fail("rename_session", swObj{"new_name": "x"}); meta["error_type"] != "TmuxServerNotRunning" {
		t.Fatalf("dead server: %q %v", msg, meta)
	}
}

func TestKillSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "victim")
	e.tmux.MustRun("new-session", "-d", "-s", "other")
	oid := e.tmux.MustRun("display-message", "-p", "-t", "=other:", "#{session_id}")

	var out string
	e.ok("kill_session", swObj{"session_name": "victim"}, &out)
	if out != "Session killed: victim" {
		t.Fatalf("%q", out)
	}
	e.ok("kill_session", swObj{"session_id": oid}, &out)
	if out != "Session killed: other" {
		t.Fatalf("%q", out)
	}
	if got := e.tmux.MustRun("list-sessions", "-F", "#{session_name}"); got != "main" {
		t.Fatalf("left: %q", got)
	}
	for _, tc := range []struct {
		name string
		args swObj
		want string
	}{
		{"no target", swObj{}, "needs session_name or session_id"},
		{"unknown name", swObj{"session_name": "gone"}, "Session not found: gone"},
		{"prefix is not a match", swObj{"session_name": "mai"}, "Session not found: mai"},
		{"unknown id", swObj{"session_id": "$42"}, "Session not found: $42"},
		{"bad id", swObj{"session_id": "@1"}, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg, _ := e.fail("kill_session", tc.args); !strings.Contains(msg, tc.want) {
				t.Fatalf("%q", msg)
			}
		})
	}
	e.tmux.MustRun("has-session", "-t", "=main")
}

// The guards: the caller's own session is refused whenever the caller may
// be on the target server; other sessions and other servers are allowed.
func TestKillSessionSelfProtection(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	elsewhere := filepath.Join(t.TempDir(), "other-socket")
	for _, tc := range []struct {
		name      string
		caller    func(same string) config.Caller
		killMain  bool // the session holding %0
		killOther bool
	}{
		{"same socket", func(same string) config.Caller { return config.Caller{SocketPath: same, PaneID: "%0"} }, false, true},
		{"same socket via symlink", func(same string) config.Caller { return config.Caller{SocketPath: swSymlinkTo(t, same), PaneID: "%0"} }, false, true},
		{"other socket", func(string) config.Caller { return config.Caller{SocketPath: elsewhere, PaneID: "%0"} }, true, true},
		{"TMUX_PANE only", func(string) config.Caller { return config.Caller{PaneID: "%0"} }, false, true},
		{"TMUX only, same socket", func(same string) config.Caller { return config.Caller{SocketPath: same} }, false, false},
		{"TMUX only, other socket", func(string) config.Caller { return config.Caller{SocketPath: elsewhere} }, true, true},
		{"not in tmux", func(string) config.Caller { return config.Caller{} }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := tmuxtest.NewWith(t, "main", "other")
			e := newEnvOn(t, ts, withCaller(tc.caller(ts.SocketPath())))
			for _, k := range []struct {
				session string
				allowed bool
			}{{"other", tc.killOther}, {"main", tc.killMain}} {
				res := e.call("kill_session", swObj{"session_name": k.session})
				_, err := ts.Run("has-session", "-t", "="+k.session)
				if k.allowed {
					if res.IsError || err == nil {
						t.Fatalf("kill %s should succeed: %s", k.session, text(res))
					}
					continue
				}
				if !res.IsError || err != nil || !strings.Contains(text(res), "Refusing to kill session") ||
					!strings.Contains(text(res), "Use a manual tmux command if intended.") {
					t.Fatalf("kill %s should be refused: %s", k.session, text(res))
				}
			}
		})
	}
}

func swSymlinkTo(t *testing.T, target string) string {
	t.Helper()
	l := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, l); err != nil {
		t.Fatal(err)
	}
	return l
}

func TestKillServer(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	elsewhere := filepath.Join(t.TempDir(), "other-socket")
	for _, tc := range []struct {
		name    string
		caller  func(ts *tmuxtest.Server) config.Caller
		allowed bool
	}{
		{"same socket", func(ts *tmuxtest.Server) config.Caller {
			return config.Caller{SocketPath: ts.SocketPath(), PaneID: "%0"}
		}, false},
		{"TMUX only, same socket", func(ts *tmuxtest.Server) config.Caller { return config.Caller{SocketPath: ts.SocketPath()} }, false},
		{"same basename elsewhere", func(ts *tmuxtest.Server) config.Caller {
			return config.Caller{SocketPath: filepath.Join(t.TempDir(), ts.Socket.Name), PaneID: "%5"}
		}, false},
		{"TMUX_PANE only", func(*tmuxtest.Server) config.Caller { return config.Caller{PaneID: "%0"} }, false},
		{"other socket", func(*tmuxtest.Server) config.Caller { return config.Caller{SocketPath: elsewhere, PaneID: "%0"} }, true},
		{"not in tmux", func(*tmuxtest.Server) config.Caller { return config.Caller{} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := tmuxtest.New(t)
			e := newEnvOn(t, ts, withCaller(tc.caller(ts)))
			res := e.call("kill_server", swObj{})
			if tc.allowed {
				if res.IsError || text(res) != "Server killed successfully" {
					t.Fatalf("kill_server: %s", text(res))
				}
				// The server exits right after answering; wait until its socket refuses.
				tmuxtest.WaitFor(t, 5*time.Second, func() bool {
					_, err := ts.Run("has-session")
					return err != nil && (strings.Contains(err.Error(), "no server running") || strings.Contains(err.Error(), "error connecting"))
				})
				// And a second kill reports the dead server.
				if msg, meta := e.fail("kill_server", swObj{}); meta["error_type"] != "TmuxServerNotRunning" {
					t.Fatalf("second kill: %q %v", msg, meta)
				}
				return
			}
			_, aliveErr := ts.Run("has-session", "-t", "=main")
			if !res.IsError || !strings.Contains(text(res), "Refusing to kill the tmux server") || !strings.Contains(text(res), "Use a manual tmux command if intended.") {
				t.Fatalf("kill_server should be refused: %s", text(res))
			}
			if aliveErr != nil {
				t.Fatalf("server died despite the refusal: %v", aliveErr)
			}
		})
	}
}
