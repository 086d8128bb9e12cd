package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

func ids(e *env) (sid, wid, pid string) {
	f := strings.Fields(e.tmux.MustRun("display-message", "-p", "-t", "main:", "#{session_id} #{window_id} #{pane_id}"))
	return f[0], f[1], f[2]
}

func TestShowOption(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, wid, pid := ids(e)
	e.tmux.MustRun("set-option", "-t", "main", "status-left", tmux.EscapeArg("L;"))
	e.tmux.MustRun("set-option", "-w", "-t", wid, "mode-keys", "vi")
	e.tmux.MustRun("set-option", "-p", "-t", pid, "remain-on-exit", "on")
	e.tmux.MustRun("set-option", "-g", "@multi", tmux.EscapeArg("a;b\n#{x} \\;"))
	e.tmux.MustRun("set-option", "-s", "user-keys[0]", "x\ny")
	e.tmux.MustRun("set-option", "-s", "user-keys[3]", "z")

	cases := []struct {
		name string
		args map[string]any
		want any
	}{
		{"global", map[string]any{"option": "history-limit", "global_": true}, float64(2000)},
		{"inferred scope, inherited", map[string]any{"option": "history-limit"}, float64(2000)},
		{"session target", map[string]any{"option": "status-left", "scope": "session", "target": "main"}, "L;"},
		{"session global differs", map[string]any{"option": "status-left", "scope": "session", "global_": true}, "[#{session_name}] "},
		{"window target", map[string]any{"option": "mode-keys", "scope": "window", "target": wid}, "vi"},
		{"pane target", map[string]any{"option": "remain-on-exit", "scope": "pane", "target": pid}, true},
		{"server", map[string]any{"option": "escape-time", "scope": "server"}, float64(500)},
		{"user option exact", map[string]any{"option": "@multi", "global_": true}, "a;b\n#{x} \\;"},
		{"unset user option", map[string]any{"option": "@nope"}, nil},
		{"array element", map[string]any{"option": "command-alias[1]", "scope": "server"}, "splitp=split-window"},
		{"array with newline in an element", map[string]any{"option": "user-keys", "scope": "server"}, map[string]any{"0": "x\ny", "3": "z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out OptionResult
			e.ok("show_option", c.args, &out)
			if out.Option != c.args["option"] || !reflect.DeepEqual(out.Value, c.want) {
				t.Errorf("got %#v, want value %#v", out, c.want)
			}
		})
	}

	t.Run("command-alias exploded", func(t *testing.T) {
		var out OptionResult
		e.ok("show_option", map[string]any{"option": "command-alias", "scope": "server"}, &out)
		m, ok := out.Value.(map[string]any)
		if !ok || len(m) < 6 || m["split-pane"] != "split-window" || m["server-info"] != "show-messages -JT" {
			t.Errorf("command-alias = %#v", out.Value)
		}
	})

	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown option", map[string]any{"option": "no-such-option"}, `unknown tmux option "no-such-option"`},
		{"target without scope", map[string]any{"option": "mouse", "target": "main"}, "scope is required"},
		{"server with target", map[string]any{"option": "mouse", "scope": "server", "target": "x"}, "takes no target"},
		{"bad window id", map[string]any{"option": "mode-keys", "scope": "window", "target": "main"}, "window id must look like @"},
		{"bad pane id", map[string]any{"option": "remain-on-exit", "scope": "pane", "target": "@1"}, "pane id must look like %"},
		{"unknown session", map[string]any{"option": "status", "scope": "session", "target": "nosuch"}, "Session not found"},
		{"unknown window", map[string]any{"option": "mode-keys", "scope": "window", "target": "@999"}, "Window not found"},
		{"unknown pane", map[string]any{"option": "remain-on-exit", "scope": "pane", "target": "%999"}, "Pane not found"},
		{"empty option", map[string]any{"option": ""}, "must not be empty"},
		{"bad scope", map[string]any{"option": "mouse", "scope": "global"}, "validation error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, _ := e.fail("show_option", c.args)
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not contain %q", msg, c.want)
			}
		})
	}
}

func TestSetOption(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, wid, pid := ids(e)
	cases := []struct {
		name  string
		args  map[string]any
		check []string // tmux command whose output must equal the value
	}{
		{"global", map[string]any{"option": "history-limit", "value": "5000", "global_": true}, []string{"show-options", "-gv", "history-limit"}},
		{"session", map[string]any{"option": "status-right", "value": "x;", "scope": "session", "target": "main"}, []string{"show-options", "-v", "-t", "main", "status-right"}},
		{"window", map[string]any{"option": "mode-keys", "value": "vi", "scope": "window", "target": wid}, []string{"show-options", "-wv", "-t", wid, "mode-keys"}},
		{"pane", map[string]any{"option": "remain-on-exit", "value": "on", "scope": "pane", "target": pid}, []string{"show-options", "-pv", "-t", pid, "remain-on-exit"}},
		{"server", map[string]any{"option": "escape-time", "value": "10", "scope": "server"}, []string{"show-options", "-sv", "escape-time"}},
		{"user option, hostile value", map[string]any{"option": "@v", "value": "-a \"b\" #{c} \\;", "global_": true}, []string{"show-options", "-gv", "@v"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out OptionSetResult
			e.ok("set_option", c.args, &out)
			value := c.args["value"].(string)
			if out.Status != "set" || out.Option != c.args["option"] || out.Value != value {
				t.Errorf("result %#v (echoes the value, as the reference does)", out)
			}
			if got := e.tmux.MustRun(c.check...); got != value {
				t.Errorf("tmux has %q, want %q", got, value)
			}
		})
	}
	t.Run("rejected value is not echoed", func(t *testing.T) {
		msg, _ := e.fail("set_option", map[string]any{"option": "history-limit", "value": "SECRETabc", "global_": true})
		if strings.Contains(msg, "SECRET") || !strings.Contains(msg, "<value>") {
			t.Errorf("error %q", msg)
		}
	})
	t.Run("unknown option", func(t *testing.T) {
		msg, _ := e.fail("set_option", map[string]any{"option": "nosuch", "value": "SECRET"})
		if strings.Contains(msg, "SECRET") || !strings.Contains(msg, "unknown tmux option") {
			t.Errorf("error %q", msg)
		}
	})
	t.Run("unknown pane", func(t *testing.T) {
		msg, meta := e.fail("set_option", map[string]any{"option": "remain-on-exit", "value": "on", "scope": "pane", "target": "%999"})
		if !strings.Contains(msg, "Pane not found") || meta["error_type"] != "PaneNotFound" {
			t.Errorf("error %q %v", msg, meta)
		}
	})
}

func TestEnvironment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sid, _, _ := ids(e)
	hostile := "x\nOTHER=1\"; export Y;\n$HOME `id` \\ \"q\" ;"
	e.tmux.MustRun("set-environment", "-g", "-r", "GONE")

	var set EnvironmentSetResult
	e.ok("set_environment", map[string]any{"name": "HOSTILE", "value": hostile}, &set)
	if set.Name != "HOSTILE" || set.Status != "set" || set.Value != hostile {
		t.Errorf("set result %#v", set)
	}
	e.ok("set_environment", map[string]any{"name": "SESS", "value": "by-name", "session_name": "main"}, nil)
	e.ok("set_environment", map[string]any{"name": "SID", "value": "by-id;", "session_id": sid}, nil)

	var global EnvironmentResult
	e.ok("show_environment", map[string]any{}, &global)
	if global.Variables["HOSTILE"] != hostile || global.Variables["-GONE"] != true {
		t.Errorf("HOSTILE=%q -GONE=%v", global.Variables["HOSTILE"], global.Variables["-GONE"])
	}
	if _, forged := global.Variables["OTHER"]; forged {
		t.Error("a value with a newline forged a variable")
	}
	if _, ok := global.Variables["SESS"]; ok {
		t.Error("session variable listed in the global environment")
	}
	for _, args := range []map[string]any{{"session_name": "main"}, {"session_id": sid}} {
		var sess EnvironmentResult
		e.ok("show_environment", args, &sess)
		if sess.Variables["SESS"] != "by-name" || sess.Variables["SID"] != "by-id;" {
			t.Errorf("%v: %v", args, sess.Variables)
		}
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"show_environment", map[string]any{"session_name": "nosuch"}, "Session not found"},
		{"show_environment", map[string]any{"session_id": "main"}, "session id must look like $"},
		{"set_environment", map[string]any{"name": "A=B", "value": "SECRET"}, "without '='"},
		{"set_environment", map[string]any{"name": "", "value": "SECRET"}, "non-empty"},
		{"set_environment", map[string]any{"name": "X", "value": "SECRET", "session_name": "nosuch"}, "Session not found"},
	} {
		msg, _ := e.fail(c.tool, c.args)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "SECRET") {
			t.Errorf("%s(%v): %q, want %q", c.tool, c.args, msg, c.want)
		}
	}
}

func TestHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, wid, pid := ids(e)
	e.tmux.MustRun("set-hook", "-g", "session-created", `display-message "hi;"`)
	e.tmux.MustRun("set-hook", "-ag", "session-created", "run-shell true")
	e.tmux.MustRun("set-hook", "-g", "pane-focus-in", "display-message x")
	e.tmux.MustRun("set-hook", "-t", "main", "session-renamed", "display-message s")
	e.tmux.MustRun("set-hook", "-w", "-t", wid, "window-resized", "display-message w")
	e.tmux.MustRun("set-hook", "-p", "-t", pid, "pane-exited", "display-message p")
	for i := 0; i < 12; i++ { // index 10 and 11 sort after 2
		e.tmux.MustRun("set-hook", "-ag", "client-attached", "display-message c")
	}

	entry := func(name string, idx int, cmd string) HookEntry {
		return HookEntry{HookName: name, Index: &idx, Command: cmd}
	}
	var server HookListResult
	e.ok("show_hooks", map[string]any{"scope": "server"}, &server)
	var names []string
	var attachedIdx []int
	for _, en := range server.Entries {
		names = append(names, en.HookName)
		if en.HookName == "client-attached" {
			attachedIdx = append(attachedIdx, *en.Index)
		}
	}
	wantNames := append(append([]string{}, strings.Split(strings.Repeat("client-attached,", 12), ",")[:12]...), "pane-focus-in", "session-created", "session-created")
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("server hooks %v, want %v", names, wantNames)
	}
	for i, n := range attachedIdx {
		if n != i {
			t.Errorf("client-attached indexes %v not in numeric order", attachedIdx)
			break
		}
	}
	last := server.Entries[len(server.Entries)-2:]
	if !reflect.DeepEqual(last, []HookEntry{entry("session-created", 0, `display-message "hi;"`), entry("session-created", 1, "run-shell true")}) {
		t.Errorf("session-created entries %+v", last)
	}

	for _, c := range []struct {
		name string
		tool string
		args map[string]any
		want []HookEntry
	}{
		{"session target", "show_hooks", map[string]any{"scope": "session", "target": "main"}, []HookEntry{entry("session-renamed", 0, "display-message s")}},
		{"window target", "show_hooks", map[string]any{"scope": "window", "target": wid}, []HookEntry{entry("window-resized", 0, "display-message w")}},
		{"pane target", "show_hooks", map[string]any{"scope": "pane", "target": pid}, []HookEntry{entry("pane-exited", 0, "display-message p")}},
		{"one hook, array", "show_hook", map[string]any{"hook_name": "session-created", "scope": "server"}, []HookEntry{entry("session-created", 0, `display-message "hi;"`), entry("session-created", 1, "run-shell true")}},
		{"one window-tree hook at server scope", "show_hook", map[string]any{"hook_name": "pane-focus-in", "scope": "server"}, []HookEntry{entry("pane-focus-in", 0, "display-message x")}},
		{"one hook, global", "show_hook", map[string]any{"hook_name": "pane-focus-in", "global_": true, "scope": "window"}, []HookEntry{entry("pane-focus-in", 0, "display-message x")}},
		{"one hook, pane", "show_hook", map[string]any{"hook_name": "pane-exited", "scope": "pane", "target": pid}, []HookEntry{entry("pane-exited", 0, "display-message p")}},
		{"unset hook", "show_hook", map[string]any{"hook_name": "session-closed", "global_": true}, []HookEntry{}},
		{"unset at target", "show_hook", map[string]any{"hook_name": "pane-exited", "scope": "window", "target": wid}, []HookEntry{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out HookListResult
			e.ok(c.tool, c.args, &out)
			if !reflect.DeepEqual(out.Entries, c.want) {
				t.Errorf("got %+v, want %+v", out.Entries, c.want)
			}
		})
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"show_hook", map[string]any{"hook_name": "no-such-hook", "global_": true}, `unknown tmux hook "no-such-hook"`},
		{"show_hook", map[string]any{"hook_name": ""}, "must not be empty"},
		{"show_hooks", map[string]any{"scope": "server", "target": "main"}, "takes no target"},
		{"show_hooks", map[string]any{"target": "main"}, "scope is required"},
		{"show_hooks", map[string]any{"scope": "window", "target": "@999"}, "Window not found"},
		{"show_hooks", map[string]any{"scope": "session", "target": "nosuch"}, "Session not found"},
	} {
		msg, _ := e.fail(c.tool, c.args)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s(%v): %q, want %q", c.tool, c.args, msg, c.want)
		}
	}
}

// TestOptionToolsDeadServer: every tool reports a missing server clearly.
func TestOptionToolsDeadServer(t *testing.T) {
	t.Parallel()
	e := newEnvOn(t, tmuxtest.NewWith(t))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"show_option", map[string]any{"option": "mouse", "global_": true}},
		{"set_option", map[string]any{"option": "mouse", "value": "on", "global_": true}},
		{"show_environment", map[string]any{}},
		{"set_environment", map[string]any{"name": "A", "value": "b"}},
		{"show_hooks", map[string]any{"scope": "server"}},
		{"show_hook", map[string]any{"hook_name": "pane-exited"}},
	} {
		_, meta := e.fail(c.tool, c.args)
		if meta["error_type"] != "TmuxServerNotRunning" {
			t.Errorf("%s: %v", c.tool, meta)
		}
	}
}

// An untargeted session-scope option goes to the first session, whatever
// session the engine's control client happens to be attached to.
func TestUntargetedScopeIsPinned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tmux.MustRun("new-session", "-d", "-s", "zeta")
	e.tmux.MustRun("new-session", "-d", "-s", "alpha")
	e.ok("get_pane_info", map[string]any{"pane_id": "%0"}, nil) // the engine attaches somewhere
	e.ok("set_option", map[string]any{"option": "@pin", "value": "yes", "scope": "session"}, nil)
	for sess, want := range map[string]string{"alpha": "yes", "main": "", "zeta": ""} {
		got, _ := e.tmux.Run("show-options", "-qv", "-t", sess, "@pin")
		if got != want {
			t.Errorf("session %s: @pin=%q, want %q", sess, got, want)
		}
	}
	var r OptionResult
	e.ok("show_option", map[string]any{"option": "@pin", "scope": "session"}, &r)
	if r.Value != "yes" {
		t.Errorf("show_option: %v", r.Value)
	}
}

// TestOptionTypedInBatch: a batch row carries the same typed value as the
// direct call (the reference's rows hold the tool's structured result).
func TestOptionTypedInBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out struct {
		Results []struct {
			StructuredContent struct {
				Value any `json:"value"`
			} `json:"structured_content"`
		} `json:"results"`
	}
	e.ok("call_readonly_tools_batch", map[string]any{"operations": []any{
		map[string]any{"tool": "show_option", "arguments": map[string]any{"option": "history-limit", "global_": true}},
		map[string]any{"tool": "show_option", "arguments": map[string]any{"option": "mouse", "global_": true}},
	}}, &out)
	if len(out.Results) != 2 || out.Results[0].StructuredContent.Value != float64(2000) || out.Results[1].StructuredContent.Value != false {
		t.Errorf("batch rows %+v", out)
	}
}
