package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// shortDir is a fresh directory with a short path (socket paths inside it
// must fit a socket address), removed when the test ends.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "skt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}

// treeSums maps every entry under root to a checksum of what it is: the
// content of regular files, the mode of everything else.
func treeSums(t *testing.T, root string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum += " " + string(sha256.New().Sum(b))
		}
		sums[p] = sum
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

func diffTrees(before, after map[string]string) []string {
	var out []string
	for p, s := range after {
		if before[p] != s {
			out = append(out, "changed or new: "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			out = append(out, "gone: "+p)
		}
	}
	sort.Strings(out)
	return out
}

// killSocketServers ends a tmux server that a failing (unfixed) call may
// have started on one of the paths, so a failure leaves nothing running.
func killSocketServers(bin string, paths ...string) {
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSocket != 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			cmd := exec.CommandContext(ctx, bin, "-S", p, "kill-server")
			cmd.Env = tmuxtest.CleanEnv()
			_ = cmd.Run()
			cancel()
		}
	}
}

// TestSocketTargetsAreNeverClobbered: create_session, directly, in a batch
// and through the configured socket, never replaces a file at its socket
// target, however the target is named; each refusal is a validation error
// naming the field and the rule, and nothing on disk changes.
func TestSocketTargetsAreNeverClobbered(t *testing.T) {
	skipOverSSH(t, "its rules (directories, owners, modes) are this machine's; on a host only what tmux would replace is refused (TestViaSocketPathNeverClobbered, TestRemoteHostTools)")
	tmp := shortDir(t)
	t.Setenv("TMUX_TMPDIR", tmp)
	mkdir := func(name string, mode os.FileMode) string {
		p := filepath.Join(tmp, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := mkdir("own", 0o700)
	open := mkdir("open", 0o777)
	canary := filepath.Join(own, "canary")
	top := filepath.Join(tmp, "canary") // what socket_name "../canary" reaches from tmux-UID
	for _, p := range []string{canary, top} {
		if err := os.WriteFile(p, []byte("canary "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lock := filepath.Join(own, "Cargo.lock") // tmux deletes <socket>.lock when it starts a server
	if err := os.WriteFile(lock, []byte("[[package]]"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(own, "link")
	if err := os.Symlink(canary, link); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withConfig(func(c *configT) { c.TmuxTmpdir = tmp }))
	// The configured socket path names a file that appeared after start-up.
	eCfg := newEnvOn(t, e.tmux, withConfig(func(c *configT) { c.TmuxTmpdir = tmp; c.SocketPath = canary }))

	type tc struct {
		name  string
		env   *env
		tool  string
		args  map[string]any
		field string // the message starts with it
		rule  string
	}
	cases := []tc{
		{"socket_path at a file", e, "create_session", map[string]any{"socket_path": canary}, "socket_path", "a regular file exists there"},
		{"socket_path at a symlink to a file", e, "create_session", map[string]any{"socket_path": link}, "socket_path", "a regular file exists there"},
		{"socket_path through ..", e, "create_session", map[string]any{"socket_path": own + "/../own/canary"}, "socket_path", "a regular file exists there"},
		{"socket_path at a directory", e, "create_session", map[string]any{"socket_path": own}, "socket_path", "a directory exists there"},
		{"socket_path beside a lock file", e, "create_session", map[string]any{"socket_path": filepath.Join(own, "Cargo")}, "socket_path", `a regular file exists at the path plus ".lock"`},
		{"socket_name ../", e, "create_session", map[string]any{"socket_name": "../canary"}, "socket_name", "without '/'"},
		{"socket_name ../../", e, "create_session", map[string]any{"socket_name": "../own/canary"}, "socket_name", "without '/'"},
		{"socket_name ..", e, "create_session", map[string]any{"socket_name": ".."}, "socket_name", "'.' or '..'"},
		{"socket_name beside a socket_path", e, "create_session", map[string]any{"socket_name": "../canary", "socket_path": filepath.Join(own, "new")}, "socket_name", "without '/'"},
		{"socket_path in a missing directory", e, "create_session", map[string]any{"socket_path": filepath.Join(tmp, "nosuch", "s")}, "socket_path", "directory does not exist"},
		{"socket_path in a world-writable directory", e, "create_session", map[string]any{"socket_path": filepath.Join(open, "s")}, "socket_path", "writable by group or others"},
		{"read tool, socket_path at a file", e, "list_sessions", map[string]any{"socket_path": canary}, "socket_path", "a regular file exists there"},
		{"kill_server, socket_path at a file", e, "kill_server", map[string]any{"socket_path": canary}, "socket_path", "a regular file exists there"},
		{"configured socket path at a file", eCfg, "create_session", map[string]any{}, "TMUX_MCP_SOCKET_PATH", "a regular file exists there"},
	}
	if os.Geteuid() == 0 {
		other := mkdir("other", 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{"socket_path in another user's directory", e, "create_session", map[string]any{"socket_path": filepath.Join(other, "s")}, "socket_path", "owned by another user"})
	}
	candidates := []string{canary, top, filepath.Join(open, "s"), filepath.Join(tmp, "other", "s"), filepath.Join(own, "new"), filepath.Join(own, "Cargo")}
	t.Cleanup(func() { killSocketServers(e.tmux.Bin, candidates...) })

	before := treeSums(t, tmp)
	check := func(name, msg string, meta mcp.Meta, field, rule string) {
		t.Helper()
		if meta["error_type"] != "ValidationError" || !strings.HasPrefix(msg, field+": ") || !strings.Contains(msg, rule) {
			t.Errorf("%s: got %v %q, want a ValidationError %q mentioning %q", name, meta["error_type"], msg, field, rule)
		}
	}
	for _, c := range cases {
		res := c.env.call(c.tool, c.args)
		killSocketServers(e.tmux.Bin, candidates...)
		if !res.IsError {
			t.Errorf("%s: succeeded: %s", c.name, text(res))
			continue
		}
		check(c.name, text(res), res.Meta, c.field, c.rule)
	}
	// Nested in a batch: the same check, reported in the row.
	var batch ToolCallBatchResult
	e.ok("call_mutating_tools_batch", map[string]any{"on_error": "continue", "operations": []any{
		map[string]any{"tool": "create_session", "arguments": map[string]any{"socket_path": canary}},
		map[string]any{"tool": "create_session", "arguments": map[string]any{"socket_name": "../canary"}},
	}}, &batch)
	killSocketServers(e.tmux.Bin, candidates...)
	for i, field := range []string{"socket_path", "socket_name"} {
		if i >= len(batch.Results) || batch.Results[i].Success || batch.Results[i].Error == nil {
			t.Errorf("batch row %d: %+v", i, batch.Results)
			continue
		}
		if msg := *batch.Results[i].Error; !strings.HasPrefix(msg, field+": ") {
			t.Errorf("batch row %d: %q", i, msg)
		}
	}
	if d := diffTrees(before, treeSums(t, tmp)); len(d) > 0 {
		t.Errorf("files changed:\n%s", strings.Join(d, "\n"))
	}
}

// fillerArgs returns valid-looking values for a tool's required arguments,
// so that a call gets past the schema and reaches the checks under test.
func fillerArgs(t *Tool) map[string]any {
	props, _ := t.inSchema()["properties"].(map[string]any)
	req, _ := t.inSchema()["required"].([]any)
	args := map[string]any{}
	for _, r := range req {
		name := r.(string)
		args[name] = fillerValue(name, props[name].(map[string]any))
	}
	return args
}

func fillerValue(name string, s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if alts, ok := s["anyOf"].([]any); ok {
		return fillerValue(name, alts[0].(map[string]any))
	}
	typ := s["type"]
	if types, ok := typ.([]any); ok {
		typ = types[0]
	}
	switch typ {
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	}
	switch {
	case strings.HasSuffix(name, "pane_id"):
		return "%0"
	case name == "window_id":
		return "@0"
	case name == "session_id":
		return "$0"
	case name == "session_name":
		return "main"
	}
	return "x"
}

// stringArgs lists a tool's arguments that take a string (or strings).
func stringArgs(t *Tool) []string {
	props, _ := t.inSchema()["properties"].(map[string]any)
	var out []string
	for name, p := range props {
		ps := p.(map[string]any)
		items, _ := alternative(ps, "array")["items"].(map[string]any)
		if alternative(ps, "string") != nil || alternative(items, "string") != nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TestNULIsAValidationErrorNamingTheField: a NUL byte in any string
// argument of any tool, top-level or nested, is refused before tmux runs
// with a validation error that names the field, except in the arguments
// that reach tmux through a file (nulAllowed).
func TestNULIsAValidationErrorNamingTheField(t *testing.T) {
	// Its own socket directory: list_servers scans it (never other tests' servers).
	tmp := shortDir(t)
	t.Setenv("TMUX_TMPDIR", tmp)
	e := newEnv(t, withConfig(func(c *configT) { c.PromptsAsTools = true; c.TmuxTmpdir = tmp }))
	tried := 0
	for _, tool := range e.srv.Visible() {
		for _, field := range stringArgs(tool) {
			if nulAllowed[tool.Name][field] || (tool.Toolset == "batch" && field == "operations") {
				continue
			}
			args := fillerArgs(tool)
			args[field] = "a\x00b"
			if ps := tool.inSchema()["properties"].(map[string]any)[field].(map[string]any); alternative(ps, "string") == nil {
				args[field] = []any{"a\x00b"}
				field += "[0]"
			}
			if _, ok := tool.inSchema()["properties"].(map[string]any)["timeout"]; ok {
				args["timeout"] = 1
			}
			tried++
			res := e.call(tool.Name, args)
			msg := text(res)
			if !res.IsError || res.Meta["error_type"] != "ValidationError" || !strings.Contains(msg, field) {
				t.Errorf("%s.%s: got %v %q, want a ValidationError naming %s", tool.Name, field, res.Meta["error_type"], msg, field)
			}
		}
	}
	if tried < 100 {
		t.Errorf("only %d string arguments tried", tried)
	}
	t.Logf("%d string arguments of %d tools refused a NUL", tried, len(e.srv.Visible()))

	// Nested fields, map members, values tmux never sees as one argument,
	// and over-long socket selections.
	big := strings.Repeat("n", 1<<20)
	longPath := "socket_path: must be at most"
	if sshMode() {
		// A host's socket_path goes on the ssh command line, whose rules
		// (characters, 256 bytes) come first.
		longPath = "socket_path: not usable on a remote command line"
	}
	for _, c := range []struct {
		tool  string
		args  map[string]any
		field string
	}{
		{"create_session", map[string]any{"environment": map[string]any{"A": "a\x00b"}}, "environment.A: must not contain a NUL byte"},
		{"create_session", map[string]any{"environment": map[string]any{"A\x00": "b"}}, "environment (a key): must not contain a NUL byte"},
		{"create_session", map[string]any{"environment": `{"A": "a\u0000b"}`}, "environment.A: must not contain a NUL byte"},
		{"send_keys_batch", map[string]any{"operations": []any{map[string]any{"pane_id": "%0", "keys": "ok"}, map[string]any{"pane_id": "%0", "keys": "a\x00b"}}}, "operations[1].keys: must not contain a NUL byte"},
		{"list_sessions", map[string]any{"socket_name": big}, "socket_name: must be at most 100 bytes"},
		{"create_session", map[string]any{"socket_name": big}, "socket_name: must be at most 100 bytes"},
		{"create_session", map[string]any{"socket_path": "/" + big}, longPath},
		{"get_server_info", map[string]any{"socket_path": "/tmp/a\x00b"}, "socket_path: must not contain a NUL byte"},
		{"list_servers", map[string]any{"extra_socket_paths": []any{"/tmp/ok", "/tmp/a\x00b"}}, "extra_socket_paths[1]: must not contain a NUL byte"},
	} {
		res := e.call(c.tool, c.args)
		if msg := text(res); !res.IsError || res.Meta["error_type"] != "ValidationError" || !strings.HasPrefix(msg, c.field) {
			t.Errorf("%s %.60v: got %v %.200q, want %q", c.tool, c.args, res.Meta["error_type"], msg, c.field)
		}
	}

	// In a batch, the nested call reports its own field.
	var batch ToolCallBatchResult
	e.ok("call_readonly_tools_batch", map[string]any{"operations": []any{
		map[string]any{"tool": "get_pane_info", "arguments": map[string]any{"pane_id": "%0\x00"}},
	}}, &batch)
	if len(batch.Results) != 1 || batch.Results[0].Error == nil || *batch.Results[0].Error != "pane_id: must not contain a NUL byte" {
		raw, _ := json.Marshal(batch)
		t.Errorf("batch: %s", raw)
	}

	// Content that travels through a file may hold NUL.
	var loaded BufferRef
	e.ok("load_buffer", map[string]any{"content": "a\x00b"}, &loaded)
	e.ok("delete_buffer", map[string]any{"buffer_name": loaded.BufferName}, nil)
}

// TestReadToolsCreateNoFiles: every read-only tool, pointed at a socket
// path in a fresh directory or at a fresh socket name, leaves no file
// behind but tmux's own socket directory.
func TestReadToolsCreateNoFiles(t *testing.T) {
	tmp := shortDir(t)
	t.Setenv("TMUX_TMPDIR", tmp)
	e := newEnv(t, withConfig(func(c *configT) { c.TmuxTmpdir = tmp }))
	fresh := shortDir(t)
	before, beforeFresh := treeSums(t, tmp), treeSums(t, fresh)
	calls := 0
	for _, tool := range e.srv.Visible() {
		if tool.Tier != config.Readonly || tool.Toolset == "batch" {
			continue
		}
		props := tool.inSchema()["properties"].(map[string]any)
		if _, ok := props["socket_name"]; !ok {
			continue
		}
		for _, sock := range []map[string]any{{"socket_path": filepath.Join(fresh, "s")}, {"socket_name": "fresh-name"}} {
			args := fillerArgs(tool)
			for k, v := range sock {
				args[k] = v
			}
			if _, ok := props["timeout"]; ok {
				args["timeout"] = 1
			}
			e.call(tool.Name, args)
			calls++
		}
	}
	if calls < 30 {
		t.Errorf("only %d calls", calls)
	}
	if d := diffTrees(before, treeSums(t, tmp)); len(d) > 0 {
		t.Errorf("TMUX_TMPDIR changed:\n%s", strings.Join(d, "\n"))
	}
	if d := diffTrees(beforeFresh, treeSums(t, fresh)); len(d) > 0 {
		t.Errorf("socket_path directory changed:\n%s", strings.Join(d, "\n"))
	}
}

// TestSocketPathTildeExpands: "~/" in socket_path is the home directory
// (tmux would take "~" as a directory name relative to its working
// directory), and the answer names the expanded path.
func TestSocketPathTildeExpands(t *testing.T) {
	skipOverSSH(t, "a remote path must be absolute: ~ is the host's, not expanded here")
	home := shortDir(t)
	t.Setenv("HOME", home)
	e := newEnv(t)
	var info ServerInfo
	e.ok("get_server_info", map[string]any{"socket_path": "~/s"}, &info)
	if info.IsAlive || info.SocketPath == nil || *info.SocketPath != filepath.Join(home, "s") {
		t.Errorf("got %+v, want a dead server at %s", info, filepath.Join(home, "s"))
	}
}
