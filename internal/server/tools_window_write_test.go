package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// windows lists a session's windows as "index:id:name:active" rows.
func swWindows(e *env, session string) string {
	return e.tmux.MustRun("list-windows", "-t", "="+session+":", "-F", "#{window_index}:#{window_id}:#{window_name}:#{window_active}")
}

func swNewWindow(e *env, target, name string) string {
	return e.tmux.MustRun("new-window", "-d", "-P", "-F", "#{window_id}", "-t", target, "-n", name)
}

func TestCreateWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("rename-window", "-t", "@0", "w0")
	e.tmux.MustRun("new-session", "-d", "-s", "zz")

	var w WindowInfo
	// No session: the first session ("main").
	e.ok("create_window", swObj{"window_name": "-logs;"}, &w)
	if *w.SessionName != "main" || *w.WindowName != "-logs;" || *w.WindowIndex != "1" || *w.WindowActive != "0" ||
		*w.PaneCount != 1 || !swPaneIDRe.MatchString(*w.ActivePaneID) || !strings.HasPrefix(w.WindowID, "@") {
		t.Fatalf("default: %+v", w)
	}
	if got := swWindows(e, "main"); got != "0:@0:w0:1\n1:"+w.WindowID+":-logs;:0" {
		t.Fatalf("windows: %q", got)
	}
	// attach makes it current.
	e.ok("create_window", swObj{"session_name": "main", "window_name": "att", "attach": true}, &w)
	if *w.WindowActive != "1" || *w.WindowIndex != "2" {
		t.Fatalf("attach: %+v", w)
	}
	// before / after the current window (now "att" at index 2).
	e.ok("create_window", swObj{"session_name": "main", "window_name": "bef", "direction": "before"}, &w)
	if *w.WindowIndex != "2" {
		t.Fatalf("before: %+v", w)
	}
	e.ok("create_window", swObj{"session_name": "main", "window_name": "aft", "direction": "after"}, &w)
	if *w.WindowIndex != "4" {
		t.Fatalf("after: %+v\n%s", w, swWindows(e, "main"))
	}
	names := e.tmux.MustRun("list-windows", "-t", "=main:", "-F", "#{window_name}")
	if names != "w0\n-logs;\nbef\natt\naft" {
		t.Fatalf("order: %q", names)
	}
	// By id, which wins over the name.
	zid := e.tmux.MustRun("display-message", "-p", "-t", "=zz:", "#{session_id}")
	e.ok("create_window", swObj{"session_id": zid, "session_name": "main"}, &w)
	if *w.SessionName != "zz" || *w.SessionID != zid {
		t.Fatalf("by id: %+v", w)
	}
}

func TestCreateWindowEnvironment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var w WindowInfo
	e.ok("create_window", swObj{"environment": map[string]string{"FOO": "bar"}, "suppress_persistent_history": true}, &w)
	pid := e.tmux.MustRun("display-message", "-p", "-t", *w.ActivePaneID, "#{pane_pid}")
	pe := swProcEnv(t, pid)
	for k, v := range map[string]string{"FOO": "bar", "HISTFILE": "", "fish_history": "", "fish_private_mode": "1", "HISTCONTROL": "ignorespace"} {
		if got, ok := pe[k]; !ok || got != v {
			t.Errorf("process env %s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	// Per process only: the session environment is untouched.
	for _, k := range []string{"FOO", "fish_private_mode"} {
		if _, ok := swShowEnv(e, "main", k); ok {
			t.Errorf("%s leaked into the session environment", k)
		}
	}
	msg, meta := e.fail("create_window", swObj{"window_name": "nope", "suppress_persistent_history": true, "environment": map[string]string{"fish_history": "/secret/path"}})
	if !strings.Contains(msg, "fish_history") || strings.Contains(msg, "secret") || meta["expected"] != true {
		t.Fatalf("conflict: %q %v", msg, meta)
	}
	if strings.Contains(swWindows(e, "main"), "nope") {
		t.Fatal("a window was created despite the conflict")
	}
}

func TestCreateWindowStartDirectory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	tmp := t.TempDir()
	for _, tc := range []struct{ dir, want string }{{tmp, tmp}, {"~", home}, {".", wd}, {"testdata/..", wd}} {
		t.Run(tc.dir, func(t *testing.T) {
			if !filepath.IsAbs(tc.dir) {
				skipOverSSH(t, "a remote start_directory must be absolute")
			}
			var w WindowInfo
			e.ok("create_window", swObj{"start_directory": tc.dir}, &w)
			if got := swPaneCwd(t, e, *w.ActivePaneID); swRealDir(t, got) != swRealDir(t, tc.want) {
				t.Fatalf("cwd %q, want %q", got, tc.want)
			}
		})
	}
	f := filepath.Join(tmp, "file")
	_ = os.WriteFile(f, nil, 0o600)
	for _, d := range []string{"/nonexistent/x", f, "no-such-relative-dir"} {
		want := "not an existing directory"
		if sshMode() && !filepath.IsAbs(d) {
			want = "must be absolute" // the host's path, never resolved here
		}
		if msg, meta := e.fail("create_window", swObj{"start_directory": d}); !strings.Contains(msg, want) || meta["expected"] != true {
			t.Fatalf("%s: %q", d, msg)
		}
	}
}

func TestCreateWindowErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		args swObj
		want string
	}{
		{"unknown session", swObj{"session_name": "nope"}, "Session not found: nope"},
		{"unknown session id", swObj{"session_id": "$77"}, "Session not found: $77"},
		{"bad direction", swObj{"direction": "left"}, "direction"},
		{"bad env", swObj{"environment": "[1,2]"}, "JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg, _ := e.fail("create_window", tc.args); !strings.Contains(msg, tc.want) {
				t.Fatalf("%q", msg)
			}
		})
	}
	dead := newEnvOn(t, tmuxtest.NewWith(t))
	if msg, meta := dead.fail("create_window", swObj{}); meta["error_type"] != "TmuxServerNotRunning" {
		t.Fatalf("dead: %q %v", msg, meta)
	}
}

func TestRenameWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w1 := swNewWindow(e, "=main:", "one")
	e.tmux.MustRun("new-session", "-d", "-s", "other")
	pwned := filepath.Join(t.TempDir(), "pwned")

	var w WindowInfo
	for _, tc := range []struct {
		name   string
		args   swObj
		wantID string
	}{
		{"by id", swObj{"window_id": w1, "new_name": "-dash;"}, w1},
		{"by index", swObj{"session_name": "main", "window_index": "1", "new_name": "idx"}, w1},
		{"index in first session", swObj{"window_index": "0", "new_name": "first0"}, "@0"},
		{"session only: first window", swObj{"session_name": "main", "new_name": "sessfirst"}, "@0"},
		{"nothing: first window of first session", swObj{"new_name": "nothing"}, "@0"},
		{"quotes and format text stay literal", swObj{"window_id": w1, "new_name": `a "b" 'c' #{pane_id} ##{x} #(touch ` + pwned + `)`}, w1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.ok("rename_window", tc.args, &w)
			if w.WindowID != tc.wantID || *w.WindowName != tc.args["new_name"] {
				t.Fatalf("%+v", w)
			}
			if got := e.tmux.MustRun("display-message", "-p", "-t", tc.wantID, "#{window_name}"); got != tc.args["new_name"] {
				t.Fatalf("tmux has %q", got)
			}
		})
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a window name ran a shell command through tmux's #() format")
	}
	// The current window is not the fallback: select @1 and rename without a window.
	e.tmux.MustRun("select-window", "-t", w1)
	e.ok("rename_window", swObj{"session_name": "main", "new_name": "still0"}, &w)
	if w.WindowID != "@0" {
		t.Fatalf("fallback followed the current window: %+v", w)
	}

	for _, tc := range []struct {
		name string
		args swObj
		want string
	}{
		{"unknown id", swObj{"window_id": "@99", "new_name": "x"}, "Window not found: @99"},
		{"bad id", swObj{"window_id": "%1", "new_name": "x"}, "malformed"},
		{"unknown index", swObj{"session_name": "main", "window_index": "9", "new_name": "x"}, "Window not found: index 9 in session main"},
		{"bad index", swObj{"session_name": "main", "window_index": "1x", "new_name": "x"}, "window_index"},
		{"unknown session", swObj{"session_name": "nope", "window_index": "0", "new_name": "x"}, "Session not found: nope"},
		{"missing new_name", swObj{"window_id": w1}, "new_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg, _ := e.fail("rename_window", tc.args); !strings.Contains(msg, tc.want) {
				t.Fatalf("%q", msg)
			}
		})
	}
}

func TestSelectWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w1 := swNewWindow(e, "=main:", "one")
	w2 := swNewWindow(e, "=main:", "two")
	e.tmux.MustRun("new-session", "-d", "-s", "solo")

	var w WindowInfo
	steps := []struct {
		args   swObj
		wantID string
	}{
		{swObj{"window_id": w2}, w2},
		{swObj{"session_name": "main", "window_index": "1"}, w1},
		{swObj{"direction": "last"}, w2}, // first session is main
		{swObj{"session_name": "main", "direction": "next"}, "@0"},
		{swObj{"session_name": "main", "direction": "previous"}, w2},
		{swObj{"session_name": "main", "direction": "previous"}, w1},
		{swObj{"window_index": "0"}, "@0"},
	}
	for i, s := range steps {
		e.ok("select_window", s.args, &w)
		cur := e.tmux.MustRun("display-message", "-p", "-t", "=main:", "#{window_id}")
		if w.WindowID != s.wantID || *w.WindowActive != "1" || cur != s.wantID {
			t.Fatalf("step %d %v: got %s active=%s, tmux current %s, want %s", i, s.args, w.WindowID, *w.WindowActive, cur, s.wantID)
		}
	}
	for _, tc := range []struct {
		name string
		args swObj
		want string
	}{
		{"nothing", swObj{}, "needs window_id, window_index or direction"},
		{"last with one window", swObj{"session_name": "solo", "direction": "last"}, "no last window"},
		{"unknown id", swObj{"window_id": "@50"}, "Window not found: @50"},
		{"unknown session", swObj{"session_name": "nope", "direction": "next"}, "Session not found: nope"},
		{"bad direction", swObj{"direction": "up"}, "direction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg, _ := e.fail("select_window", tc.args); !strings.Contains(msg, tc.want) {
				t.Fatalf("%q", msg)
			}
		})
	}
}

func TestSelectLayout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("split-window", "-d", "-t", "@0", "-h")
	e.tmux.MustRun("split-window", "-d", "-t", "@0", "-v")
	var w WindowInfo
	e.ok("select_layout", swObj{"window_id": "@0", "layout": "even-vertical"}, &w)
	vertical := *w.WindowLayout
	if *w.PaneCount != 3 || e.tmux.MustRun("display-message", "-p", "-t", "@0", "#{window_layout}") != vertical {
		t.Fatalf("%+v", w)
	}
	e.ok("select_layout", swObj{"session_name": "main", "layout": "tiled"}, &w)
	if *w.WindowLayout == vertical {
		t.Fatal("tiled layout equals even-vertical")
	}
	// A custom layout string (the one read back before) is accepted.
	e.ok("select_layout", swObj{"window_id": "@0", "layout": vertical}, &w)
	if *w.WindowLayout != vertical {
		t.Fatalf("custom layout: %s, want %s", *w.WindowLayout, vertical)
	}
	for _, tc := range []struct {
		args swObj
		want string
	}{
		{swObj{"window_id": "@0", "layout": "bogus"}, "invalid layout"},
		{swObj{"window_id": "@0", "layout": ""}, "invalid layout"},
		{swObj{"window_id": "@0", "layout": "even"}, "invalid layout"}, // tmux would take a prefix; we want the full name
		{swObj{"window_id": "@9", "layout": "tiled"}, "Window not found: @9"},
		{swObj{"window_id": "@0", "layout": "tiled", "session_name": "main"}, ""},
	} {
		if tc.want == "" {
			e.ok("select_layout", tc.args, nil)
			continue
		}
		if msg, _ := e.fail("select_layout", tc.args); !strings.Contains(msg, tc.want) {
			t.Fatalf("%v: %q", tc.args, msg)
		}
	}
	// Strings that crash the tmux 3.3a server (not starting with a hex digit,
	// or cells that do not add up) never reach it.
	body := "73x1,6708,69{72x95,37,93,1,77x78,1,1,2}"
	for _, l := range []string{"x", "-x", "-", " ", "g", "X", "-foo", "0000", layoutSum(body) + "," + body,
		layoutSum(body) + ",80x24,0,0{40x24,0,0,1,39x24,41,0,2}", "ffff,80x24,0,0,1"} {
		if msg, _ := e.fail("select_layout", swObj{"window_id": "@0", "layout": l}); !strings.Contains(msg, "invalid layout") {
			t.Fatalf("%q: %q", l, msg)
		}
	}
	e.tmux.MustRun("has-session", "-t", "=main")
}

func layoutSum(body string) string { return fmt.Sprintf("%04x", layoutChecksum(body)) }

func TestCheckLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body  string
		panes int // 0: refused
	}{
		{"80x24,0,0,1", 1},
		{"80x24,0,0", 1}, // a leaf without a pane id
		{"80x24,0,0{40x24,0,0,1,39x24,41,0,2}", 2},
		{"80x24,0,0{40x24,0,0,39x24,41,0}", 2},
		{"80x24,0,0[80x12,0,0,1,80x11,0,13{40x11,0,13,2,39x11,41,13,3}]", 3},
		{"80x24,0,0{40x24,0,0,1,40x24,41,0,2}", 0}, // too wide
		{"80x24,0,0{40x24,0,0,1,39x23,41,0,2}", 0}, // wrong height
		{"80x24,0,0{40x24,0,0,1,39x24,40,0,2}", 0}, // no border
		{"80x24,0,0{80x24,0,0,1}", 0},              // one child
		{"80x24,1,0,1", 0},                         // root offset
		{"0x24,0,0,1", 0},                          // empty
		{"10001x24,0,0,1", 0},                      // too large
		{"80x24,0,0,1,", 0},                        // trailing junk
		{"80x24,0,0{40x24,0,0,1,39x24,41,0,2", 0},  // unclosed
		{"80x24,0,0{40x24,0,0,1,39x24,41,0,2]", 0}, // mismatched
		{"80x24,0,0,1x", 0},
	} {
		n, err := checkLayout(layoutSum(tc.body) + "," + tc.body)
		if (err == nil) != (tc.panes > 0) || n != tc.panes {
			t.Errorf("%s: %d panes, err %v; want %d", tc.body, n, err, tc.panes)
		}
	}
	if _, err := checkLayout("0000,80x24,0,0,1"); err == nil {
		t.Error("bad checksum accepted")
	}
	for _, b := range []string{"tiled", "even-horizontal", "main-vertical-mirrored"} {
		if n, err := checkLayout(b); err != nil || n != 0 {
			t.Errorf("%s refused", b)
		}
	}
}

func TestResizeWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var w WindowInfo
	e.ok("resize_window", swObj{"window_id": "@0", "width": 50, "height": 10}, &w)
	if *w.WindowWidth != "50" || *w.WindowHeight != "10" {
		t.Fatalf("%+v", w)
	}
	e.ok("resize_window", swObj{"session_name": "main", "width": 60}, &w)
	if *w.WindowWidth != "60" || *w.WindowHeight != "10" {
		t.Fatalf("width only: %+v", w)
	}
	if got := e.tmux.MustRun("display-message", "-p", "-t", "@0", "#{window_width}x#{window_height}"); got != "60x10" {
		t.Fatalf("tmux: %s", got)
	}
	for _, tc := range []struct {
		args swObj
		want string
	}{
		{swObj{"window_id": "@0"}, "needs height, width or both"},
		{swObj{"window_id": "@0", "width": 0}, "width must be"},
		{swObj{"window_id": "@0", "height": -3}, "height must be"},
		{swObj{"window_id": "@7", "width": 40}, "Window not found: @7"},
	} {
		if msg, _ := e.fail("resize_window", tc.args); !strings.Contains(msg, tc.want) {
			t.Fatalf("%v: %q", tc.args, msg)
		}
	}
}

func TestMoveWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w1 := swNewWindow(e, "=main:", "one")
	w2 := swNewWindow(e, "=main:", "two")
	e.tmux.MustRun("new-session", "-d", "-s", "dest")
	did := e.tmux.MustRun("display-message", "-p", "-t", "=dest:", "#{session_id}")

	var w WindowInfo
	// To another session by name, next free index.
	e.ok("move_window", swObj{"window_id": w1, "destination_session": "dest"}, &w)
	if w.WindowID != w1 || *w.SessionName != "dest" || *w.SessionID != did || *w.WindowIndex != "1" {
		t.Fatalf("to dest: %+v", w)
	}
	if !strings.Contains(swWindows(e, "dest"), "1:"+w1+":one") || strings.Contains(swWindows(e, "main"), w1) {
		t.Fatalf("windows after move: main %q dest %q", swWindows(e, "main"), swWindows(e, "dest"))
	}
	// By session id with an explicit index.
	e.ok("move_window", swObj{"window_id": w2, "destination_session": did, "destination_index": "7"}, &w)
	if *w.SessionID != did || *w.WindowIndex != "7" {
		t.Fatalf("to dest:7: %+v", w)
	}
	// Within its own session (no destination_session), found by index.
	e.ok("move_window", swObj{"session_name": "dest", "window_index": "7", "destination_index": "3"}, &w)
	if w.WindowID != w2 || *w.SessionName != "dest" || *w.WindowIndex != "3" {
		t.Fatalf("within dest: %+v", w)
	}
	// By id without a destination session: stays in dest, at the lowest free index.
	e.ok("move_window", swObj{"window_id": w2}, &w)
	if *w.SessionName != "dest" || *w.WindowIndex != "2" {
		t.Fatalf("own session next free: %+v\n%s", w, swWindows(e, "dest"))
	}

	for _, tc := range []struct {
		name string
		args swObj
		want string
	}{
		{"unknown destination", swObj{"window_id": w2, "destination_session": "nope"}, "Session not found: nope"},
		{"unknown destination id", swObj{"window_id": w2, "destination_session": "$40"}, "Session not found: $40"},
		{"index in use", swObj{"window_id": w2, "destination_session": "dest", "destination_index": "1"}, "index"},
		{"bad index", swObj{"window_id": w2, "destination_index": "x"}, "destination_index"},
		{"unknown window", swObj{"window_id": "@88", "destination_session": "dest"}, "Window not found: @88"},
		{"unknown window, own session", swObj{"window_id": "@88"}, "Window not found: @88"},
		{"unknown index", swObj{"session_name": "main", "window_index": "5"}, "Window not found: index 5 in session main"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg, _ := e.fail("move_window", tc.args); !strings.Contains(msg, tc.want) {
				t.Fatalf("%q", msg)
			}
		})
	}
}

func TestKillWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w1 := swNewWindow(e, "=main:", "one")
	var out string
	e.ok("kill_window", swObj{"window_id": w1}, &out)
	if out != "Window killed: "+w1 {
		t.Fatalf("%q", out)
	}
	if strings.Contains(swWindows(e, "main"), w1) {
		t.Fatal("window still there")
	}
	for _, tc := range []struct {
		args swObj
		want string
	}{
		{swObj{"window_id": w1}, "Window not found: " + w1},
		{swObj{"window_id": "1"}, "malformed"},
		{swObj{"session_name": "main"}, "window_id"},
		{swObj{}, "window_id"},
	} {
		if msg, _ := e.fail("kill_window", tc.args); !strings.Contains(msg, tc.want) {
			t.Fatalf("%v: %q", tc.args, msg)
		}
	}
}

func TestKillWindowSelfProtection(t *testing.T) {
	skipOverSSH(t, "the caller's pane is on this machine: a remote pane is never is_caller nor self-protected")
	t.Parallel()
	elsewhere := filepath.Join(t.TempDir(), "other-socket")
	for _, tc := range []struct {
		name       string
		caller     func(same string) config.Caller
		killOwn    bool // @0, holding %0
		killOthers bool
	}{
		{"same socket", func(same string) config.Caller { return config.Caller{SocketPath: same, PaneID: "%0"} }, false, true},
		{"other socket", func(string) config.Caller { return config.Caller{SocketPath: elsewhere, PaneID: "%0"} }, true, true},
		{"TMUX_PANE only", func(string) config.Caller { return config.Caller{PaneID: "%0"} }, false, true},
		{"TMUX only, same socket", func(same string) config.Caller { return config.Caller{SocketPath: same} }, false, false},
		{"TMUX only, other socket", func(string) config.Caller { return config.Caller{SocketPath: elsewhere} }, true, true},
		{"caller pane not on this server", func(same string) config.Caller { return config.Caller{SocketPath: same, PaneID: "%999"} }, true, true},
		{"not in tmux", func(string) config.Caller { return config.Caller{} }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := tmuxtest.New(t)
			e := newEnvOn(t, ts, withCaller(tc.caller(ts.SocketPath())))
			other := swNewWindow(e, "=main:", "other")
			// A second pane in the caller's window must not change the verdict.
			ts.MustRun("split-window", "-d", "-t", "@0")
			for _, k := range []struct {
				id      string
				allowed bool
			}{{other, tc.killOthers}, {"@0", tc.killOwn}} {
				res := e.call("kill_window", swObj{"window_id": k.id})
				_, err := ts.Run("list-panes", "-t", k.id)
				if k.allowed {
					if res.IsError || err == nil {
						t.Fatalf("kill %s should succeed: %s", k.id, text(res))
					}
					continue
				}
				if !res.IsError || err != nil || !strings.Contains(text(res), "Refusing to kill window "+k.id) ||
					!strings.Contains(text(res), "Use a manual tmux command if intended.") {
					t.Fatalf("kill %s should be refused: %s", k.id, text(res))
				}
			}
		})
	}
}

// TestSessionWindowRoundTrips pins how many tmux round trips each call
// costs: one wherever the target is explicit; the first-session fallback,
// move_window's lookup and the kill guards add one each.
func TestSessionWindowRoundTrips(t *testing.T) {
	t.Parallel()
	ts := tmuxtest.New(t)
	var n atomic.Int32
	r := ts.Runner()
	r.OnSpawn = func([]string) { n.Add(1) }
	cfg := config.Config{SocketName: ts.Socket.Name, TmuxBin: ts.Bin, Safety: config.Destructive, WaitMax: config.DefaultWaitMax,
		Caller: config.Caller{SocketPath: filepath.Join(t.TempDir(), "elsewhere"), PaneID: "%0"}}
	inTmux := newEnvWith(t, ts, cfg, r)
	cfg.Caller = config.Caller{}
	e := newEnvWith(t, ts, cfg, r)
	ts.MustRun("new-session", "-d", "-s", "b")
	w1 := ts.MustRun("new-window", "-d", "-P", "-F", "#{window_id}", "-t", "=main:")
	w2 := ts.MustRun("new-window", "-d", "-P", "-F", "#{window_id}", "-t", "=main:")
	w3 := ts.MustRun("new-window", "-d", "-P", "-F", "#{window_id}", "-t", "=main:")
	for _, tc := range []struct {
		e    *env
		tool string
		args swObj
		want int32
	}{
		{e, "create_session", swObj{"session_name": "c", "environment": map[string]string{"A": "1"}}, 1},
		{e, "create_window", swObj{"session_name": "main"}, 1},
		{e, "create_window", swObj{}, 2},
		{e, "rename_session", swObj{"session_name": "c", "new_name": "d"}, 1},
		{e, "rename_window", swObj{"window_id": w1, "new_name": "x"}, 1},
		{e, "rename_window", swObj{"session_name": "main", "window_index": "1", "new_name": "y"}, 1},
		{e, "rename_window", swObj{"new_name": "z"}, 2},
		{e, "select_window", swObj{"window_id": w1}, 1},
		{e, "select_window", swObj{"session_name": "main", "direction": "next"}, 1},
		{e, "select_layout", swObj{"window_id": w1, "layout": "tiled"}, 1},
		{e, "resize_window", swObj{"window_id": w1, "width": 40}, 1},
		{e, "move_window", swObj{"window_id": w1, "destination_session": "b"}, 1},
		{e, "move_window", swObj{"window_id": w1}, 2},
		{e, "kill_window", swObj{"window_id": w2}, 1},
		{inTmux, "kill_window", swObj{"window_id": w3}, 2},
		{e, "kill_session", swObj{"session_name": "d"}, 1},
		{inTmux, "kill_session", swObj{"session_name": "b"}, 2},
	} {
		n.Store(0)
		tc.e.ok(tc.tool, tc.args, nil)
		if got := n.Load(); got != tc.want {
			t.Errorf("%s %v: %d round trips, want %d", tc.tool, tc.args, got, tc.want)
		}
	}
}
