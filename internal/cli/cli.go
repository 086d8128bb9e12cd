// Package cli is the command line of tmux-mcp: flags and environment into a
// configuration, and the subcommands (serve, call, tools, doctor). It is a
// package rather than code in main so tests can run every subcommand
// in-process.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/audit"
	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/stdio"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Set at build time by the release build (.goreleaser.yaml):
//
//	-ldflags "-X github.com/tmux-mcp/tmux-mcp/internal/cli.version=v1.2.3 -X ...cli.commit=<sha> -X ...cli.date=<RFC 3339>"
//
// A plain `go build` or `go install` leaves them empty, and the build info
// the Go toolchain embeds (module version, VCS revision and time) is used.
var version, commit, date string

// Version is the version a user or an MCP client sees (serverInfo.version):
// the stamped one, else the module version (`go install …@v1.2.3`, or the
// pseudo-version Go derives from VCS), else "dev" plus the VCS revision.
// It is a bare "dev" only when the binary carries nothing better.
func Version() string {
	bi, _ := debug.ReadBuildInfo()
	v, _ := describe(version, commit, date, bi)
	return v
}

// versionLine is what --version prints: the version and, when known, the
// commit, the build time and the Go release that built it.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo()
	v, detail := describe(version, commit, date, bi)
	if detail != "" {
		return "tmux-mcp " + v + " (" + detail + ")"
	}
	return "tmux-mcp " + v
}

// describe computes Version and versionLine's detail from the stamped
// values and the build info (nil when the binary has none).
func describe(stamped, stampedCommit, stampedDate string, bi *debug.BuildInfo) (string, string) {
	var rev, at string
	dirty := false
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if stampedCommit != "" {
		rev, dirty = stampedCommit, false
	}
	if stampedDate != "" {
		at = stampedDate
	}
	suffix := ""
	if dirty {
		suffix = "+dirty"
	}
	v := stamped
	if v == "" && bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "dev"
		if rev != "" {
			v += "-" + rev[:min(12, len(rev))] + suffix
		}
	}
	if rev != "" {
		rev += suffix
	}
	var detail []string
	if rev != "" {
		detail = append(detail, "commit "+rev)
	}
	if at != "" {
		detail = append(detail, "built "+at)
	}
	if bi != nil && bi.GoVersion != "" {
		detail = append(detail, bi.GoVersion)
	}
	return v, strings.Join(detail, ", ")
}

const usage = `tmux-mcp: a Model Context Protocol server for tmux.

Usage:
  tmux-mcp [flags]                     serve MCP over stdio (what MCP clients launch)
  tmux-mcp [flags] call TOOL ['JSON']  run one tool in-process and print its result as JSON
  tmux-mcp [flags] tools               list the tools visible at the configured tier
  tmux-mcp [flags] doctor              check tmux, the socket, the caller and the configuration
  tmux-mcp docs [--check]              regenerate docs/tools.md and the README tool table (run at the repo root)
  tmux-mcp --version | --help

Register with a client, for example Claude Code:
  claude mcp add tmux -- tmux-mcp

Flags (each overrides its environment variable):
`

// Main runs the command line and returns the exit status.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv config.Getenv) int {
	cfg, warns, err := config.FromEnv(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "tmux-mcp:", err)
		return 2
	}
	fs := flag.NewFlagSet("tmux-mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		showVersion bool
		safety      string
		waitMax     string
		suppress    string
		toolsets    string
	)
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	fs.StringVar(&cfg.SocketName, "socket", cfg.SocketName, "tmux socket name, tmux -L (TMUX_MCP_SOCKET)")
	fs.StringVar(&cfg.SocketPath, "socket-path", cfg.SocketPath, "tmux socket path, tmux -S (TMUX_MCP_SOCKET_PATH)")
	fs.StringVar(&cfg.TmuxBin, "tmux-bin", cfg.TmuxBin, "tmux binary (TMUX_MCP_TMUX_BIN)")
	fs.StringVar(&safety, "safety", "", "safety tier: readonly, mutating or destructive (TMUX_MCP_SAFETY)")
	fs.StringVar(&waitMax, "wait-max-seconds", "", "ceiling for waits, 1 to 120 (TMUX_MCP_WAIT_MAX_SECONDS)")
	fs.StringVar(&suppress, "suppress-history", "", "default of run_command's suppress_history: 0 or 1 (TMUX_MCP_SUPPRESS_HISTORY)")
	fs.StringVar(&cfg.AuditLog, "audit-log", cfg.AuditLog, "append the audit log to this file (TMUX_MCP_AUDIT_LOG)")
	fs.StringVar(&toolsets, "toolsets", "", "comma-separated toolsets to expose, default all (TMUX_MCP_TOOLSETS)")
	fs.StringVar(&cfg.Engine, "engine", cfg.Engine, "how to reach tmux: control (one persistent control-mode client per server) or exec (a tmux process per call) (TMUX_MCP_ENGINE)")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if showVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if safety != "" {
		var w config.Warning
		if cfg.Safety, w = config.ParseSafety(safety, "--safety"); w != "" {
			warns = append(warns, w)
		}
	}
	if waitMax != "" {
		f, w := config.ParseWaitMax(waitMax, "--wait-max-seconds")
		cfg.WaitMax = f
		if w != "" {
			warns = append(warns, w)
		}
	}
	if suppress != "" {
		var err error
		if cfg.SuppressHistory, err = config.ParseSwitch(suppress, "--suppress-history"); err != nil {
			fmt.Fprintln(stderr, "tmux-mcp:", err)
			return 2
		}
	}
	if toolsets != "" {
		cfg.Toolsets = config.SplitList(toolsets)
	}
	if engine, w := config.ParseEngine(cfg.Engine, "--engine"); w != "" {
		cfg.Engine = engine
		warns = append(warns, w)
	}
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "socket":
			cfg.SocketNameFrom = "--socket"
		case "socket-path":
			cfg.SocketPathFrom = "--socket-path"
		}
	})
	if err := cfg.CheckSocket(); err != nil {
		fmt.Fprintln(stderr, "tmux-mcp:", err)
		return 2
	}

	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, w := range warns {
		logger.Warn(string(w))
	}
	server.Version = Version()
	auditLog := audit.New(stderr)
	if cfg.AuditLog != "" {
		if auditLog, err = audit.Open(cfg.AuditLog); err != nil {
			fmt.Fprintln(stderr, "tmux-mcp:", err)
			return 2
		}
		defer auditLog.Close()
	}
	srv, err := server.New(cfg, server.Options{Logger: logger, Audit: auditLog})
	if err != nil {
		fmt.Fprintln(stderr, "tmux-mcp:", err)
		return 2
	}

	// Buffers this process created are deleted however serving ends: end of
	// input, SIGTERM or SIGINT (a SIGKILLed process's buffers are reclaimed
	// by the next server that uses buffers on that tmux server).
	cleanup := func(budget time.Duration) {
		cctx, cancel := context.WithTimeout(context.Background(), budget)
		defer cancel()
		if err := srv.Close(cctx); err != nil {
			logger.Warn("cleaning up buffers", "error", err)
		}
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "serve" {
		defer cleanup(cleanupBudget)
		return serve(ctx, srv, stdin, stdout, logger)
	}
	switch rest[0] {
	case "call":
		defer cleanup(5 * time.Second)
		return call(ctx, srv, rest[1:], stdout, stderr)
	case "tools":
		if len(rest) > 1 && rest[1] == "--stats" {
			return toolStats(ctx, srv, stdout)
		}
		return listTools(srv, stdout)
	case "doctor":
		return doctor(ctx, cfg, stdout)
	case "docs":
		return docs(".", len(rest) > 1 && rest[1] == "--check", stdout, stderr)
	case "help":
		fs.Usage()
		return 0
	}
	fmt.Fprintf(stderr, "tmux-mcp: unknown subcommand %q\n", rest[0])
	fs.Usage()
	return 2
}

// serve speaks MCP on stdin/stdout until the client closes stdin or a
// signal arrives. Either way every call in flight is cancelled at once
// (waits answer with what they have), the answers to every request already
// read are written, and serve returns within stopBudget.
func serve(ctx context.Context, srv *server.Server, stdin io.Reader, stdout io.Writer, logger *slog.Logger) int {
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		logger.Info("tmux-mcp speaks MCP on stdin/stdout; an MCP client should start it. Try `tmux-mcp doctor` or `tmux-mcp --help`.")
	}
	fr := stdio.New(stdin, stdout)
	fr.Log = logger
	// The session is not tied to ctx: a signal must first let the calls in
	// flight answer while the transport is still open.
	runCtx, endRun := context.WithCancel(context.WithoutCancel(ctx))
	defer endRun()
	ended := make(chan error, 1)
	go func() { ended <- srv.MCP().Run(runCtx, &mcp.IOTransport{Reader: fr, Writer: fr}) }()

	var err error
	select {
	case err = <-ended: // the SDK ended the session itself (stdout broken)
		srv.Shutdown()
		fr.ReleaseEOF()
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "closed") {
			logger.Error("server stopped", "error", err)
			return 1
		}
		return 0
	case <-ctx.Done():
		logger.Info("signal received: stopping")
	case <-fr.InputClosed():
	}
	signalled := ctx.Err() != nil
	stopAt := time.Now().Add(stopBudget)
	srv.Shutdown()
	actx, cancel := context.WithTimeout(context.Background(), answerBudget)
	defer cancel()
	if !fr.WaitAnswered(actx) {
		logger.Warn("exiting with requests unanswered", "pending", fr.Pending())
	}
	fr.ReleaseEOF() // end of input: the SDK ends the session
	if signalled {
		endRun() // stdin may still be open: Run closes the session
	}
	select {
	case <-ended:
	case <-time.After(time.Until(stopAt) - cleanupBudget):
		logger.Warn("the MCP session did not end in time")
	}
	return 0
}

// The exit bound after SIGTERM, SIGINT or end of input: clients kill a
// server that lingers for a few seconds. Calls in flight get answerBudget to
// answer (a wait ends at once; a tmux round trip rarely takes 100 ms), and
// releasing tmux resources (buffers, watchers) gets cleanupBudget.
const (
	stopBudget    = 1800 * time.Millisecond
	answerBudget  = 1000 * time.Millisecond
	cleanupBudget = 500 * time.Millisecond
)

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// call runs one tool and prints its result; a tool error exits 1.
func call(ctx context.Context, srv *server.Server, args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || len(args) > 2 {
		fmt.Fprintln(stderr, "usage: tmux-mcp call TOOL ['{\"json\":\"arguments\"}']")
		return 2
	}
	raw := json.RawMessage("{}")
	if len(args) == 2 {
		if !json.Valid([]byte(args[1])) {
			fmt.Fprintln(stderr, "tmux-mcp: the arguments are not valid JSON")
			return 2
		}
		raw = json.RawMessage(args[1])
	}
	ctx, cancel := context.WithTimeout(ctx, 150*time.Second)
	defer cancel()
	res, err := srv.CallTool(ctx, args[0], raw)
	if err != nil {
		fmt.Fprintln(stderr, "tmux-mcp:", err)
		return 1
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(res)
	if res.IsError {
		return 1
	}
	return 0
}

func listTools(srv *server.Server, stdout io.Writer) int {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TOOL\tTIER\tTOOLSET\tPURPOSE\n")
	for _, t := range srv.Visible() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, t.Tier, t.Toolset, oneLine(server.FirstSentence(t.Description)))
	}
	_ = tw.Flush()
	fmt.Fprintf(stdout, "\n%d tools visible at the %s tier.\n", len(srv.Visible()), srv.Config().Safety)
	return 0
}

// toolStats prints the byte size of tools/list as a client receives it,
// in total and per toolset: the context an agent spends on our tools.
func toolStats(ctx context.Context, srv *server.Server, stdout io.Writer) int {
	total, per, err := srv.ToolListSizes(ctx)
	if err != nil {
		fmt.Fprintln(stdout, "tmux-mcp:", err)
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TOOLSET\tTOOLS\tBYTES (tools/list with only this toolset)\n")
	names := make([]string, 0, len(per))
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", n, per[n][0], per[n][1])
	}
	_ = tw.Flush()
	fmt.Fprintf(stdout, "\ntools/list at the %s tier: %d tools, %d bytes (%.1f KB)\n", srv.Config().Safety, len(srv.Visible()), total, float64(total)/1024)
	parts, err := srv.ToolListBreakdown()
	if err != nil {
		fmt.Fprintln(stdout, "tmux-mcp:", err)
		return 1
	}
	kb := func(n int) string { return fmt.Sprintf("%d\t(%.1f KB)", n, float64(n)/1024) }
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nPART\tBYTES\n")
	fmt.Fprintf(tw, "names and titles\t%s\n", kb(parts.Names))
	fmt.Fprintf(tw, "descriptions\t%s\n", kb(parts.Descriptions))
	fmt.Fprintf(tw, "input schemas\t%s\n", kb(parts.InputSchemas))
	fmt.Fprintf(tw, "  of which argument descriptions\t%s\n", kb(parts.ParamDescs))
	fmt.Fprintf(tw, "output schemas\t%s\n", kb(parts.OutputSchema))
	fmt.Fprintf(tw, "annotations and _meta\t%s\n", kb(parts.Annotations))
	fmt.Fprintf(tw, "what a model reads (name, description, inputSchema)\t%s\n", kb(parts.ModelFacing))
	_ = tw.Flush()
	return 0
}

// oneLine keeps a purpose to one terminal line.
func oneLine(s string) string {
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// doctor reports what a person needs to know to get the server working.
func doctor(ctx context.Context, cfg config.Config, stdout io.Writer) int {
	ok := true
	say := func(label, format string, args ...any) {
		fmt.Fprintf(stdout, "%-16s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(stdout, "tmux-mcp %s\n\n", Version())
	bin, err := exec.LookPath(cfg.TmuxBin)
	if err != nil {
		say("tmux", "NOT FOUND (%s): install tmux 3.2 or newer, or set TMUX_MCP_TMUX_BIN", cfg.TmuxBin)
		return 1
	}
	out, err := exec.CommandContext(ctx, bin, "-V").Output()
	ver := strings.TrimSpace(string(out))
	if err != nil {
		say("tmux", "%s does not run: %v", bin, err)
		return 1
	}
	if tooOld(ver) {
		say("tmux", "%s (%s): too old, tmux-mcp needs tmux 3.2 or newer", ver, bin)
		ok = false
	} else {
		say("tmux", "%s (%s)", ver, bin)
	}
	sock := tmux.Socket{Name: cfg.SocketName, Path: cfg.SocketPath}
	switch {
	case cfg.SocketPath != "":
		say("socket", "path %s (TMUX_MCP_SOCKET_PATH)", cfg.SocketPath)
	case cfg.SocketName != "":
		say("socket", "name %s, i.e. %s (TMUX_MCP_SOCKET)", cfg.SocketName, filepath.Join(cfg.SocketDir(), cfg.SocketName))
	case cfg.Caller.SocketPath != "":
		say("socket", "tmux's default, which inside tmux is the caller's server: %s", cfg.Caller.SocketPath)
	default:
		say("socket", "tmux's default: %s", filepath.Join(cfg.SocketDir(), "default"))
	}
	cl := tmux.NewExecClient(bin)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := cl.Rows(cctx, sock, tmux.Command{"list-sessions"}, []string{"session_name", "pid"})
	switch {
	case err == nil:
		pid := ""
		if len(rows) > 0 {
			pid = rows[0]["pid"]
		}
		say("server", "running (pid %s), %d session(s)", pid, len(rows))
	case errors.Is(err, tmux.ErrNoServer):
		say("server", "not running on this socket (tools that create sessions will start one)")
	default:
		say("server", "error: %v", err)
	}
	if cfg.Caller.InTmux() {
		say("caller", "inside tmux: pane %s, socket %s", orDash(cfg.Caller.PaneID), orDash(cfg.Caller.SocketPath))
	} else {
		say("caller", "not inside tmux (TMUX and TMUX_PANE unset)")
	}
	say("engine", "%s", cfg.Engine)
	say("safety", "%s", cfg.Safety)
	say("wait ceiling", "%gs", cfg.WaitMax)
	say("history", "run_command suppresses shell history by default: %v", cfg.SuppressHistory)
	if cfg.AuditLog != "" {
		say("audit log", "%s", cfg.AuditLog)
	} else {
		say("audit log", "stderr")
	}
	if len(cfg.Toolsets) > 0 {
		say("toolsets", "%s", strings.Join(cfg.Toolsets, ","))
	} else {
		say("toolsets", "all")
	}
	self, _ := os.Executable()
	fmt.Fprintf(stdout, "\nRegister it with a client, for example:\n  claude mcp add tmux -- %s\n  codex mcp add tmux -- %s\n", self, self)
	if !ok {
		return 1
	}
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// tooOld reports a tmux older than 3.2 ("tmux 3.1c", "tmux next-3.4" is new).
func tooOld(v string) bool {
	f := strings.Fields(v)
	if len(f) < 2 {
		return true
	}
	num := strings.TrimPrefix(f[1], "next-")
	end := 0
	for end < len(num) && (num[end] == '.' || num[end] >= '0' && num[end] <= '9') {
		end++
	}
	major, minor, _ := strings.Cut(num[:end], ".")
	ma, err1 := strconv.Atoi(major)
	mi, _ := strconv.Atoi(minor)
	if err1 != nil {
		return false // "tmux master" and the like: assume new
	}
	return ma < 3 || ma == 3 && mi < 2
}
