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
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// The collector settings the shipped binary runs with, unless the user
// sets GOGC or GOMEMLIMIT (see ApplyGCSettings).
const (
	gcPercent   = 400
	memoryLimit = 12 << 20
)

// ApplyGCSettings tunes the Go collector for the way the server allocates:
// a small live heap (a few MB) and a lot of short-lived garbage per call,
// most of it the Go SDK's JSON decoding (a fresh 32 KB decoder buffer per
// message, see docs/sdk-json-allocations.md). At the runtime's default GC
// percent (100) that garbage starts a collection every few calls and the
// collector takes a fifth of the CPU; at 400 it runs far less often.
// The memory limit is the soft cap that keeps the resident set bounded in
// spite of that (without it the heap goal drifts to five times the live
// heap and the server sits near 29 MB). It was 14 MiB until the binary
// grew (the pane image renderer, its fonts, the metrics library: 1.75 MB,
// ~0.8 MB more of it resident) and the server sat at 21-21.4 MB after
// 2,000 calls; at 12 MiB it sits at 19.4 MB, for one collection per ~43
// get_pane_info calls instead of ~64 (5-10% more CPU per call in
// BenchmarkFloorGetPaneInfo; at 11 MiB one per ~30). When the heap nears
// the limit the collector runs early and the scavenger returns freed pages
// to the OS. It is soft, so a large capture can still exceed it (the
// collector then runs as it must, within the runtime's own CPU cap) rather
// than fail. A user's GOGC or GOMEMLIMIT
// wins: each setting is only applied when its variable is unset.
func ApplyGCSettings(getenv config.Getenv) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// httpMemoryLimit is the soft memory limit of serve --http. One daemon
// for many clients holds each client's connections, sessions and event
// store (about 39 MB in all with 50 clients, only ~5 MB of it heap), so the
// stdio limit (12 MiB) is always exceeded there and the collector never
// stops: the HTTP load test measured a third of the CPU in GC and 3x fewer
// calls per second than with 64 MiB, which was as fast as no limit.
const httpMemoryLimit = 64 << 20

// applyHTTPMemoryLimit raises the memory limit for serve --http unless the
// user set GOMEMLIMIT.
func applyHTTPMemoryLimit(getenv config.Getenv) {
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(httpMemoryLimit)
	}
}

// setServerVersion sets server.Version once per process: tests run Main
// side by side, and a second write (even of the same value) would race with
// servers already reading it.
var setServerVersion sync.Once

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

const usageHead = `tmux-mcp: a Model Context Protocol server for tmux.

Usage:
  tmux-mcp [flags] [serve]                         serve MCP over stdio (what MCP clients launch)
  tmux-mcp [flags] call [--raw] [--audit] TOOL ['JSON']
                                                   run one tool in-process and print its structured result
                                                   (or its text); --raw, and any tool error, print the
                                                   whole MCP result; --audit writes the audit line to stderr
  tmux-mcp [flags] tools [--stats]                 list the tools visible at the configured tier;
                                                   --stats prints the size of tools/list
  tmux-mcp [flags] doctor                          check tmux, the socket, the caller and the configuration
  tmux-mcp docs [--check]                          regenerate docs/tools.md and the README tool table
                                                   (run at the repo root); --check only verifies them
  tmux-mcp completion bash|zsh|fish                print a shell completion script
  tmux-mcp man                                     print the manual page (roff)
  tmux-mcp --version | --help

Register with a client, for example Claude Code:
  claude mcp add tmux -- tmux-mcp

Serve many clients over streamable HTTP (bearer tokens required; the token
comes from TMUX_MCP_HTTP_TOKEN, --tokens-file, or a file generated at first
start, whose path is logged and shown by doctor):
  tmux-mcp serve --http 127.0.0.1:8765

Flags come before the subcommand (serve also takes them after it). Each overrides
its environment variable; the reference server's LIBTMUX_* name is read when
ours is unset.

`

// printHelp writes the help: usage, then every flag with its default and
// its variables, from config.Settings.
func printHelp(w io.Writer) {
	fmt.Fprint(w, usageHead)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, st := range config.Settings {
		arg := " VALUE"
		if st.Bool {
			arg = ""
		}
		usage := st.Usage
		if st.Flag == "toolsets" {
			usage += ": " + strings.Join(server.Toolsets, ", ")
		}
		vars := st.Env
		if st.Ref != "" {
			vars += ", else " + st.Ref
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", st.Flag, arg, usage)
		fmt.Fprintf(tw, "  \tdefault: %s; environment: %s\n", st.Default, vars)
	}
	fmt.Fprintf(tw, "  --version\tprint the version and exit\n")
	fmt.Fprintf(tw, "  -h, --help\tprint this help and exit\n")
	_ = tw.Flush()
}

// switchFlag is a flag.Value for a 0/1 setting that, like a bool flag,
// may be given alone (--prompts-as-tools means 1).
type switchFlag struct{ v *string }

func (f switchFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

// Set maps the bool spellings to 0/1 and keeps anything else for
// config.Load to refuse by name (the flag package's own error would echo
// the value).
func (f switchFlag) Set(s string) error {
	switch s {
	case "true":
		s = "1"
	case "false":
		s = "0"
	}
	*f.v = s
	return nil
}

func (switchFlag) IsBoolFlag() bool { return true }

// errUsage marks a command line that is wrong: exit status 2.
var errUsage = errors.New("usage")

// command is a parsed command line: the subcommand and its own arguments.
type command struct {
	name  string // a subcommand's name (commands.go)
	args  []string
	raw   bool // call --raw
	audit bool // call --audit
	stats bool // tools --stats
	check bool // docs --check
	// settings given after serve (serve --http ADDR ...), keyed like
	// config.Setting.Flag; they win over the same flags before serve.
	settings map[string]string
}

// parseCommand reads the subcommand and its flags. Unknown flags, extra
// positional arguments and missing ones are usage errors; -h/--help
// returns flag.ErrHelp.
func parseCommand(rest []string) (command, error) {
	cmd := command{name: subcommands[0].name}
	if len(rest) > 0 {
		cmd.name, rest = rest[0], rest[1:]
	}
	sc, ok := lookupSubcommand(cmd.name)
	if !ok {
		return cmd, fmt.Errorf("%w: unknown subcommand %q", errUsage, cmd.name)
	}
	minArgs, maxArgs := sc.minArgs, sc.maxArgs
	// Every setting may follow serve, as PRODUCT.md writes it:
	// tmux-mcp serve --http 127.0.0.1:8765.
	fs, serveValues := subcommandFlags(sc, &cmd)
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cmd, err
		}
		return cmd, fmt.Errorf("%w: %s: %w", errUsage, cmd.name, err)
	}
	cmd.args = fs.Args()
	fs.Visit(func(f *flag.Flag) {
		if v, ok := serveValues[f.Name]; ok {
			if cmd.settings == nil {
				cmd.settings = map[string]string{}
			}
			cmd.settings[f.Name] = *v
		}
	})
	switch {
	case len(cmd.args) > maxArgs && maxArgs == 0:
		return cmd, fmt.Errorf("%w: %s takes no arguments, got %d", errUsage, cmd.name, len(cmd.args))
	case len(cmd.args) > maxArgs:
		return cmd, fmt.Errorf("%w: %s takes at most %d arguments, got %d", errUsage, cmd.name, maxArgs, len(cmd.args))
	case len(cmd.args) < minArgs && cmd.name == "call":
		return cmd, fmt.Errorf("%w: %s needs a tool name: tmux-mcp call [--raw] [--audit] TOOL ['JSON']", errUsage, cmd.name)
	case len(cmd.args) < minArgs:
		return cmd, fmt.Errorf("%w: %s needs an argument: tmux-mcp %s %s", errUsage, cmd.name, cmd.name, sc.args)
	}
	if cmd.name == "completion" && !slices.Contains(completionShells, cmd.args[0]) {
		return cmd, fmt.Errorf("%w: completion: no script for %q (shells: %s)", errUsage, cmd.args[0], strings.Join(completionShells, ", "))
	}
	if cmd.name == "call" && len(cmd.args) == 2 && !json.Valid([]byte(cmd.args[1])) {
		return cmd, fmt.Errorf("%w: call: the arguments are not valid JSON", errUsage)
	}
	return cmd, nil
}

// newLogger is the one writer of stderr for a run, in one format: JSON when
// the run serves MCP or writes audit lines (themselves JSON) to stderr, so
// a log collector reads every line; text without timestamps otherwise, for
// a person at a terminal.
func newLogger(stderr io.Writer, asJSON bool) *slog.Logger {
	if asJSON {
		return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}

// logErrors logs each error of a joined error on its own line.
func logErrors(logger *slog.Logger, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		logger.Error(line)
	}
}

// Main runs the command line and returns the exit status: 0, 1 when the
// work failed (a tool error, a doctor finding), 2 for a usage error or an
// invalid configuration.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv config.Getenv) int {
	fs, values, showVersion := globalFlags()
	usageError := func(err error) int {
		newLogger(stderr, false).Error(strings.TrimPrefix(err.Error(), "usage: "), "help", "tmux-mcp --help")
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout)
			return 0
		}
		return usageError(err)
	}
	if *showVersion {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	cmd, err := parseCommand(fs.Args())
	if errors.Is(err, flag.ErrHelp) || err == nil && cmd.name == "help" {
		printHelp(stdout)
		return 0
	}
	if err != nil {
		return usageError(err)
	}
	// Neither needs the configuration: they print what the binary is.
	switch cmd.name {
	case "completion":
		return printCompletion(stdout, cmd.args[0], stderr)
	case "man":
		return printMan(stdout, stderr)
	}
	flags := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if v, ok := values[f.Name]; ok {
			flags[f.Name] = *v
		}
	})
	for k, v := range cmd.settings {
		flags[k] = v
	}
	cfg, warns, err := config.Load(getenv, flags)
	auditToStderr := cfg.AuditLog == "" && (cmd.name == "serve" || cmd.name == "call" && cmd.audit)
	logger := newLogger(stderr, cmd.name == "serve" || auditToStderr)
	for _, w := range warns {
		logger.Warn(string(w))
	}
	if err == nil {
		err = errors.Join(cfg.CheckToolsets(server.Toolsets), cfg.CheckSocket())
	}
	if err != nil {
		logErrors(logger, err)
		return 2
	}
	if cmd.name == "docs" {
		return docs(".", cmd.check, stdout, logger)
	}

	setServerVersion.Do(func() { server.Version = Version() })
	var auditLog *audit.Logger
	switch {
	case cfg.AuditLog != "":
		if auditLog, err = audit.Open(cfg.AuditLog); err != nil {
			logger.Error(err.Error())
			return 2
		}
		defer auditLog.Close()
	case auditToStderr:
		auditLog = audit.New(stderr)
	default:
		auditLog = audit.New(io.Discard)
	}
	srv, err := server.New(cfg, server.Options{Logger: logger, Audit: auditLog})
	if err != nil {
		logger.Error(err.Error())
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
	switch cmd.name {
	case "call":
		defer cleanup(5 * time.Second)
		return call(ctx, srv, cmd, stdout, logger)
	case "tools":
		if cmd.stats {
			return toolStats(ctx, srv, stdout, logger)
		}
		return listTools(srv, stdout)
	case "doctor":
		return doctor(ctx, cfg, stdout)
	}
	defer cleanup(cleanupBudget)
	stopDump := dumpOnSignal(logger)
	defer stopDump()
	if cfg.HTTP.Addr != "" {
		applyHTTPMemoryLimit(getenv)
		return serveHTTP(ctx, srv, cfg, logger)
	}
	if cfg.HTTP.Metrics != "" {
		logger.Error(cfg.From["metrics"] + " is set, but metrics are served by the HTTP daemon only (serve --http): a stdio server is started by its client, often several at once, which would contend for the one metrics address and each count only its own client")
		return 2
	}
	return serve(ctx, srv, stdin, stdout, getenv, logger)
}

// serve speaks MCP on stdin/stdout until the client closes stdin or a
// signal arrives. Either way every call in flight is cancelled at once
// (waits answer with what they have), the answers to every request already
// read are written, and serve returns within stopBudget.
func serve(ctx context.Context, srv *server.Server, stdin io.Reader, stdout io.Writer, getenv config.Getenv, logger *slog.Logger) int {
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		logger.Info("tmux-mcp speaks MCP on stdin/stdout; an MCP client should start it. Try `tmux-mcp doctor` or `tmux-mcp --help`.")
	}
	stdin, stdout, restoreStdio := processStdio(stdin, stdout, getenv, logger)
	defer restoreStdio()
	fr := stdio.New(stdin, stdout)
	fr.Log = logger
	srv.SetSplicer(fr.Splice)
	// The session is not tied to ctx: a signal must first let the calls in
	// flight answer while the transport is still open.
	runCtx, endRun := context.WithCancel(context.WithoutCancel(ctx))
	defer endRun()
	ended := make(chan error, 1)
	go func() { ended <- srv.MCP().Run(runCtx, fr) }()

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

// call runs one tool and prints its structured result as JSON, or its
// text when it has none (--raw: the whole MCP result). A tool error prints
// the whole result, since its type and suggestion live in _meta, and exits 1.
func call(ctx context.Context, srv *server.Server, cmd command, stdout io.Writer, logger *slog.Logger) int {
	raw := json.RawMessage("{}")
	if len(cmd.args) == 2 {
		raw = json.RawMessage(cmd.args[1])
	}
	ctx, cancel := context.WithTimeout(ctx, 150*time.Second)
	defer cancel()
	res, err := srv.CallTool(ctx, cmd.args[0], raw)
	if err != nil {
		logger.Error(err.Error())
		return 1
	}
	writeResult(stdout, res, cmd.raw || res.IsError)
	if res.IsError {
		return 1
	}
	return 0
}

// writeResult prints what a person running one tool wants to read.
func writeResult(w io.Writer, res *mcp.CallToolResult, raw bool) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	switch {
	case raw:
		_ = enc.Encode(res)
	case res.StructuredContent != nil:
		_ = enc.Encode(res.StructuredContent)
	default:
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				fmt.Fprintln(w, t.Text)
			}
		}
	}
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
func toolStats(ctx context.Context, srv *server.Server, stdout io.Writer, logger *slog.Logger) int {
	total, per, err := srv.ToolListSizes(ctx)
	if err != nil {
		logger.Error(err.Error())
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
		logger.Error(err.Error())
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
	fmt.Fprintf(tw, "what a model reads (name, description, inputSchema)\t%s\t%.2fx the reference\n", kb(parts.ModelFacing), server.ReferenceRatio(parts.ModelFacing))
	fmt.Fprintf(tw, "  projected with a host argument on every tool\t%s\t%.2fx the reference (budget %.2fx)\n",
		kb(parts.ModelFacingWithHost), server.ReferenceRatio(parts.ModelFacingWithHost), server.ModelFacingBudget)
	_ = tw.Flush()
	fmt.Fprintf(stdout, "\nThe reference figure is %d bytes: name, description and inputSchema of the 56 tools of libtmux-mcp\n"+
		"0.1.0a20 at the destructive tier, measured the same way (internal/server/testdata/reference/tools.json).\n",
		server.ReferenceModelFacingBytes)
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
		say("tmux", "%s (%s, from %s)", ver, bin, cfg.From["tmux-bin"])
		if attachCrashes(ver) {
			say("note", "tmux before 3.7 can crash when a control client attaches while another client changes sessions or detaches (tmux PR 4980); tmux-mcp keeps its own attaches apart from its own commands, not from yours: 3.7 or newer is safer")
		}
	}
	sock := tmux.Socket{Name: cfg.SocketName, Path: cfg.SocketPath}
	switch {
	case cfg.SocketPath != "":
		say("socket", "path %s (from %s)", cfg.SocketPath, cfg.SocketPathSource())
	case cfg.SocketName != "":
		say("socket", "name %s, i.e. %s (from %s)", cfg.SocketName, filepath.Join(cfg.SocketDir(), cfg.SocketName), cfg.SocketNameSource())
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
	from := func(flag string) string { return " (from " + orDash(cfg.From[flag]) + ")" }
	say("engine", "%s%s", cfg.Engine, from("engine"))
	say("safety", "%s%s", cfg.Safety, from("safety"))
	say("wait ceiling", "%gs%s", cfg.WaitMax, from("wait-max-seconds"))
	say("history", "run_command suppresses shell history by default: %v%s", cfg.SuppressHistory, from("suppress-history"))
	if cfg.AuditLog != "" {
		say("audit log", "%s%s", cfg.AuditLog, from("audit-log"))
	} else {
		say("audit log", "stderr%s", from("audit-log"))
	}
	if len(cfg.Toolsets) > 0 {
		say("toolsets", "%s%s", strings.Join(cfg.Toolsets, ","), from("toolsets"))
	} else {
		say("toolsets", "all%s", from("toolsets"))
	}
	say("prompt tools", "%v%s", cfg.PromptsAsTools, from("prompts-as-tools"))
	switch cfg.Scope {
	case "", "none":
		say("scope", "none: every session is in reach%s", from("scope"))
	default:
		say("scope", "%s, as identity %s on a stdio server (a guard against mistakes, not a sandbox)%s", cfg.Scope, server.StdioIdentity, from("scope"))
	}
	say("confirmation", "%s%s", cfg.ConfirmSummary(), from("confirm"))
	doctorHTTP(ctx, cfg, say)
	if !doctorHosts(ctx, cfg, say) {
		ok = false
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
func tooOld(v string) bool { return below(v, 3, 2) }

// attachCrashes reports a tmux that can crash when a control client is
// notified while it attaches (tmux PR 4980, fixed in 3.7). tmux-mcp keeps
// its own attaches apart from its own commands (internal/tmux attachGate);
// what other clients do at that moment it cannot hold back.
func attachCrashes(v string) bool { return below(v, 3, 7) }

// below reports whether the "tmux -V" line v names a version before
// major.minor; a line it cannot read counts as old, "tmux master" and the
// like as new.
func below(v string, major, minor int) bool {
	f := strings.Fields(v)
	if len(f) < 2 {
		return true
	}
	num := strings.TrimPrefix(f[1], "next-")
	end := 0
	for end < len(num) && (num[end] == '.' || num[end] >= '0' && num[end] <= '9') {
		end++
	}
	maj, mi, _ := strings.Cut(num[:end], ".")
	ma, err1 := strconv.Atoi(maj)
	mn, _ := strconv.Atoi(mi)
	if err1 != nil {
		return false
	}
	return ma < major || ma == major && mn < minor
}
