// Package server is the MCP face of tmux-mcp: the tool registration table,
// safety tiers, argument validation, error mapping and the MCP server built
// on the official Go SDK. It reaches tmux only through internal/tmux.
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/foreground"
	"github.com/tmux-mcp/tmux-mcp/internal/metrics"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Version is the server version reported to clients; main sets it.
var Version = "dev"

// Server holds the configuration, the tmux client and the tool table.
type Server struct {
	cfg     config.Config
	tmux    *tmux.Client
	log     *slog.Logger
	all     []*Tool          // every tool, visible or not
	visible map[string]*Tool // tools at or below the configured tier and in the chosen toolsets
	audit   *audit.Logger
	reqSeq  atomic.Uint64
	watch   *tmux.Watchers // control clients streaming pane output to waits
	hosts   *remote.Set    // remote hosts (TMUX_MCP_HOSTS); nil: none

	sinceOnce sync.Once
	since     *cursorStore // capture_since cursor state (capture_since_store.go)

	runOnce sync.Once
	runReg  *runRegistry // run_command records awaiting collection

	bufOnce  sync.Once
	bufState *bufferState // this process's buffer namespace (tools_buffers.go)

	recOnce  sync.Once
	recStore atomic.Pointer[recordingStore] // record_pane's recordings (recordings.go); nil until the first

	stop stopState // cancels calls in flight at shutdown (shutdown.go)

	fgTracker foreground.Tracker // how long each pane's foreground has been in its state

	promptRowOnce sync.Once
	promptRowC    *promptRowCache    // panes send_and_wait typed into (tools_wait_prompt.go)
	fgOptions     foreground.Options // how panes are inspected (Options.Foreground)

	// pidHints maps a socket to the pid of the tmux server a listing last
	// met there (panes_current.go); noCurrentFromOS makes listings ask
	// tmux for every pane's current command and path (tests).
	pidHints        sync.Map
	noCurrentFromOS bool
	// currentRead and currentAsked count the panes whose current command
	// and path a listing read from the OS, and those it asked tmux for.
	currentRead, currentAsked atomic.Int64
	// layoutAsked counts the listings whose window layouts did not
	// account for their panes (panes_layout.go); testWindowRows, when
	// set, edits a listing's window rows before they are used (tests).
	layoutAsked    atomic.Int64
	testWindowRows func([]tmux.Row)

	// splice is the transport's hold for encoded results (SetSplicer).
	splice func([]byte) []byte

	scopes      sync.Map // scope text -> scope.Scope, parsed once (scope.go)
	confirmOnce sync.Once
	confirmSt   *confirmStore // questions awaiting the person's answer (confirm_state.go)

	appOff bool       // serve as before the MCP App existed: the tests' baseline (app_ui.go)
	stacks deepStacks // goroutines with grown stacks that run tool calls (stacks.go)
}

// Options are the collaborators of a Server.
type Options struct {
	Tmux   *tmux.Client  // nil: exec tmux from cfg.TmuxBin
	Logger *slog.Logger  // nil: discard
	Audit  *audit.Logger // nil: no audit records
	// ChildEnv is the environment of long-lived tmux clients the server
	// starts (watchers); nil inherits this process's.
	ChildEnv []string
	// Hosts are the remote hosts a call's host argument names. nil: New
	// builds them from cfg.Hosts and cfg.SSHCommand (none when empty).
	// Close closes them either way: the server owns them.
	Hosts *remote.Set
	// Foreground tunes how local panes' foreground programs are inspected
	// (tests turn sources off to see what a less privileged user gets).
	Foreground foreground.Options
}

// New builds the server and its tool table. It fails when a tool is
// malformed (no tier, no preset, unknown toolset), so a mistake can never
// ship a tool that escapes the safety gate.
func New(cfg config.Config, opts Options) (*Server, error) {
	s := &Server{cfg: cfg, tmux: opts.Tmux, log: opts.Logger, audit: opts.Audit,
		watch: &tmux.Watchers{Bin: cfg.TmuxBin, Env: opts.ChildEnv}, fgOptions: opts.Foreground}
	s.stop.ctx, s.stop.cancel = context.WithCancelCause(context.Background())
	s.hosts = opts.Hosts
	if s.hosts == nil && len(cfg.Hosts) > 0 {
		specs := make([]remote.Spec, len(cfg.Hosts))
		for i, h := range cfg.Hosts {
			specs[i] = h.Spec()
		}
		set, err := remote.NewSet(specs, remote.Options{SSHCommand: cfg.SSHCommand, Env: opts.ChildEnv})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
		}
		s.hosts = set
	}
	if s.tmux == nil {
		if cfg.Engine == "exec" {
			s.tmux = tmux.NewExecClient(cfg.TmuxBin)
		} else {
			s.tmux = &tmux.Client{Runner: &tmux.ControlRunner{Bin: cfg.TmuxBin, Env: opts.ChildEnv}}
		}
	}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Safety == 0 {
		s.cfg.Safety = config.Mutating
	}
	if s.cfg.WaitMax == 0 {
		s.cfg.WaitMax = config.DefaultWaitMax
	}
	enabled := map[string]bool{}
	for _, ts := range cfg.Toolsets {
		enabled[ts] = true
		if !slices.Contains(Toolsets, ts) {
			return nil, fmt.Errorf("%w: unknown toolset (known: %v)", config.ErrInvalid, Toolsets)
		}
	}
	s.visible = map[string]*Tool{}
	seen := map[string]bool{}
	tools := allTools()
	if cfg.PromptsAsTools {
		tools = append(tools, promptTools()...)
	}
	for _, t := range tools {
		if err := t.check(); err != nil {
			return nil, err
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("tool %q registered twice", t.Name)
		}
		seen[t.Name] = true
		s.all = append(s.all, t)
		if t.Tier <= s.cfg.Safety && (len(enabled) == 0 || enabled[t.Toolset]) {
			s.visible[t.Name] = t
		}
	}
	sort.Slice(s.all, func(i, j int) bool { return s.all[i].Name < s.all[j].Name })
	// run_command advertises the configured history default (contract 6).
	// The struct tag's default is true, which the generated schema carries.
	if t := s.tool("run_command"); t != nil && !s.cfg.SuppressHistory {
		t.overrideDefault("suppress_history", false)
	}
	return s, nil
}

// allTools is the registration table: every tool, from every group.
func allTools() []*Tool {
	var ts []*Tool
	for _, group := range toolGroups {
		ts = append(ts, group()...)
	}
	return ts
}

// toolGroups lists the constructors of each tool group file.
var toolGroups []func() []*Tool

// All returns every tool in the table, sorted by name.
func (s *Server) All() []*Tool { return s.all }

// Visible returns the tools a client can see and call, sorted by name.
func (s *Server) Visible() []*Tool {
	var out []*Tool
	for _, t := range s.all {
		if s.visible[t.Name] != nil {
			out = append(out, t)
		}
	}
	return out
}

// Config returns the effective configuration.
func (s *Server) Config() config.Config { return s.cfg }

// MCP builds the SDK server with the visible tools registered.
func (s *Server) MCP() *mcp.Server {
	rs := newResourceState(s)
	ms := mcp.NewServer(&mcp.Implementation{Name: "tmux", Title: "tmux-mcp", Version: Version, WebsiteURL: "https://github.com/tmux-mcp/tmux-mcp"},
		&mcp.ServerOptions{
			Instructions: s.Instructions(),
			Logger:       sdkLogger(s.log),
			Capabilities: &mcp.ServerCapabilities{
				Tools:       &mcp.ToolCapabilities{ListChanged: false},
				Prompts:     &mcp.PromptCapabilities{ListChanged: false},
				Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
				Completions: &mcp.CompletionCapabilities{},
			},
			SubscribeHandler:   rs.subscribe,
			UnsubscribeHandler: rs.unsubscribe,
			CompletionHandler:  s.complete,
		})
	rs.ms = ms
	for _, t := range resourceTemplates {
		ms.AddResourceTemplate(t, s.readResource)
	}
	for _, t := range recordingTemplates {
		ms.AddResourceTemplate(t, s.readRecording)
	}
	if s.hosts != nil && len(s.hosts.Names()) > 0 {
		for _, t := range hostResourceTemplates {
			ms.AddResourceTemplate(t, s.readResource)
		}
	}
	addPrompts(ms)
	for _, t := range s.Visible() {
		// AddTool checks a schema by encoding and decoding it as JSON, three
		// times per tool (~250 µs each, and 32 KB of garbage per decode):
		// with ~60 tools that was most of our start-up. Our schemas are
		// checked by exactly that AddTool at build time instead
		// (TestSDKAcceptsSchemas), so the tool is registered with the
		// smallest valid schema and then given its real ones, which the SDK
		// lists as they are (TestListedSchemasAreGenerated).
		mt := t.mcpTool()
		in, out := mt.InputSchema, mt.OutputSchema
		mt.InputSchema, mt.OutputSchema = placeholderSchema, nil
		ms.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
			s.stacks.run(func() { res = s.invoke(ctx, t, req, req.Params.Arguments, "") }) // stacks.go
			return res, nil
		})
		mt.InputSchema, mt.OutputSchema = in, out
	}
	ms.AddReceivingMiddleware(s.encodeResults, s.gate, s.appUI, rs.middleware, s.cancelOnShutdown)
	return ms
}

// placeholderSchema is the argument schema a tool is registered with
// before its real one is put in place (see MCP).
var placeholderSchema = &jsonschema.Schema{Type: "object"}

// sdkLogger quiets the SDK's per-connection chatter: only its warnings and
// errors reach our log.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(levelFilter{l.Handler(), slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

// gate answers calls to tools that exist but are hidden by the safety tier
// or the toolset choice with a clear refusal (the SDK would only say
// "unknown tool"), and keeps any panic outside a tool from ending the
// process.
func (s *Server) gate(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("panic while handling request", "method", method, "panic", fmt.Sprint(r))
				res, err = nil, fmt.Errorf("internal error handling %s", method)
			}
		}()
		if err := unknownName(s, method, req); err != nil {
			return nil, err
		}
		if method == "tools/call" {
			if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil {
				r := s.refusal(ctr.Params.Name)
				if r == nil {
					r = s.clientRefusal(ctx, ctr.Params.Name)
				}
				if r != nil {
					s.auditCall(ctx, ctr.Params.Name, ctr, ctr.Params.Arguments, s.nextRequestID(), "", time.Now(), r)
					metrics.Call(ctr.Params.Name, metrics.Refused, 0)
					return r, nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

// unknownName answers a call of a tool or prompt that does not exist as
// the SDK would (invalid params), with the name clipped (errarg): the SDK
// quotes it whole, and a client can send a 1 MiB one.
func unknownName(s *Server, method string, req mcp.Request) error {
	var name, what string
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if method != "tools/call" || r.Params == nil || s.visible[r.Params.Name] != nil || s.tool(r.Params.Name) != nil {
			return nil
		}
		name, what = r.Params.Name, "tool"
		metrics.UnknownTool()
	case *mcp.GetPromptRequest:
		if method != "prompts/get" || r.Params == nil || promptNamed(r.Params.Name) != nil {
			return nil
		}
		name, what = r.Params.Name, "prompt"
	default:
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown " + what + " " + errarg.Quoted(name)}
}

// refusal returns the error result for a tool that exists but is hidden, or
// nil when the tool is visible or unknown.
func (s *Server) refusal(name string) *mcp.CallToolResult {
	if s.visible[name] != nil {
		return nil
	}
	t := s.tool(name)
	if t == nil {
		return nil
	}
	if t.Tier > s.cfg.Safety {
		return errorResult(&ToolError{
			Msg: fmt.Sprintf("Tool '%s' is not available at the current safety level (%s). It needs the %s tier: set TMUX_MCP_SAFETY=%s to enable it.",
				name, s.cfg.Safety, t.Tier, t.Tier),
			Type: typeExpected, Expected: true,
		})
	}
	return errorResult(&ToolError{
		Msg:  fmt.Sprintf("Tool '%s' belongs to the %s toolset, which is not enabled (TMUX_MCP_TOOLSETS).", name, t.Toolset),
		Type: typeExpected, Expected: true,
	})
}

// clientRefusal returns the error result for a visible tool above the
// tier of the authenticated client's token (see Client), or nil.
func (s *Server) clientRefusal(ctx context.Context, name string) *mcp.CallToolResult {
	c, ok := ClientFrom(ctx)
	t := s.visible[name]
	if !ok || c.Tier == 0 || t == nil || t.Tier <= c.Tier {
		return nil
	}
	return errorResult(&ToolError{
		Msg: fmt.Sprintf("Tool '%s' needs the %s tier, but the credentials of client '%s' are limited to %s: use a token with a higher tier (the server allows up to %s).",
			name, t.Tier, c.Name, c.Tier, s.cfg.Safety),
		Type: typeExpected, Expected: true,
	})
}

// Close releases what the server holds in tmux: it ends its recordings,
// deletes the buffers it created, detaches its watchers and closes the
// control-mode connections.
// The CLI calls it however serving ends (end of input, SIGTERM, SIGINT).
func (s *Server) Close(ctx context.Context) error {
	// First, and without tmux: each recording's file gets its last line.
	s.stopRecordings("tmux-mcp exited")
	err := s.closeBuffers(ctx)
	s.watch.CloseAll()
	if c, ok := s.tmux.Runner.(interface{ Close() error }); ok {
		_ = c.Close()
	}
	if s.hosts != nil {
		_ = s.hosts.Close() // every ssh connection, remote control client and watcher
	}
	return err
}

// CallTool runs one visible tool in-process over an in-memory MCP session,
// so the CLI's call subcommand goes through exactly the same registry,
// validation and middleware as a client would.
func (s *Server) CallTool(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tmux-mcp-cli", Version: Version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// Call is one tool invocation's view of the server.
type Call struct {
	*Server
	Req       *mcp.CallToolRequest
	Tool      *Tool
	RequestID string // this call's id in the audit log

	// tmux and watch shadow the Server's: they are the engine of the
	// call's host (the local one, or a remote host's over ssh), so every
	// tool reaches the host its call names without knowing about hosts.
	tmux  *tmux.Client
	watch *tmux.Watchers
	// host is the remote host the call names; "" is the local machine.
	host string
	eng  *remote.Engine // host's engine; nil for the local machine

	// notes are text blocks added after the result's own (see addNote).
	notes []string

	// scope is the call's confinement to the caller's sessions (scope.go);
	// nil when it has none.
	scope *callScope
}

// addNote adds a text content block after the result: a hint for the model
// that is no part of the value, so the first block stays the bare JSON the
// reference returns.
func (c *Call) addNote(text string) { c.notes = append(c.notes, text) }

// noServerNote is the hint a list tool adds when no tmux server runs on the
// socket it asked: an empty list there often means the wrong socket.
func noServerNote(sock tmux.Socket) string {
	return "No tmux server is running on this socket (" + sock.String() + "), so the list is empty. If you expected one: " +
		"some clients (the MCP Inspector among them) pass a stdio server only whitelisted environment variables, " +
		"so TMUX_MCP_SOCKET may not have reached this server (the Inspector needs -e TMUX_MCP_SOCKET=...). " +
		"list_servers finds the running servers."
}

// SocketArgs is the socket selection every tool but list_servers and the
// batch tools accepts. socket_path is our addition (see Additions).
//
// Their schemas carry no description: they repeat on about 50 tools, where
// one cost 4.7 KB of every tools/list. The instructions and docs/tools.md
// (sharedArgDocs) say once what they mean.
type SocketArgs struct {
	SocketName *string `json:"socket_name"`
	SocketPath *string `json:"socket_path"`
	// Host names a TMUX_MCP_HOSTS entry: the socket is on that host. Like
	// the socket arguments it goes out undescribed (HostArgDescription):
	// the instructions name the configured hosts once.
	Host *string `json:"host" doc:"A TMUX_MCP_HOSTS entry: the call reaches tmux on that host over ssh; omitted: this machine."`
}

// Socket resolves which server a call reaches, highest first: the call's
// socket_path, its socket_name, the configured path, the configured name;
// with none, tmux's own default (the caller's server when TMUX is set). A
// leading ~ of a path expands to the home directory. Every tool call's
// selection has passed checkSocket (validate.go) before a handler runs.
func (c *Call) Socket(a SocketArgs) tmux.Socket {
	if c.eng != nil {
		return c.remoteSocket(a)
	}
	sock, _ := c.chooseSocket(a)
	if sock.Path != "" {
		if p, err := tmux.ExpandHome(sock.Path); err == nil {
			sock.Path = p
		}
	}
	return sock
}

// chooseSocket is Socket's choice, unexpanded, with the name of the
// argument, variable or flag it came from, for error messages.
func (s *Server) chooseSocket(a SocketArgs) (tmux.Socket, string) {
	switch {
	case a.SocketPath != nil && *a.SocketPath != "":
		return tmux.Socket{Path: *a.SocketPath}, "socket_path"
	case a.SocketName != nil && *a.SocketName != "":
		return tmux.Socket{Name: *a.SocketName}, "socket_name"
	case s.cfg.SocketPath != "":
		return tmux.Socket{Path: s.cfg.SocketPath}, s.cfg.SocketPathSource()
	case s.cfg.SocketName != "":
		return tmux.Socket{Name: s.cfg.SocketName}, s.cfg.SocketNameSource()
	}
	return tmux.Socket{}, ""
}

// checkSocket refuses a socket selection that tmux must not be given (see
// tmux.CheckSocketPath): before this check, create_session with a
// socket_path naming a regular file replaced the file with a socket. A
// socket_name given next to a socket_path must still be a valid name,
// though the path wins.
func (s *Server) checkSocket(a SocketArgs) error {
	if a.SocketName != nil && *a.SocketName != "" {
		if err := tmux.CheckSocketName(*a.SocketName); err != nil {
			return socketError("socket_name", err)
		}
	}
	sock, from := s.chooseSocket(a)
	switch {
	case sock.Path != "":
		if _, err := tmux.CheckSocketPath(sock.Path); err != nil {
			return socketError(from, err)
		}
	case sock.Name != "":
		if from != "socket_name" { // the call's own name was checked above
			if err := tmux.CheckSocketName(sock.Name); err != nil {
				return socketError(from, err)
			}
		}
		if err := tmux.CheckSocketInDir(s.cfg.SocketDir(), sock.Name); err != nil {
			return socketError(from, err)
		}
	}
	return nil
}

// socketError is a refused socket as a validation error naming its field.
func socketError(field string, err error) *ToolError {
	return &ToolError{Msg: field + ": " + err.Error(), Type: "ValidationError", Expected: true, Err: err,
		Suggestion: "socket_name is a plain name in tmux's socket directory; socket_path is an absolute path whose directory exists and is yours. list_servers finds running servers."}
}

// Addition is an optional argument or result field that tmux-mcp adds to the
// reference contract. Nothing else may differ from the reference.
type Addition struct {
	Name  string
	Where string
	Why   string
}

// Additions is the one table of everything tmux-mcp adds to the contract; the
// schema tests allow exactly these beyond the reference's fields.
var Additions = []Addition{
	{"socket_path", "argument of every tool that takes socket_name",
		"reach a server by socket path (tmux -S), e.g. one found by list_servers(extra_socket_paths=...)"},
	{"host", "argument of every tool; result field of listed panes, windows, sessions and servers on a remote host",
		"reach tmux on a remote host over ssh (TMUX_MCP_HOSTS); ids are per host, so results name the host they describe"},
	{"host_error", "result field of list_servers, on the row of a remote host it could not reach",
		"one unreachable host is reported with its reason instead of failing the whole listing"},
	{"run_id", "result field of run_command (RunCommandResult)",
		"handle to resume a timed-out run_command with wait_for_run instead of running the command again"},
	{"wait_for_run", "tool",
		"waits for a run_command that timed out and returns the same RunCommandResult"},
	{"lines_missed", "result field of wait_for_text, run_command and wait_for_run",
		"true when output may be missing and how much is unknown (tmux paused a flooding pane's output stream, or the stream was lost and followed again, as after an ssh reconnect); run_command's output_truncated and output_truncated_lines then still count only lines cut from the head"},
	{"history_suppressed", "result field of run_command and wait_for_run (RunCommandResult)",
		"whether suppress_history held: the shell kept the command out of its history (true), recorded it anyway (false), or cannot tell (null)"},
	{"foreground", "argument of get_pane_info and list_panes; result field of those (with foreground=true), snapshot_pane, wait_for_prompt and send_and_wait",
		"what the pane's foreground program is doing, read from the operating system (waiting for input, running, sleeping, stopped, exited), with how it was decided; see \"Interactive programs\" below"},
	{"wait_for_prompt", "tool",
		"waits until a program waits for input, goes quiet or exits, driven by output events and the OS state, instead of a guessed pattern"},
	{"send_and_wait", "tool",
		"drives a REPL, prompt or TUI turn by turn: types, waits for the next prompt, returns only the answer"},
	{"record_pane", "tool",
		"records a pane as an asciicast v2 file a person can replay (asciinema play): its screen at the start, timed output, resizes, what the tools typed (never secret input), gaps as markers; pipe_pane's raw bytes have no timing and no start"},
	{"list_recordings", "tool",
		"lists the caller's recordings (running and stopped) with their files and resource URIs"},
	{"tmux://recordings/{recording_id}", "resource template",
		"reads a recording (asciicast v2); only the client that made it can read it"},
	{"ui://tmux-mcp/pane", "resource, and `_meta.ui.resourceUri` of capture_pane_image, for clients that declare the MCP Apps extension (io.modelcontextprotocol/ui)",
		"a live view of the pane in hosts that render MCP Apps, kept current through read-only calls, with a pause button; for every other client the lists are byte for byte as before (see \"Live pane view\" below)"},
	{"styles", "argument of capture_pane and snapshot_pane; with it, result field of both (capture_pane: also a second text block)",
		"colours and attributes (a selected item in reverse video, a search match, an error in red) as compact spans of the returned lines; off, every answer is byte for byte as before"},
	{"capture_pane_image", "tool",
		"a pane's visible screen as a PNG image content (colours, bold, reverse video, the cursor, wide cells), drawn in process with the embedded Go Mono fonts; characters they lack are placeholder boxes"},
}

// Difference is a deliberate behaviour that differs from the reference
// (libtmux-mcp 0.1.0a20): a reference defect we fix or a choice we made. With
// Additions it is the one table of docs/tools.md "where we differ, and why";
// the differential test (e2e/reference_test.go) accepts exactly these
// differences, by Key, and fails on any other.
type Difference struct {
	Key       string // cited by the differential test
	What      string
	Reference string
	Ours      string
	Why       string
}

// Differences are the deliberate differences from the reference.
var Differences = []Difference{
	{"socket-path", "`socket_path` of get_server_info and list_servers", "null when the server was reached by socket name",
		"the socket's path", "a client can pass it back as socket_path; the reference leaves it null unless it was given a path"},
	{"inherited-option", "show_option of a value set only at a parent scope (session base-index, pane remain-on-exit)", "null",
		"the value in effect (show-options -A)", "the reference's null says \"not set\" for an option that is in effect; a defect"},
	{"run-output", "run_command `output`", "includes the shell prompt and the typed wrapper lines (`bash# (`, `> echo hi`)",
		"only what the command printed", "output is the command's output; prompt and wrapper lines are noise a model would misread"},
	{"run-pane", "what the pane shows after run_command (and so capture_pane later)",
		"the typed wrapper: `(`, `> echo hi`, `> ); s=$?; tmux -L … set-option -p … wait-for -S …`",
		"the prompt and the command as a person would have typed it (`$ echo hi`), then its output",
		"a person watching the pane, and a later capture_pane, see the command and not our plumbing (issue 10 item 11)"},
	{"run-foreground", "`pane_current_command` (get_pane_info, list_panes) while run_command runs",
		"the program for a lone simple command (the shell execs it in its subshell's place); the shell (`bash`) for a pipeline or a list",
		"the program in bash, zsh and fish, which run the command under job control: a pipeline's first process, each job of `a; b` in turn. sh (dash), ksh93 and mksh subshells cannot do job control: there it stays the shell's name. C-z cannot stop the run: bash and zsh ignore it, fish ends the stopped program when the rest of the command has run",
		"tmux names a pane after the leader of the terminal's foreground process group; an agent or a person asking what a pane runs must see the program, not our subshell (issue 20 item 4)"},
	{"capture-since-cursor", "capture_since `cursor`",
		"stateless base64 JSON that grows with the pane height (~2 KB for 30 rows); an unknown cursor is an error",
		"a short handle (`capture-since-v3:%N:<id>`, ~45 bytes) to state kept by this server process; an unknown, evicted or other client's cursor is answered like a first call with `lines_missed: true`",
		"a model pays for the cursor in tokens twice per call; server-side state can also prove that nothing was lost near history-limit, where row hashes alone cannot"},
	{"capture-since-missed", "capture_since when history was trimmed, the width changed, or the alternate screen was entered or left",
		"may align on a repeated prompt row and answer `lines: []`, `lines_missed: false` while new rows were written",
		"new rows located exactly, or `lines_missed: true` with what is visible",
		"it must never answer \"nothing new\" while output was written (issue 9 item 3)"},
	{"doubled-prefix", "error text of a missing pane (also inside batch rows)", "\"Pane not found: Pane not found: %9\"",
		"\"Pane not found: %9\"", "a defect of the reference (the prefix is added twice)"},
	{"batch-row-pane", "send_keys_batch row of a failed operation: `pane_id`", "null", "the pane_id the operation named",
		"the caller can tell which operation failed without counting indexes"},
	{"batch-row-refusal", "call_*_tools_batch row refused before running (unknown tool, tier above the batch's)",
		"`content: []`, error \"Unknown tool: 'x'\" / \"Tool 'x' has tier 'destructive', which exceeds batch tier readonly.\"",
		"the same error text also as the row's text content, worded \"unknown tool 'x'\" / \"'x' needs the destructive tier; this batch allows up to readonly\"",
		"every failed row carries its reason in the same place; the row's success flag and error field are what clients branch on"},
	{"select-layout-name", "select_layout with a layout that is neither a preset nor a layout string", "passed to tmux, whose 3.3a server crashes on some (the whole server and its sessions are lost)",
		"refused before tmux sees it (ValidationError naming the presets)", "a typo must not kill every session"},
	{"focus", "split_window, and so the active pane seen by later swap_pane/respawn_pane results", "the new pane may take focus",
		"the new pane never takes focus (split-window -d)", "an agent working in the background must not move the user's cursor"},
	{"prompts", "the four prompts' descriptions and text", "the reference's recipes",
		"rewritten recipes with the same names and arguments", "the reference's advice was wrong in places (a timed-out run_command is resumed with wait_for_run, never run again)"},
	{"resources", "`mimeType` of resource contents (tmux://sessions, /windows, /panes/...)", "`text/plain`, although the templates declare `application/json`",
		"`application/json`", "the contents are JSON, as the templates declare"},
	{"completion", "completion/complete", "Method not found", "completes session names, window indexes and pane ids", "lets clients offer real targets for resource templates and prompts"},
	{"buffer-names", "agent buffer names from load_buffer", "`libtmux_mcp_<uuid>_<logical>`", "`tmux_mcp_<pid>_<start>_<instance>_<nonce>_<logical>`",
		"the owner is recoverable from the name, so buffers of a dead server can be reclaimed; clients treat the name as opaque either way"},
	{"buffer-not-found", "error_type of show_buffer, paste_buffer or delete_buffer naming a well-formed agent buffer that is gone",
		"the class of the failed subprocess: `CalledProcessError` (show_buffer, delete_buffer) or `LibTmuxException` (paste_buffer)",
		"`ObjectDoesNotExist`, with a hint that only load_buffer's buffers of this server process exist",
		"the reference's names are its implementation (how it ran tmux), not the failure; every other missing object is typed as in the reference"},
	{"empty-list-text", "text content of a list tool whose list is empty", "no content block at all", "one text block `[]`",
		"every result carries its text; a client reading content[0] finds the (empty) array"},
	{"schema-nullable", "input schema of an optional argument whose default is null (tools/list)", "`{\"anyOf\": [{\"type\": T}, {\"type\": \"null\"}], \"default\": null}`",
		"`{\"type\": T}`, not required; an explicit null is still accepted and means the same as leaving the argument out. Where null means something else than the default (max_lines, max_bytes, limit: null for no cap), `{\"anyOf\": [{\"type\": T}, {\"type\": \"null\"}], \"default\": N}`. docs/tools.md shows the accepted types, null included",
		"Cursor refuses every value of a property typed `[T, \"null\"]`, and clients that map schemas onto Gemini's OpenAPI subset refuse type arrays; a plain type is what every client takes, and keeps what a model reads at 0.52x the reference's (anyOf everywhere: 0.69x, over the 0.6x budget). The research is in schema.go (advertisedInput)"},
	{"no-server-hint", "list_sessions when no server runs on the socket", "one block: the empty array",
		"the empty array as the first block, then a second text block naming the socket and saying that a client such as the MCP Inspector passes a stdio server only whitelisted environment variables (`-e TMUX_MCP_SOCKET=...`)",
		"an empty list from the wrong socket looks like a server without sessions; the hint says which socket was asked and why it may be the wrong one. The first block stays what the reference returns"},
	{"confirm-kill", "kill_server, kill_session, kill_window, kill_pane (and a batch holding one) called by a client that declares MCP elicitation",
		"run at once",
		"run only once the person accepts a question (elicitation) naming the session, its windows, the panes and the programs in them; declined, dismissed or unanswered within the wait ceiling: error `ConfirmationDeclined`, nothing killed. `TMUX_MCP_CONFIRM` sets which calls ask (destructive, mutating, off); clients without elicitation are not asked unless it is set",
		"the agent picked the target; the person sees what it is before it is gone (issue 23). See \"Confirmation\" below"},
	{"kill-server-absent", "kill_server when no server runs on the socket", "success: \"Server killed successfully\"",
		"an error saying no server runs there, with a hint to list_servers", "a success claim for a server that was never there hides a wrong socket"},
	{"owner-mark", "a session create_session makes", "no options of its own",
		"the session user option `@tmux-mcp-owner`: the caller's identity (`stdio`, the token's name, `oauth:SUBJECT`)",
		"scope `own` finds the caller's sessions by it, on any server and after a restart (see Scope below)"},
	{"inf-nan", "a number argument given as \"inf\" or \"nan\"", "accepted by validation, then refused by the tool (or printed as \"within nans\")",
		"refused by validation", "JSON has no such number; an error either way"},
}

// str returns *p or "" for nil.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
