package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scopeBaseArgs are arguments that make each tool's call valid but for
// its target, so that what an attempt changes is the target alone. A tool
// missing here (one added later) is tried with {} plus the target: the
// test still enumerates it from the registry.
func scopeBaseArgs(buffer, ownPane, ownPane2, cast string) map[string]map[string]any {
	return map[string]map[string]any{
		"record_pane":                  {"output_path": cast, "overwrite": true},
		"call_readonly_tools_batch":    {"operations": []any{map[string]any{"tool": "list_sessions"}}},
		"call_mutating_tools_batch":    {"operations": []any{map[string]any{"tool": "list_sessions"}}},
		"call_destructive_tools_batch": {"operations": []any{map[string]any{"tool": "list_sessions"}}},
		"create_session":               {"session_name": "made-in-scope"},
		"delete_buffer":                {"buffer_name": "tmux_mcp_1_1_00000000_0000000000000000_x"},
		"display_message":              {"format_string": "#{pane_id} #{session_name}"},
		"find_pane_by_position":        {"corner": "top-left"},
		"load_buffer":                  {"content": "x"},
		"paste_buffer":                 {"buffer_name": buffer},
		"paste_text":                   {"text": "true"},
		"rename_session":               {"new_name": "renamed-by-escape"},
		"rename_window":                {"new_name": "renamed-by-escape"},
		"resize_pane":                  {"height": 5},
		"resize_window":                {"height": 10},
		"run_command":                  {"command": "true", "timeout": 5},
		"search_panes":                 {"pattern": scopeCanary},
		"select_layout":                {"layout": "tiled"},
		"select_pane":                  {"direction": "next"},
		"select_window":                {"direction": "next"},
		"send_and_wait":                {"keys": "true", "timeout": 2},
		"send_keys":                    {"keys": "true", "enter": false},
		"send_keys_batch":              {"operations": []any{map[string]any{"keys": "true", "enter": false}}},
		"set_environment":              {"name": "ESCAPED", "value": "1"},
		"set_option":                   {"option": "@escaped", "value": "1"},
		"set_pane_title":               {"title": "escaped"},
		"show_hook":                    {"hook_name": "pane-exited"},
		"show_option":                  {"option": "status"},
		"show_buffer":                  {"buffer_name": buffer},
		"signal_channel":               {"channel": "scope-escape"},
		"swap_pane":                    {"source_pane_id": ownPane, "target_pane_id": ownPane2},
		"wait_for_channel":             {"channel": "scope-escape-never", "timeout": 0.2},
		"wait_for_prompt":              {"timeout": 1},
		"wait_for_run":                 {"run_id": "nope"},
		"wait_for_text":                {"patterns": []any{"never-printed"}, "timeout": 0.3},
		"get_prompt":                   {"name": "diagnose_failing_pane", "arguments": map[string]any{"pane_id": ownPane}},
	}
}

// escapeTally counts one tool's attempts by how they ended.
type escapeTally struct {
	attempts, refused, asMissing, inside, leaks int
}

type escapeRun struct {
	t     *testing.T
	w     *scopeWorld
	tally map[string]*escapeTally
	fails int
}

func (r *escapeRun) row(tool string) *escapeTally {
	if r.tally[tool] == nil {
		r.tally[tool] = &escapeTally{}
	}
	return r.tally[tool]
}

// answer is a call's outcome as the caller reads it.
func answer(res *mcp.CallToolResult) string {
	return fmt.Sprintf("error=%v type=%v %s", res.IsError, res.Meta["error_type"], text(res))
}

// elapsed hides the timings an answer carries.
var elapsed = regexp.MustCompile(`"elapsed_seconds":[0-9.e-]+`)

// normal is an answer with the value the call named replaced by a marker,
// so that answers for two different values can be compared.
func normal(a, named string) string {
	a = elapsed.ReplaceAllString(a, `"elapsed_seconds":0`)
	if named == "" {
		return a
	}
	q, _ := json.Marshal(named)
	a = strings.ReplaceAll(a, string(q[1:len(q)-1]), "<X>")
	return strings.ReplaceAll(a, named, "<X>")
}

// call runs one attempt and checks that nothing outside leaks from it.
func (r *escapeRun) call(tool string, args map[string]any, named ...string) *mcp.CallToolResult {
	r.t.Helper()
	return r.callAs(tool, tool, args, named...)
}

func (r *escapeRun) callAs(label, tool string, args map[string]any, named ...string) *mcp.CallToolResult {
	r.t.Helper()
	tl := r.row(label)
	tl.attempts++
	res, err := r.w.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		r.t.Errorf("%s(%v): protocol error %v", tool, args, err)
		r.fails++
		return &mcp.CallToolResult{IsError: true}
	}
	raw, _ := json.Marshal(res)
	if tool == "list_prompts" || tool == "get_prompt" {
		// Fixed text, read from no tmux server ("e.g. %1"): only the
		// canary would be a leak.
		if !strings.Contains(string(raw), scopeCanary) {
			raw = nil
		}
	}
	if l := r.w.leaks(string(raw), named...); len(l) > 0 {
		tl.leaks++
		r.fails++
		r.t.Errorf("%s(%v) leaks %v: %s", tool, args, l, raw)
	}
	return res
}

// pair calls tool with key set to an outside value and to a missing one of
// the same kind, and requires the same answer (no oracle). A refusal for
// being out of scope counts as refused.
func (r *escapeRun) pair(tool string, base map[string]any, key, outside, missing string, set func(map[string]any, string)) {
	r.t.Helper()
	r.pairAs(tool, tool, base, key, outside, missing, set)
}

// pairAs is pair tallied under label.
func (r *escapeRun) pairAs(label, tool string, base map[string]any, key, outside, missing string, set func(map[string]any, string)) {
	r.t.Helper()
	if set == nil {
		set = func(m map[string]any, v string) { m[key] = v }
	}
	a := maps.Clone(base)
	if a == nil {
		a = map[string]any{}
	}
	set(a, outside)
	got := r.callAs(label, tool, a, outside)
	b := maps.Clone(base)
	if b == nil {
		b = map[string]any{}
	}
	set(b, missing)
	res, err := r.w.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: b})
	if err != nil {
		r.t.Fatalf("%s: %v", tool, err)
	}
	tl := r.row(label)
	switch {
	case got.IsError && got.Meta["error_type"] == "OutOfScope":
		tl.refused++
	case normal(answer(got), outside) == normal(answer(res), missing):
		tl.asMissing++
	default:
		r.fails++
		r.t.Errorf("%s %s=%s answers unlike a missing %s:\n outside: %s\n missing: %s", tool, key, outside, missing,
			normal(answer(got), outside), normal(answer(res), missing))
	}
}

// TestScopeEscape tries to reach the outside world through every
// registered tool, every argument that can name a target or a format,
// batches, resources, subscriptions, completions and id guessing: each
// attempt must be refused or answered exactly as for a missing object,
// no answer may carry an outside id, name or pane text, and the outside
// world must be untouched. It logs the table of attempts by result.
func TestScopeEscape(t *testing.T) {
	w := newScopeWorld(t, withConfig(func(c *configT) { c.PromptsAsTools = true }))
	e := w.env
	var work SessionInfo
	e.ok("create_session", map[string]any{"session_name": "work"}, &work)
	var split PaneInfo
	e.ok("split_window", map[string]any{"session_name": "work"}, &split)
	own := []string{*work.ActivePaneID, split.PaneID}
	// An outside window linked into the caller's session is outside: it
	// is also main's.
	e.tmux.MustRun("link-window", "-s", "=main:0", "-t", "=work:7")
	var buf struct {
		BufferName string `json:"buffer_name"`
	}
	e.ok("load_buffer", map[string]any{"content": "x"}, &buf)
	before := w.snapshot()
	r := &escapeRun{t: t, w: w, tally: map[string]*escapeTally{}}
	base := scopeBaseArgs(buf.BufferName, own[0], own[1], filepath.Join(t.TempDir(), "escape.cast"))

	kinds := map[string]struct {
		values  []string
		missing string
	}{
		"pane":    {w.outside.panes, "%9999"},
		"window":  {w.outside.windows, "@9999"},
		"session": {w.outside.sessions, "$9999"},
		"name":    {w.outside.names, "no-such-session"},
	}
	keyKind := map[string]string{"pane_id": "pane", "source_pane_id": "pane", "target_pane_id": "pane", "window_id": "window",
		"session_id": "session", "session_name": "name", "destination_session": "name"}
	for _, tool := range w.srv.All() {
		props, _ := tool.inSchema()["properties"].(map[string]any)
		b := base[tool.Name]
		if b == nil {
			b = map[string]any{}
		}
		named := false
		for key, kind := range keyKind {
			if _, ok := props[key]; !ok || tool.Name == "create_session" {
				continue
			}
			named = true
			k := kinds[kind]
			for _, v := range k.values {
				r.pair(tool.Name, b, key, v, k.missing, nil)
				if key == "destination_session" {
					sid := w.outside.sessions[0]
					r.pair(tool.Name, b, key, sid, "$9999", nil)
				}
			}
			if strings.HasPrefix(key, "session") || key == "window_id" {
				// Leading zeros: tmux reads $01 as $1.
				for _, v := range k.values {
					if v[0] == '$' || v[0] == '@' {
						r.pair(tool.Name, b, key, v[:1]+"0"+v[1:], v[:1]+"09999", nil)
					}
				}
			}
		}
		if _, ok := props["window_index"]; ok {
			// The outside window linked into the caller's session at 7.
			r.pair(tool.Name, b, "window_index", "7", "99", func(m map[string]any, x string) {
				m["session_name"], m["window_index"] = "work", x
			})
		}
		if rule := scopeRules[tool.Name]; rule.first && !rule.session {
			// "work" holds that window: a call naming only the session
			// would let tmux pick it.
			a := maps.Clone(b)
			a["session_name"] = "work"
			if res := r.call(tool.Name, a); res.Meta["error_type"] == "OutOfScope" {
				r.row(tool.Name).refused++
			} else {
				r.fails++
				t.Errorf("%s(%v) not refused: %s", tool.Name, a, text(res))
			}
		}
		if _, ok := props["pane_id"]; ok {
			for _, v := range w.outside.panes {
				r.pair(tool.Name, b, "pane_id", v[:1]+"00"+v[1:], "%009999", nil)
			}
		}
		if _, ok := props["target"]; ok {
			named = true
			for sc, kind := range map[string]string{"session": "name", "window": "window", "pane": "pane"} {
				for _, v := range kinds[kind].values {
					r.pair(tool.Name, b, "target", v, kinds[kind].missing, func(m map[string]any, x string) { m["target"], m["scope"] = x, sc })
				}
			}
			for _, extra := range []map[string]any{{"global_": true}, {"scope": "server"}} {
				a := maps.Clone(b)
				maps.Copy(a, extra)
				if res := r.call(tool.Name, a); res.Meta["error_type"] == "OutOfScope" {
					r.row(tool.Name).refused++
				} else {
					r.fails++
					t.Errorf("%s(%v) not refused: %s", tool.Name, a, text(res))
				}
			}
		}
		if tool.Name == "capture_since" {
			for _, p := range w.outside.panes {
				r.pair(tool.Name, b, "cursor", p, "%9999", func(m map[string]any, x string) {
					m["cursor"] = cursorPrefix + x + ":" + strings.Repeat("B", 22)
				})
			}
		}
		if tool.Name == "send_keys_batch" {
			for key, kind := range map[string]string{"pane_id": "pane", "window_id": "window", "session_id": "session", "session_name": "name"} {
				for _, v := range kinds[kind].values {
					r.pair(tool.Name, b, "operations", v, kinds[kind].missing, func(m map[string]any, x string) {
						m["operations"] = []any{map[string]any{"keys": "true", "enter": false, key: x}}
					})
				}
			}
		}
		if tool.Name == "display_message" {
			for _, f := range []string{"#{S:#{session_name} }", "#{W:#{window_id}}", "#{P:#{pane_id}}", "#{N/s:editor}", "#{N/w:@0}",
				"#{session_group_list}", "#{window_linked_sessions_list}", "#{server_sessions}", "#{client_session}", "#S",
				"#{?#{==:1,1},a,b}", "#{l:x}", "#{E:pane_title}", "#{@tmux-mcp-owner}", "#{editor}", "#{pid}", "#{=5:session_name}",
				"#{session_name", "#(echo hi)", "#[fg=red]x", "#{window_active_sessions_list}", "#{next_session_id}"} {
				a := maps.Clone(b)
				a["format_string"] = f
				var inFormat []string
				for _, o := range w.outside.all() {
					if containsWord(f, o) {
						inFormat = append(inFormat, o)
					}
				}
				if res := r.call(tool.Name, a, inFormat...); res.IsError && (res.Meta["error_type"] == "OutOfScope" || res.Meta["error_type"] == typeExpected) {
					r.row(tool.Name).refused++
				} else {
					r.fails++
					t.Errorf("display_message(%q) not refused: %s", f, text(res))
				}
			}
		}
		if _, ok := props["filters"]; ok {
			for _, n := range w.outside.names {
				res := r.call(tool.Name, map[string]any{"filters": map[string]any{"session_name": n}})
				if res.IsError || text(res) != "[]" {
					r.fails++
					t.Errorf("%s(filters session_name=%s) = %s, want []", tool.Name, n, text(res))
				} else {
					r.row(tool.Name).inside++
				}
			}
		}
		if !named {
			res := r.call(tool.Name, b)
			if res.Meta["error_type"] == "OutOfScope" {
				r.row(tool.Name).refused++
			} else {
				r.row(tool.Name).inside++
			}
		}
	}
	if res := r.call("search_panes", map[string]any{"pattern": scopeCanary}); res.IsError || strings.Contains(text(res), `"pane_id"`) {
		r.fails++
		t.Errorf("search_panes finds outside text: %s", text(res))
	} else {
		r.row("search_panes").inside++
	}

	// Batches: rows are confined as direct calls, and answer alike.
	for _, v := range w.outside.panes {
		ops := []any{
			map[string]any{"tool": "capture_pane", "arguments": map[string]any{"pane_id": v}},
			map[string]any{"tool": "send_keys", "arguments": map[string]any{"pane_id": v, "keys": "true"}},
			map[string]any{"tool": "kill_pane", "arguments": map[string]any{"pane_id": v}},
			map[string]any{"tool": "list_sessions", "arguments": map[string]any{}},
		}
		r.pair("call_destructive_tools_batch", map[string]any{"on_error": "continue"}, "operations", v, "%9999", func(m map[string]any, x string) {
			b, _ := json.Marshal(ops)
			var c []any
			_ = json.Unmarshal([]byte(strings.ReplaceAll(string(b), `"`+v+`"`, `"`+x+`"`)), &c)
			m["operations"] = c
		})
	}

	// Id guessing. What is inside now (the tools above made sessions
	// and panes) is answered, not guessed.
	inside := map[string]bool{}
	var wins []WindowInfo
	e.list("list_windows", map[string]any{}, &wins)
	for _, win := range wins {
		inside[win.WindowID], inside[str(win.SessionID)] = true, true
	}
	var ps []PaneInfo
	e.list("list_panes", map[string]any{}, &ps)
	for _, p := range ps {
		inside[p.PaneID] = true
	}
	guess := func(sigil byte, tools ...string) {
		for n := 0; n <= 200; n++ {
			id := fmt.Sprintf("%c%d", sigil, n)
			if inside[id] {
				r.row("inside ids skipped by guessing").inside++
				continue
			}
			for _, tool := range tools {
				key := map[byte]string{'%': "pane_id", '@': "window_id", '$': "session_id"}[sigil]
				b := maps.Clone(base[tool])
				if b == nil {
					b = map[string]any{}
				}
				r.pairAs(tool+" (id guessing)", tool, nil, key, id, string(sigil)+"9999", func(m map[string]any, x string) {
					maps.Copy(m, b)
					m[key] = x
				})
			}
		}
	}
	guess('%', "get_pane_info", "capture_pane", "send_keys", "kill_pane")
	guess('@', "get_window_info", "rename_window", "kill_window")
	guess('$', "get_session_info", "rename_session", "kill_session")

	// Resources, subscriptions and completions.
	readRes := func(uri string) string {
		res, err := e.cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "error: " + err.Error()
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	resTally := r.row("resources/read")
	for _, n := range w.outside.names {
		for _, suffix := range []string{"", "/windows", "/windows/0"} {
			resTally.attempts++
			got := readRes("tmux://sessions/" + url.PathEscape(n) + suffix)
			want := readRes("tmux://sessions/no-such-session" + suffix)
			if normal(got, n) != normal(want, "no-such-session") {
				r.fails++
				t.Errorf("resource of outside session %s%s: %s; a missing one: %s", n, suffix, got, want)
			} else {
				resTally.asMissing++
			}
		}
	}
	for _, p := range w.outside.panes {
		for _, suffix := range []string{"", "/content"} {
			resTally.attempts++
			got := readRes("tmux://panes/" + url.PathEscape(p) + suffix)
			want := readRes("tmux://panes/%259999" + suffix)
			if normal(got, p) != normal(want, "%9999") {
				r.fails++
				t.Errorf("resource of outside pane %s%s: %s; a missing one: %s", p, suffix, got, want)
			} else {
				resTally.asMissing++
			}
		}
	}
	resTally.attempts++
	if got := readRes("tmux://sessions"); len(w.leaks(got)) > 0 {
		r.fails++
		t.Errorf("tmux://sessions leaks %v", w.leaks(got))
	} else {
		resTally.inside++
	}
	listTally := r.row("resources/list")
	listTally.attempts++
	lr, err := e.cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lb, _ := json.Marshal(lr)
	if l := w.leaks(string(lb)); len(l) > 0 || !strings.Contains(string(lb), "work") {
		r.fails++
		t.Errorf("resources/list leaks %v (or lacks the caller's session): %s", l, lb)
	} else {
		listTally.inside++
	}
	// resources/subscribe answers with the handler's error on 2025-11-25;
	// 2026-07-28's subscriptions/listen does not report it to Subscribe.
	legacy := legacyClient(t, e)
	subTally := r.row("resources/subscribe")
	for _, p := range w.outside.panes {
		subTally.attempts++
		errOut := legacy.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "tmux://panes/" + url.PathEscape(p) + "/content"})
		errMissing := legacy.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "tmux://panes/%259999/content"})
		if errOut == nil || errMissing == nil || normal(errOut.Error(), p) != normal(errMissing.Error(), "%9999") {
			r.fails++
			t.Errorf("subscribe to outside pane %s: %v; a missing one: %v", p, errOut, errMissing)
		} else {
			subTally.asMissing++
		}
	}
	compTally := r.row("completion/complete")
	for _, c := range []struct{ arg, ctxSession string }{{"session_name", ""}, {"pane_id", ""}, {"window_index", ""}, {"window_index", "editor"}, {"window_index", "main"}} {
		compTally.attempts++
		params := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tmux://sessions/{session_name}/windows/{window_index}{?socket_name}"},
			Argument: mcp.CompleteParamsArgument{Name: c.arg, Value: ""}}
		if c.ctxSession != "" {
			params.Context = &mcp.CompleteContext{Arguments: map[string]string{"session_name": c.ctxSession}}
		}
		res, err := e.cs.Complete(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if l := w.leaks(string(b)); len(l) > 0 || c.ctxSession != "" && len(res.Completion.Values) > 0 {
			r.fails++
			t.Errorf("completion of %s (session %q) leaks: %s", c.arg, c.ctxSession, b)
		} else {
			compTally.inside++
		}
	}

	w.unchanged(before)
	var sessions []SessionInfo
	e.list("list_sessions", map[string]any{}, &sessions)
	if len(sessions) == 0 {
		t.Errorf("the caller's own sessions are gone")
	}
	r.report(t)
}

// legacyClient is an MCP client of e's server speaking 2025-11-25.
func legacyClient(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	return connectClient(t, e.srv.MCP(), "legacy", nil, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, nil)
}

// report logs the escape table (and writes it to $TMUX_MCP_SCOPE_TABLE
// when set, for the closing note).
func (r *escapeRun) report(t *testing.T) {
	names := make([]string, 0, len(r.tally))
	for n := range r.tally {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	total := escapeTally{}
	b.WriteString("| tool / path | attempts | refused (OutOfScope) | answered as a missing object | inside only / empty | leaks |\n|---|---|---|---|---|---|\n")
	for _, n := range names {
		x := r.tally[n]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d |\n", n, x.attempts, x.refused, x.asMissing, x.inside, x.leaks)
		total.attempts += x.attempts
		total.refused += x.refused
		total.asMissing += x.asMissing
		total.inside += x.inside
		total.leaks += x.leaks
	}
	fmt.Fprintf(&b, "| **total** | %d | %d | %d | %d | %d |\n", total.attempts, total.refused, total.asMissing, total.inside, total.leaks)
	fmt.Fprintf(&b, "\nfailures: %d (%s)\n", r.fails, time.Now().Format(time.DateOnly))
	t.Log("\n" + b.String())
	if p := os.Getenv("TMUX_MCP_SCOPE_TABLE"); p != "" {
		_ = os.WriteFile(p, []byte(b.String()), 0o644)
	}
}
