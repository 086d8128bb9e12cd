package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// TestReference is the differential test of issue 10: the reference server
// (libtmux-mcp 0.1.0a20, Python) and ours each get an identical fresh tmux
// world, receive the same calls through the Go SDK client, and every
// difference between the normalised answers (refdiff_test.go lists the
// normalisations) is printed in a table. A difference that is not one of the
// documented ones (knownDifferences, mirrored in docs/tools.md "where we
// differ, and why") fails the test.
//
// It needs the reference, which CI cannot fetch: set TMUX_MCP_REFERENCE to
// its start script (see scripts/reference-diff.sh), plus REFSRC when that
// script needs it.
func TestReference(t *testing.T) {
	script := os.Getenv("TMUX_MCP_REFERENCE")
	if script == "" {
		t.Skip("TMUX_MCP_REFERENCE is not set: the reference server libtmux-mcp is not installed here (see scripts/reference-diff.sh)")
	}
	refW, ourW := newWorld(t, "ref"), newWorld(t, "ours")

	refCmd := exec.Command(script)
	refCmd.Env = append(refW.env(), "LIBTMUX_SOCKET="+worldSocket, "LIBTMUX_SAFETY=destructive")
	ourCmd := exec.Command(binary)
	ourCmd.Env = append(ourW.env(), "TMUX_MCP_SOCKET="+worldSocket, "TMUX_MCP_SAFETY=destructive")
	ref, refStart := timedConnect(t, refCmd)
	ours, ourStart := timedConnect(t, ourCmd)
	t.Logf("cold start (spawn to initialized): reference %v, ours %v", refStart.Round(time.Millisecond), ourStart.Round(time.Millisecond))

	checkKeys(t)
	d := &differential{t: t, used: map[int]bool{}, ref: side{cs: ref, w: refW, vars: map[string]string{}}, ours: side{cs: ours, w: ourW, vars: map[string]string{}}}
	d.ref.vars["tmpdir"], d.ours.vars["tmpdir"] = refW.dir, ourW.dir
	cases := referenceCases()
	last := len(cases) - 3 // kill_server and the calls after it
	for _, c := range cases[:last] {
		d.run(c)
	}
	d.latency("get_pane_info", map[string]any{"pane_id": "%0"}, 30)
	d.latency("list_panes", map[string]any{"session_name": "main"}, 30)
	for _, c := range cases[last:] {
		d.run(c)
	}
	d.report()
}

// worldSocket is the socket name of both worlds; each world has its own
// TMUX_TMPDIR, so the two servers never meet.
const worldSocket = "refdiff"

// world is one isolated tmux server: its own TMUX_TMPDIR, an empty
// configuration and a plain bash, with the same layout every time.
type world struct {
	t   *testing.T
	dir string
}

func newWorld(t *testing.T, name string) *world {
	t.Helper()
	dir, err := os.MkdirTemp("", "refdiff-world-"+name)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, dir: dir}
	t.Cleanup(func() {
		_, _ = w.tmux("kill-server")
		_ = os.RemoveAll(dir)
	})
	shell := "bash --norc --noprofile"
	w.must("new-session", "-d", "-s", "main", "-n", "w0", "-x", "80", "-y", "24", shell)
	w.must("set-option", "-g", "default-command", shell)
	w.must("split-window", "-v", "-t", "main:0", shell)
	w.must("new-window", "-d", "-t", "main:1", "-n", "w1", shell)
	w.must("new-session", "-d", "-s", "other", "-x", "80", "-y", "24", shell)
	for _, p := range []string{"%0", "%1", "%2", "%3"} {
		tmuxtest.WaitFor(t, 10*time.Second, func() bool {
			out, _ := w.tmux("capture-pane", "-p", "-t", p)
			return strings.TrimSpace(string(out)) != ""
		})
	}
	return w
}

// env is what the world's tmux and its MCP server run with: fixed, so the
// shells of both worlds print the same prompt.
func (w *world) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TERM=xterm-256color", "LANG=C.UTF-8",
		"TMUX_TMPDIR=" + w.dir, "REFSRC=" + os.Getenv("REFSRC")}
}

func (w *world) tmux(args ...string) ([]byte, error) {
	cmd := exec.Command(tmuxtest.Bin(w.t), append([]string{"-L", worldSocket, "-f", "/dev/null"}, args...)...)
	cmd.Env = w.env()
	return cmd.CombinedOutput()
}

func (w *world) must(args ...string) {
	w.t.Helper()
	if out, err := w.tmux(args...); err != nil {
		w.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
}

func timedConnect(t *testing.T, cmd *exec.Cmd) (*mcp.ClientSession, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "refdiff", Version: "0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, time.Since(start)
}

// refCase is one call made to both servers.
type refCase struct {
	name   string
	tool   string         // tool name; "" for the non-tool kinds below
	kind   string         // "", "prompt", "resource", "complete"
	args   map[string]any // $$var in a string is replaced by the side's variable
	save   [2]string      // {var, key}: store the structured result's key in var
	settle time.Duration  // pause after both calls (a shell prints)
}

type side struct {
	cs   *mcp.ClientSession
	w    *world
	vars map[string]string
	lat  map[string][]time.Duration
}

type row struct {
	c     refCase
	diffs []difference
	why   string // documented reason, "" when undocumented
	ref   outcome
	ours  outcome
}

type differential struct {
	t         *testing.T
	ref, ours side
	rows      []row
	compared  int
	used      map[int]bool // knownDifferences that matched
}

func (s *side) subst(v any) any {
	switch x := v.(type) {
	case string:
		for k, val := range s.vars {
			x = strings.ReplaceAll(x, "$$"+k, val)
		}
		return x
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = s.subst(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.subst(e)
		}
		return out
	}
	return v
}

func (s *side) call(c refCase) (outcome, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n := normaliser{tmpdir: s.w.dir}
	args, _ := s.subst(c.args).(map[string]any)
	start := time.Now()
	var o outcome
	switch c.kind {
	case "":
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: args})
		o = n.outcomeOf(res, err)
		if err == nil && !res.IsError && c.save[0] != "" {
			raw, _ := json.Marshal(res.StructuredContent)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			s.vars[c.save[0]] = fmt.Sprint(m[c.save[1]])
		}
	case "prompt":
		sargs := map[string]string{}
		for k, v := range args {
			sargs[k] = fmt.Sprint(v)
		}
		res, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: c.tool, Arguments: sargs})
		o = n.jsonOutcome(res, err)
	case "resource":
		res, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: args["uri"].(string)})
		if err == nil {
			for _, rc := range res.Contents {
				rc.URI = n.str(rc.URI)
			}
		}
		o = n.jsonOutcome(res, err)
	case "complete":
		raw, _ := json.Marshal(args)
		var p mcp.CompleteParams
		_ = json.Unmarshal(raw, &p)
		res, err := s.cs.Complete(ctx, &p)
		o = n.jsonOutcome(res, err)
	}
	return o, time.Since(start)
}

// jsonOutcome compares a non-tool answer as its whole JSON.
func (n normaliser) jsonOutcome(res any, err error) outcome {
	if err != nil {
		return outcome{IsError: true, Wording: n.str(err.Error())}
	}
	raw, _ := json.Marshal(res)
	var v any
	_ = json.Unmarshal(raw, &v)
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"_meta", "resultType", "cacheScope"} {
			delete(m, k)
		}
	}
	return outcome{Structured: n.value("", v)}
}

func (d *differential) run(c refCase) {
	if c.name == "" {
		c.name = c.tool
	}
	ro, rl := d.ref.call(c)
	oo, ol := d.ours.call(c)
	d.record(&d.ref, c.tool, rl)
	d.record(&d.ours, c.tool, ol)
	if c.settle > 0 {
		time.Sleep(c.settle)
	}
	d.compared++
	r := row{c: c, diffs: diffOutcomes(ro, oo), ref: ro, ours: oo}
	if len(r.diffs) > 0 {
		r.why = documented(c, r.diffs, d.used)
	}
	d.rows = append(d.rows, r)
}

func (d *differential) record(s *side, tool string, l time.Duration) {
	if s.lat == nil {
		s.lat = map[string][]time.Duration{}
	}
	s.lat[tool] = append(s.lat[tool], l)
}

func (d *differential) latency(tool string, args map[string]any, n int) {
	for range n {
		_, rl := d.ref.call(refCase{tool: tool, args: args})
		_, ol := d.ours.call(refCase{tool: tool, args: args})
		d.record(&d.ref, tool+"(x)", rl)
		d.record(&d.ours, tool+"(x)", ol)
	}
	p50 := func(l []time.Duration) time.Duration {
		s := slices.Clone(l)
		slices.Sort(s)
		return s[len(s)/2]
	}
	r, o := p50(d.ref.lat[tool+"(x)"]), p50(d.ours.lat[tool+"(x)"])
	d.t.Logf("latency %s p50 over %d calls: reference %v, ours %v (%.0fx)", tool, n, r.Round(10*time.Microsecond), o.Round(10*time.Microsecond), float64(r)/float64(o))
}

func (d *differential) report() {
	var b strings.Builder
	undocumented, documentedN, wording := 0, 0, 0
	fmt.Fprintf(&b, "\n%-34s | %-40s | %-40s | %s\n", "call / path", "reference", "ours", "documented as")
	for _, r := range d.rows {
		for i, df := range r.diffs {
			label := r.c.name
			if i > 0 {
				label = "  ..."
			}
			why := r.why
			if why == "" {
				why = "UNDOCUMENTED"
			}
			fmt.Fprintf(&b, "%-34s | %-40s | %-40s | %s\n", clipCell(label+" "+df.Path), df.Ref, df.Ours, why)
		}
		switch {
		case len(r.diffs) > 0 && r.why == "":
			undocumented++
		case len(r.diffs) > 0:
			documentedN++
		}
		if r.ref.IsError && r.ours.IsError && r.ref.Wording != r.ours.Wording {
			wording++
		}
	}
	b.WriteString("\nerror wording (both isError; not a difference):\n")
	for _, r := range d.rows {
		if r.ref.IsError && r.ours.IsError {
			fmt.Fprintf(&b, "  %-30s ref: %s\n  %-30s ours: %s\n", r.c.name, clipCell(r.ref.Wording), "", clipCell(r.ours.Wording))
		}
	}
	d.t.Log(b.String())
	pending := 0
	for _, r := range d.rows {
		if strings.Contains(r.why, "pending:") {
			pending++
		}
	}
	d.t.Logf("calls compared: %d; with differences: %d (documented in docs/tools.md or pending: %d, of which pending: %d; undocumented: %d); error wordings that differ: %d",
		d.compared, documentedN+undocumented, documentedN, pending, undocumented, wording)
	for i, k := range knownDifferences {
		if !d.used[i] {
			if strings.HasPrefix(k.key, "pending:") && !strings.Contains(k.key, "timing-dependent") {
				d.t.Errorf("pending difference %q (%s %s) no longer occurs: remove it from knownDifferences", k.key, k.call, k.path)
			} else {
				d.t.Logf("documented difference %q (%s %s) did not occur in this run", k.key, k.call, k.path)
			}
		}
	}
	if undocumented > 0 {
		d.t.Errorf("%d calls differ from the reference in ways docs/tools.md does not explain", undocumented)
	}
}

// knownDifference explains the differences of matching calls: key is a
// row of docs/tools.md "where we differ, and why" (server.Differences by Key,
// or "addition:NAME" for server.Additions), or "pending:..." for a
// difference issue 10 leaves open (named in the report, not failing the run;
// an entry that no longer matches anything fails, so the list cannot rot).
type knownDifference struct {
	call string // tool name, case name, or "kind:prompt" / "kind:resource" / "kind:complete"
	path string // substring of the difference path
	key  string
}

var knownDifferences = []knownDifference{
	{"get_server_info", "socket_path", "socket-path"},
	{"list_servers", "socket_path", "socket-path"},
	{"show_option session base-index", "value", "inherited-option"},
	{"show_option pane remain-on-exit", "value", "inherited-option"},
	{"run_command", "output", "run-output"},
	{"run_command", "run_id", "addition:run_id"},
	{"run_command", "history_suppressed", "addition:history_suppressed"},
	{"wait_for_text", "lines_missed", "addition:lines_missed"},
	{"send_keys_batch unknown", "results[0].error", "doubled-prefix"},
	{"send_keys_batch unknown", "results[0].pane_id", "batch-row-pane"},
	{"call_destructive_tools_batch", "results[0]", "doubled-prefix"},
	{"call_readonly_tools_batch mutating tool", "results[0]", "batch-row-refusal"},
	{"call_mutating_tools_batch unknown tool", "results[0]", "batch-row-refusal"},
	{"swap_pane", "pane_active", "focus"},
	{"respawn_pane", "pane_active", "focus"},
	{"kind:prompt", "", "prompts"},
	{"kind:resource", "", "resources"},
	{"kind:complete", "", "completion"},
	{"capture_pane after run_command", "", "run-pane"},
	{"kill_server again", "isError", "kill-server-absent"},
	{"list_sessions after kill_server", "text", "empty-list-text"},
	{"list_sessions after kill_server", "text", "no-server-hint"},
}

func (k knownDifference) matches(c refCase, df difference) bool {
	switch {
	case k.call == "*":
		return false
	case strings.HasPrefix(k.call, "kind:"):
		if c.kind != strings.TrimPrefix(k.call, "kind:") {
			return false
		}
	case k.call != c.tool && k.call != c.name:
		return false
	}
	return strings.Contains(df.Path, k.path)
}

// documented returns the keys explaining every difference of a call, or ""
// when one of them is unexplained.
func documented(c refCase, diffs []difference, used map[int]bool) string {
	var keys []string
	for _, df := range diffs {
		// Every row that matches explains it: one difference can have two
		// reasons (list_sessions with no server: the "[]" block and the hint).
		found := false
		for i, k := range knownDifferences {
			if !k.matches(c, df) {
				continue
			}
			found = true
			used[i] = true
			if !slices.Contains(keys, k.key) {
				keys = append(keys, k.key)
			}
		}
		if !found {
			return ""
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, "; ")
}

// checkKeys fails on a key that names no row of the docs table.
func checkKeys(t *testing.T) {
	rows := map[string]bool{}
	for _, d := range server.Differences {
		rows[d.Key] = true
	}
	for _, a := range server.Additions {
		rows["addition:"+a.Name] = true
	}
	for _, k := range knownDifferences {
		if !strings.HasPrefix(k.key, "pending:") && !rows[k.key] {
			t.Errorf("known difference %q names no row of docs/tools.md's table", k.key)
		}
	}
}
