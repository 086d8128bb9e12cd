package cli

import (
	"flag"
	"io"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
)

// subcommand is one subcommand of the command line. The table below is
// the one list that parsing, help, the man page and the shell completion
// scripts follow, so a subcommand or a flag added here reaches all of them.
type subcommand struct {
	name    string
	args    string // its positional arguments as a synopsis shows them, e.g. "TOOL ['JSON']"
	summary string // one line, for the man page and the completion scripts
	// minArgs and maxArgs bound its positional arguments.
	minArgs, maxArgs int
	// settings: every configuration setting may follow it as a flag
	// (tmux-mcp serve --http ADDR), not only precede it.
	settings bool
	// flags defines its own flags on fs, storing them in cmd; nil: none.
	flags func(fs *flag.FlagSet, cmd *command)
	// complete is what its first positional argument is, for completion:
	// completeTool, completeShell, or "" for nothing to offer.
	complete string
}

// What a subcommand's first positional argument completes to.
const (
	completeTool  = "tool"
	completeShell = "shell"
)

// subcommands lists every subcommand, in the order help and the man page
// show them. The first is the default (no subcommand given).
var subcommands = []subcommand{
	{name: "serve", settings: true,
		summary: "serve MCP over stdio (what MCP clients launch), or streamable HTTP with --http"},
	{name: "call", args: "TOOL ['JSON']", minArgs: 1, maxArgs: 2, complete: completeTool,
		summary: "run one tool in-process and print its structured result (or its text)",
		flags: func(fs *flag.FlagSet, cmd *command) {
			fs.BoolVar(&cmd.raw, "raw", false, "print the whole MCP result")
			fs.BoolVar(&cmd.audit, "audit", false, "write the call's audit line to stderr")
		}},
	{name: "tools",
		summary: "list the tools visible at the configured tier",
		flags: func(fs *flag.FlagSet, cmd *command) {
			fs.BoolVar(&cmd.stats, "stats", false, "print the size of tools/list, per toolset and per part")
		}},
	{name: "doctor",
		summary: "check tmux, the socket, the caller and the configuration"},
	{name: "docs",
		summary: "regenerate docs/tools.md and the README tool table (run at the repository root)",
		flags: func(fs *flag.FlagSet, cmd *command) {
			fs.BoolVar(&cmd.check, "check", false, "only verify that they are current")
		}},
	{name: "completion", args: "bash|zsh|fish", minArgs: 1, maxArgs: 1, complete: completeShell,
		summary: "print a shell completion script for bash, zsh or fish"},
	{name: "man",
		summary: "print the manual page (roff), as the release archives carry it in tmux-mcp.1"},
	{name: "help",
		summary: "print the help"},
}

// completionShells are the shells `completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

// lookupSubcommand returns the subcommand called name.
func lookupSubcommand(name string) (subcommand, bool) {
	for _, sc := range subcommands {
		if sc.name == name {
			return sc, true
		}
	}
	return subcommand{}, false
}

// defineSettings defines a flag for every configuration setting on fs and
// returns where each value lands, keyed by Setting.Flag.
func defineSettings(fs *flag.FlagSet) map[string]*string {
	values := map[string]*string{}
	for _, st := range config.Settings {
		v := new(string)
		values[st.Flag] = v
		if st.Bool {
			fs.Var(switchFlag{v}, st.Flag, st.Usage)
		} else {
			fs.StringVar(v, st.Flag, "", st.Usage)
		}
	}
	return values
}

// globalFlags is the flag set before the subcommand: every setting, and
// --version.
func globalFlags() (fs *flag.FlagSet, values map[string]*string, showVersion *bool) {
	fs = flag.NewFlagSet("tmux-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	showVersion = fs.Bool("version", false, "print the version and exit")
	values = defineSettings(fs)
	return fs, values, showVersion
}

// subcommandFlags is the flag set after the subcommand sc, storing into
// cmd; for a subcommand that takes the settings, values holds them.
func subcommandFlags(sc subcommand, cmd *command) (fs *flag.FlagSet, values map[string]*string) {
	fs = flag.NewFlagSet(sc.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if sc.settings {
		values = defineSettings(fs)
	}
	if sc.flags != nil {
		sc.flags(fs, cmd)
	}
	return fs, values
}
