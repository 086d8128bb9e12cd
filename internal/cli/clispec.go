package cli

import (
	"flag"
	"slices"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// cliFlag is a flag as the completion scripts and the man page describe it.
type cliFlag struct {
	name    string
	usage   string
	value   bool     // takes a value (not a switch)
	choices []string // the values it accepts, when they are a fixed set
	list    bool     // a comma-separated list of choices
	file    bool     // a path
}

// cliCommand is a subcommand with its flags.
type cliCommand struct {
	subcommand
	flags []cliFlag
}

// cliTool is a tool `call` can run.
type cliTool struct{ name, purpose string }

// cliSpec is the whole command line: read from the flag sets the parser
// uses and from the tool registry, so that the completion scripts and the
// man page cannot list a flag, a subcommand or a tool the binary does not
// have, nor miss one it has.
type cliSpec struct {
	global   []cliFlag
	commands []cliCommand
	tools    []cliTool
}

// flagHints says more about the values of some settings than the flag
// package knows: the choices config.Load accepts (TestFlagHints loads
// each), or that the value names a file.
var flagHints = map[string]cliFlag{
	"safety":           {choices: tierNames()},
	"engine":           {choices: []string{"control", "exec"}},
	"suppress-history": {choices: []string{"0", "1"}},
	"toolsets":         {choices: server.Toolsets, list: true},
	"socket-path":      {file: true},
	"tmux-bin":         {file: true},
	"audit-log":        {file: true},
	"tokens-file":      {file: true},
	"tls-cert":         {file: true},
	"tls-key":          {file: true},
	"oauth-jwks":       {file: true},
}

func tierNames() []string {
	return []string{config.Readonly.String(), config.Mutating.String(), config.Destructive.String()}
}

// helpFlag is the flag package's own -h/--help, which every flag set has.
var helpFlag = cliFlag{name: "help", usage: "print the help and exit"}

// flagsOf lists the flags of fs: the settings in config.Settings order
// (as help shows them), then the others by name, then --help.
func flagsOf(fs *flag.FlagSet) []cliFlag {
	var out []cliFlag
	fs.VisitAll(func(f *flag.Flag) {
		cf := flagHints[f.Name]
		cf.name, cf.usage = f.Name, f.Usage
		b, isBool := f.Value.(interface{ IsBoolFlag() bool })
		cf.value = !isBool || !b.IsBoolFlag()
		out = append(out, cf)
	})
	order := func(name string) int {
		i := slices.IndexFunc(config.Settings, func(st config.Setting) bool { return st.Flag == name })
		if i < 0 {
			return len(config.Settings)
		}
		return i
	}
	slices.SortStableFunc(out, func(a, b cliFlag) int { return order(a.name) - order(b.name) })
	return append(out, helpFlag)
}

// buildSpec reads the command line and the tool registry.
func buildSpec() (cliSpec, error) {
	var spec cliSpec
	fs, _, _ := globalFlags()
	spec.global = flagsOf(fs)
	for _, sc := range subcommands {
		var scratch command
		sfs, _ := subcommandFlags(sc, &scratch)
		spec.commands = append(spec.commands, cliCommand{subcommand: sc, flags: flagsOf(sfs)})
	}
	// Every tool call can name: all tiers, the prompt tools included.
	srv, err := server.New(config.Config{Safety: config.Destructive, SuppressHistory: true, PromptsAsTools: true}, server.Options{})
	if err != nil {
		return spec, err
	}
	for _, t := range srv.All() {
		spec.tools = append(spec.tools, cliTool{name: t.Name, purpose: oneLine(server.FirstSentence(t.Description))})
	}
	return spec, nil
}

// valueFlags lists the names of every flag that takes a value, before or
// after any subcommand, once each.
func (s cliSpec) valueFlags() []string {
	var names []string
	add := func(fl []cliFlag) {
		for _, f := range fl {
			if f.value && !slices.Contains(names, f.name) {
				names = append(names, f.name)
			}
		}
	}
	add(s.global)
	for _, c := range s.commands {
		add(c.flags)
	}
	return names
}

// hinted lists every flag (global or a subcommand's) that has choices or
// names a file, once each.
func (s cliSpec) hinted() []cliFlag {
	var out []cliFlag
	seen := map[string]bool{}
	add := func(fl []cliFlag) {
		for _, f := range fl {
			if f.value && (len(f.choices) > 0 || f.file) && !seen[f.name] {
				seen[f.name] = true
				out = append(out, f)
			}
		}
	}
	add(s.global)
	for _, c := range s.commands {
		add(c.flags)
	}
	return out
}

// synopsis is a subcommand's usage line after "tmux-mcp".
func (c cliCommand) synopsis() string {
	var b strings.Builder
	b.WriteString(c.name)
	for _, f := range c.flags {
		if f.name == helpFlag.name || c.settings {
			continue
		}
		if f.value {
			b.WriteString(" [--" + f.name + " VALUE]")
		} else {
			b.WriteString(" [--" + f.name + "]")
		}
	}
	if c.settings {
		b.WriteString(" [flags]")
	}
	if c.args != "" {
		b.WriteString(" " + c.args)
	}
	return b.String()
}
