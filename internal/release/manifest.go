// Package release makes what a release publishes beside goreleaser's own
// archives: the MCP Bundle (.mcpb) of each Linux and macOS binary, which a
// desktop client such as Claude Desktop installs with one click, and the
// server.json the MCP registry lists, naming the OCI image and each bundle
// with its SHA-256. cmd/tmux-mcp-release runs it from the release config.
package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
)

// Platform is a release target that gets a bundle.
type Platform struct{ OS, Arch string }

// BundlePlatforms are the operating systems bundles are made for: the
// ones tmux runs on natively (the Windows binary is for tmux ports and
// is not bundled).
var BundlePlatforms = []string{"linux", "darwin"}

// UserOption is one setting a desktop client asks the user for when it
// installs the bundle, passed to the server as the variable of the
// setting it names. The manifest's user_config and its environment
// mapping are both generated from UserOptions: a new setting is one line.
type UserOption struct {
	Key     string // the user_config key, ${user_config.KEY}
	Setting string // the config.Settings flag whose variable it sets
	Type    string // user_config type: string, number, boolean, file or directory
	Title   string
	// Description is what the client shows under the title.
	Description string
	// Default is the value the client fills in for platform p. Every
	// option has one: a client that leaves an optional field without a
	// default may pass the literal "${user_config.KEY}" to the server
	// (seen in Claude Desktop), while an empty value means unset to
	// config.Load.
	Default func(p Platform) string
}

// fixed is a default that is the same on every platform.
func fixed(v string) func(Platform) string { return func(Platform) string { return v } }

// tmuxBinDefault is where tmux is on each platform. Desktop clients on
// macOS start servers with launchd's PATH (/usr/bin:/bin:/usr/sbin:/sbin),
// without Homebrew's bin directory, so a bare "tmux" would not be found:
// the default is Homebrew's tmux (/opt/homebrew on Apple silicon,
// /usr/local on Intel). On Linux, tmux on PATH.
func tmuxBinDefault(p Platform) string {
	switch {
	case p.OS == "darwin" && p.Arch == "arm64":
		return "/opt/homebrew/bin/tmux"
	case p.OS == "darwin":
		return "/usr/local/bin/tmux"
	}
	return "tmux"
}

// UserOptions are the settings the bundle offers, in the order a client
// shows them.
var UserOptions = []UserOption{
	{Key: "tmux_bin", Setting: "tmux-bin", Type: "string", Title: "tmux binary", Default: tmuxBinDefault,
		Description: "Full path of tmux (3.2 or newer). Desktop apps on macOS do not search Homebrew's directory: the default is Homebrew's tmux; MacPorts installs /opt/local/bin/tmux."},
	{Key: "socket", Setting: "socket", Type: "string", Title: "tmux socket name", Default: fixed(""),
		Description: "Which tmux server the tools reach, by socket name (tmux -L NAME). Empty: tmux's default server."},
	{Key: "safety", Setting: "safety", Type: "string", Title: "Safety tier", Default: fixed(config.Mutating.String()),
		Description: "readonly, mutating or destructive: tools above this tier are hidden and refused. destructive allows killing sessions and servers."},
	{Key: "toolsets", Setting: "toolsets", Type: "string", Title: "Toolsets", Default: fixed(""),
		Description: "Comma-separated toolsets to expose (" + strings.Join(server.Toolsets, ", ") + "). Empty: all of them."},
}

// Meta is what the manifest says about the project, read from the
// committed server.json so the two cannot disagree.
type Meta struct {
	Name        string // registry name, io.github.OWNER/REPO
	Title       string
	Description string
	Website     string
	Repository  string // https URL
}

// manifest is an MCPB manifest (manifest_version 0.3, the newest the
// official CLI validates without experimental runtimes).
type manifest struct {
	ManifestVersion string        `json:"manifest_version"`
	Name            string        `json:"name"`
	DisplayName     string        `json:"display_name"`
	Version         string        `json:"version"`
	Description     string        `json:"description"`
	LongDescription string        `json:"long_description"`
	Author          author        `json:"author"`
	Repository      repository    `json:"repository"`
	Homepage        string        `json:"homepage"`
	Documentation   string        `json:"documentation"`
	Support         string        `json:"support"`
	License         string        `json:"license"`
	Keywords        []string      `json:"keywords"`
	Server          mcpServer     `json:"server"`
	Tools           []tool        `json:"tools"`
	ToolsGenerated  bool          `json:"tools_generated"`
	Compatibility   compatibility `json:"compatibility"`
	UserConfig      userConfigs   `json:"user_config"`
}

type author struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type repository struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

type mcpServer struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  mcpConfig `json:"mcp_config"`
}

type mcpConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

type tool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type compatibility struct {
	Platforms []string `json:"platforms"`
}

// userConfigs is user_config: a JSON object whose keys keep UserOptions'
// order, the order a client shows them in.
type userConfigs []namedUserConfig

type namedUserConfig struct {
	key string
	userConfig
}

func (u userConfigs) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range u {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(c.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(c.userConfig)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type userConfig struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Default     string `json:"default"`
}

// BinaryPath is where the server binary sits inside a bundle.
const BinaryPath = "server/tmux-mcp"

// Manifest renders the manifest.json of the bundle of version for p.
func Manifest(meta Meta, version string, p Platform) ([]byte, error) {
	if !slices.Contains(BundlePlatforms, p.OS) {
		return nil, fmt.Errorf("no bundle for %s: bundles are made for %s", p.OS, strings.Join(BundlePlatforms, " and "))
	}
	m := manifest{
		ManifestVersion: "0.3",
		Name:            "tmux-mcp",
		DisplayName:     meta.Title,
		Version:         version,
		Description:     meta.Description,
		LongDescription: "tmux-mcp gives the agent tmux: it creates and drives sessions, windows and panes, types keys, " +
			"reads screens and scrollback, waits for commands and text, and manages buffers, options, environment and hooks. " +
			"It needs tmux 3.2 or newer (on macOS: `brew install tmux`). Every tool has one safety tier; " +
			"the default, mutating, lets the agent type and create but not kill.",
		Author:        author{Name: "The tmux-mcp authors", URL: meta.Repository},
		Repository:    repository{Type: "git", URL: meta.Repository},
		Homepage:      meta.Website,
		Documentation: meta.Repository + "#readme",
		Support:       meta.Repository + "/issues",
		License:       "MIT",
		Keywords:      []string{"tmux", "terminal", "shell", "panes", "sessions"},
		Server: mcpServer{
			Type:       "binary",
			EntryPoint: BinaryPath,
			MCPConfig:  mcpConfig{Command: "${__dirname}/" + BinaryPath, Args: []string{}, Env: map[string]string{}},
		},
		Compatibility: compatibility{Platforms: []string{p.OS}},
	}
	for _, o := range UserOptions {
		i := slices.IndexFunc(config.Settings, func(st config.Setting) bool { return st.Flag == o.Setting })
		if i < 0 {
			return nil, fmt.Errorf("user option %s names setting %q, which config.Settings lacks", o.Key, o.Setting)
		}
		if slices.ContainsFunc(m.UserConfig, func(c namedUserConfig) bool { return c.key == o.Key }) {
			return nil, fmt.Errorf("user option %s is listed twice", o.Key)
		}
		m.UserConfig = append(m.UserConfig, namedUserConfig{o.Key,
			userConfig{Type: o.Type, Title: o.Title, Description: o.Description, Default: o.Default(p)}})
		m.Server.MCPConfig.Env[config.Settings[i].Env] = "${user_config." + o.Key + "}"
	}
	// The tools a client lists before starting the server: every tool at
	// every tier (the prompt tools are off unless configured).
	srv, err := server.New(config.Config{Safety: config.Destructive}, server.Options{})
	if err != nil {
		return nil, err
	}
	for _, t := range srv.All() {
		m.Tools = append(m.Tools, tool{Name: t.Name, Description: server.FirstSentence(t.Description)})
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// BundleName is the file name of the bundle of version for p, named like
// the release archives.
func BundleName(version string, p Platform) string {
	return fmt.Sprintf("tmux-mcp_%s_%s_%s.mcpb", version, p.OS, p.Arch)
}
