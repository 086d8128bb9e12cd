package release

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

const root = "../.."

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func meta(t *testing.T) Meta {
	t.Helper()
	m, err := ReadMeta(readFile(t, "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mcpbCLI returns the official bundle CLI. Missing, the test skips,
// except under CI (CI=true), where .ci/run installs it and its absence
// fails.
func mcpbCLI(t *testing.T) string {
	t.Helper()
	p, err := FindMCPB(root)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("under CI the official mcpb CLI is required (.ci/run installs it): %v", err)
		}
		t.Skip(err)
	}
	return p
}

// decoded is a manifest read back, as a client reads it.
type decoded struct {
	Name       string `json:"name"`
	Version    string `json:"version"`
	UserConfig map[string]struct {
		Type    string `json:"type"`
		Default string `json:"default"`
	} `json:"user_config"`
	Server struct {
		Type       string `json:"type"`
		EntryPoint string `json:"entry_point"`
		MCPConfig  struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Compatibility struct {
		Platforms []string `json:"platforms"`
	} `json:"compatibility"`
}

var userConfigRef = regexp.MustCompile(`\$\{user_config\.([^}]*)\}`)

// Every option maps to a real setting's variable, every reference in the
// environment names an option, every default is a value config.Load takes
// without a warning, and the manifest lists every tool of the registry.
func TestManifest(t *testing.T) {
	srv, err := server.New(config.Config{Safety: config.Destructive}, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var registry []string
	for _, tl := range srv.All() {
		registry = append(registry, tl.Name)
	}
	for _, p := range []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}} {
		raw, err := Manifest(meta(t), "1.2.3", p)
		if err != nil {
			t.Fatal(err)
		}
		var m decoded
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if m.Version != "1.2.3" || m.Server.Type != "binary" || m.Server.EntryPoint != BinaryPath ||
			m.Server.MCPConfig.Command != "${__dirname}/"+BinaryPath || !slices.Equal(m.Compatibility.Platforms, []string{p.OS}) {
			t.Errorf("%v: manifest %+v", p, m)
		}
		if len(m.UserConfig) != len(UserOptions) || len(m.Server.MCPConfig.Env) != len(UserOptions) {
			t.Errorf("%v: %d user_config entries and %d variables for %d options", p, len(m.UserConfig), len(m.Server.MCPConfig.Env), len(UserOptions))
		}
		env := map[string]string{}
		for name, v := range m.Server.MCPConfig.Env {
			refs := userConfigRef.FindAllStringSubmatch(v, -1)
			if len(refs) != 1 || refs[0][0] != v {
				t.Errorf("%v: %s=%q is not one ${user_config.KEY}", p, name, v)
				continue
			}
			uc, ok := m.UserConfig[refs[0][1]]
			if !ok {
				t.Errorf("%v: %s refers to user_config %q, which the manifest lacks", p, name, refs[0][1])
				continue
			}
			env[name] = uc.Default
		}
		cfg, warns, err := config.Load(func(k string) string { return env[k] }, nil)
		if err == nil {
			err = cfg.CheckToolsets(server.Toolsets)
		}
		if err != nil || len(warns) > 0 {
			t.Errorf("%v: the defaults %v do not load cleanly: %v %v", p, env, warns, err)
		}
		if cfg.Safety != config.Mutating || cfg.SocketName != "" || len(cfg.Toolsets) != 0 {
			t.Errorf("%v: the defaults give %+v, not the server's own defaults", p, cfg)
		}
		wantBin := map[string]string{"darwin/arm64": "/opt/homebrew/bin/tmux", "darwin/amd64": "/usr/local/bin/tmux"}[p.OS+"/"+p.Arch]
		if wantBin == "" {
			wantBin = "tmux"
		}
		if cfg.TmuxBin != wantBin {
			t.Errorf("%v: tmux binary %q, want %q", p, cfg.TmuxBin, wantBin)
		}
		var tools []string
		for _, tl := range m.Tools {
			tools = append(tools, tl.Name)
		}
		if !slices.Equal(tools, registry) {
			t.Errorf("%v: manifest tools %v, registry %v", p, tools, registry)
		}
	}
	if _, err := Manifest(meta(t), "1.2.3", Platform{"windows", "amd64"}); err == nil {
		t.Error("a windows bundle was made")
	}
}

// A table line naming a setting that does not exist is refused, and so
// is an option listed twice.
func TestUserOptionsChecked(t *testing.T) {
	saved := UserOptions
	t.Cleanup(func() { UserOptions = saved })
	for name, opts := range map[string][]UserOption{
		"unknown setting": append(slices.Clone(saved), UserOption{Key: "x", Setting: "no-such-flag", Type: "string", Title: "x", Description: "x", Default: fixed("")}),
		"listed twice":    append(slices.Clone(saved), saved[0]),
	} {
		UserOptions = opts
		if _, err := Manifest(meta(t), "1.2.3", Platform{"linux", "amd64"}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The official CLI validates each platform's manifest; the bundle of this
// machine's binary is packed by it, unpacked by it as a client would, and
// the server it holds is started the way the manifest says (the directory
// and the user_config defaults substituted, the socket set to the test's
// own tmux server): it serves tools/list and list_sessions over stdio.
func TestBundleValidatedPackedAndServes(t *testing.T) {
	mcpb := mcpbCLI(t)
	for _, p := range []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}} {
		raw, err := Manifest(meta(t), "1.2.3", p)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "manifest.json")
		if err := os.WriteFile(f, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := runMCPB(context.Background(), mcpb, "validate", f); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "tmux-mcp")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tmux-mcp")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as the release builds it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	host := Platform{"linux", "amd64"}
	raw, err := Manifest(meta(t), "1.2.3", host)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, BundleName("1.2.3", host))
	sum, err := Pack(context.Background(), mcpb, raw, bin, filepath.Join(root, "LICENSE"), out, filepath.Join(root, ThirdPartyNotices[0]))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := FileSHA256(out); got != sum || len(sum) != 64 {
		t.Errorf("Pack returned sha256 %s, the file has %s", sum, got)
	}
	unpacked := filepath.Join(dir, "unpacked")
	if err := runMCPB(context.Background(), mcpb, "unpack", out, unpacked); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "LICENSE", "third_party/GO-FONTS-LICENSE", BinaryPath} {
		if _, err := os.Stat(filepath.Join(unpacked, name)); err != nil {
			t.Errorf("the bundle lacks %s: %v", name, err)
		}
	}
	st, err := os.Stat(filepath.Join(unpacked, BinaryPath))
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("the bundled binary is not executable: %v %v", st, err)
	}
	var m decoded
	if err := json.Unmarshal(readAbs(t, filepath.Join(unpacked, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}

	// Start it as a host does.
	tm := tmuxtest.New(t)
	values := map[string]string{}
	for k, uc := range m.UserConfig {
		values[k] = uc.Default
	}
	values["socket"] = tm.Socket.Name
	values["tmux_bin"] = tm.Bin
	subst := func(s string) string {
		s = strings.ReplaceAll(s, "${__dirname}", unpacked)
		return userConfigRef.ReplaceAllStringFunc(s, func(ref string) string { return values[userConfigRef.FindStringSubmatch(ref)[1]] })
	}
	cmd := exec.Command(subst(m.Server.MCPConfig.Command), m.Server.MCPConfig.Args...)
	cmd.Env = tmuxtest.CleanEnv()
	for k, v := range m.Server.MCPConfig.Env {
		cmd.Env = append(cmd.Env, k+"="+subst(v))
	}
	// Never start it where it could reach another tmux server than the test's.
	if !slices.Contains(cmd.Env, "TMUX_MCP_SOCKET="+tm.Socket.Name) {
		t.Fatalf("the manifest does not pass the socket option as TMUX_MCP_SOCKET: %v", m.Server.MCPConfig.Env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bundle-test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ServerInfo.Version; v == "" {
		t.Error("no server version")
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var manifestTools []string
	for _, tl := range m.Tools {
		manifestTools = append(manifestTools, tl.Name)
	}
	for _, tl := range list.Tools {
		if !slices.Contains(manifestTools, tl.Name) {
			t.Errorf("the server serves %s, which the manifest does not list", tl.Name)
		}
		if tl.Name == "kill_server" {
			t.Error("kill_server is visible at the bundle's default tier (mutating)")
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_sessions", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res)
	if res.IsError || !strings.Contains(string(got), `"main"`) {
		t.Errorf("list_sessions on the test's tmux server through the bundle: %s", got)
	}
}

func readAbs(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The server.json a release publishes validates against the registry's
// schema and its rules, names the release's version everywhere, and has
// one mcpb package per bundle with its hash; a document the registry
// would refuse fails Validate.
func TestServerJSON(t *testing.T) {
	committed := readFile(t, "server.json")
	schema := readFile(t, "internal/config/testdata/registry/server.schema.json")
	bundles := []Bundle{
		{File: "tmux-mcp_1.2.3_darwin_arm64.mcpb", SHA256: strings.Repeat("ab", 32)},
		{File: "tmux-mcp_1.2.3_linux_amd64.mcpb", SHA256: strings.Repeat("01", 32)},
	}
	doc, err := ServerJSON(committed, "1.2.3", "v1.2.3", bundles, schema)
	if err != nil {
		t.Fatal(err)
	}
	var sj struct {
		Version  string `json:"version"`
		Packages []struct {
			RegistryType string            `json:"registryType"`
			Identifier   string            `json:"identifier"`
			Version      string            `json:"version"`
			FileSHA256   string            `json:"fileSha256"`
			Env          []json.RawMessage `json:"environmentVariables"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(doc, &sj); err != nil {
		t.Fatal(err)
	}
	if sj.Version != "1.2.3" || len(sj.Packages) != 3 {
		t.Fatalf("server.json: %s", doc)
	}
	if p := sj.Packages[0]; p.RegistryType != "oci" || p.Identifier != "ghcr.io/tmux-mcp/tmux-mcp:1.2.3" {
		t.Errorf("oci package %+v", p)
	}
	for i, b := range bundles {
		p := sj.Packages[i+1]
		want := "https://github.com/tmux-mcp/tmux-mcp/releases/download/v1.2.3/" + b.File
		if p.RegistryType != "mcpb" || p.Identifier != want || p.FileSHA256 != b.SHA256 || p.Version != "1.2.3" || len(p.Env) != len(sj.Packages[0].Env) {
			t.Errorf("mcpb package %d: %+v", i, p)
		}
	}

	// What the registry refuses, Validate refuses.
	for name, mutate := range map[string]func(pkgs []any, d map[string]any){
		"an mcpb without its hash": func(p []any, _ map[string]any) { delete(p[1].(map[string]any), "fileSha256") },
		"an uppercase hash":        func(p []any, _ map[string]any) { p[1].(map[string]any)["fileSha256"] = strings.Repeat("AB", 32) },
		"an mcpb off GitHub releases": func(p []any, _ map[string]any) {
			p[1].(map[string]any)["identifier"] = "https://example.com/tmux-mcp.mcpb"
		},
		"an mcpb over http": func(p []any, _ map[string]any) {
			p[1].(map[string]any)["identifier"] = "http://github.com/tmux-mcp/tmux-mcp/releases/download/v1/a.mcpb"
		},
		"an mcpb of another version":     func(p []any, _ map[string]any) { p[1].(map[string]any)["version"] = "1.2.2" },
		"an mcpb with a registryBaseUrl": func(p []any, _ map[string]any) { p[1].(map[string]any)["registryBaseUrl"] = "https://github.com" },
		"an oci image of another version": func(p []any, _ map[string]any) {
			p[0].(map[string]any)["identifier"] = "ghcr.io/tmux-mcp/tmux-mcp:1.2.2"
		},
		"an oci with a version field": func(p []any, _ map[string]any) { p[0].(map[string]any)["version"] = "1.2.3" },
		"a description too long":      func(_ []any, d map[string]any) { d["description"] = strings.Repeat("x", 101) },
		"another schema":              func(_ []any, d map[string]any) { d["$schema"] = "https://example.com/schema.json" },
	} {
		var d map[string]any
		if err := json.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		mutate(d["packages"].([]any), d)
		bad, _ := json.Marshal(d)
		if err := Validate(bad, schema); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ServerJSON(committed, "1.2.3", "v1.2.3", nil, schema); err == nil {
		t.Error("a server.json without bundles was made")
	}
}

// The release image keeps what the source-built one has: the label the
// registry checks (the server's name in server.json) and a non-root
// user; it copies the binary goreleaser built for the image's platform,
// and the release config builds it for the image server.json names.
func TestReleaseDockerfile(t *testing.T) {
	m := meta(t)
	label := `LABEL io.modelcontextprotocol.server.name="` + m.Name + `"`
	for _, f := range []string{"Dockerfile", "Dockerfile.release"} {
		d := string(readFile(t, f))
		if !strings.Contains(d, label) {
			t.Errorf("%s lacks %s", f, label)
		}
		if !strings.Contains(d, "docs/third_party/ /usr/share/licenses/tmux-mcp/") {
			t.Errorf("%s does not carry the third-party notices", f)
		}
		if !regexp.MustCompile(`(?m)^USER [1-9][0-9]*:[1-9][0-9]*$`).MatchString(d) {
			t.Errorf("%s does not run as a non-root uid:gid", f)
		}
	}
	if d := string(readFile(t, "Dockerfile.release")); !strings.Contains(d, "COPY $TARGETPLATFORM/tmux-mcp /usr/local/bin/tmux-mcp") {
		t.Errorf("Dockerfile.release does not copy the built binary:\n%s", d)
	}
	var sj struct {
		Packages []struct {
			RegistryType string `json:"registryType"`
			Identifier   string `json:"identifier"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(readFile(t, "server.json"), &sj); err != nil {
		t.Fatal(err)
	}
	cfg := string(readFile(t, ".goreleaser.yaml"))
	for _, p := range sj.Packages {
		image, _, _ := strings.Cut(p.Identifier, ":")
		if p.RegistryType == "oci" && !strings.Contains(cfg, "- "+image+"\n") {
			t.Errorf(".goreleaser.yaml does not build the image %s that server.json names", image)
		}
	}
	for _, w := range []string{"dockerfile: Dockerfile.release", "homebrew_casks:", "dockers_v2:"} {
		if !strings.Contains(cfg, w) {
			t.Errorf(".goreleaser.yaml lacks %q", w)
		}
	}
	for _, w := range []string{"\nbrews:", "\ndockers:", "\ndocker_manifests:"} {
		if strings.Contains(cfg, w) {
			t.Errorf(".goreleaser.yaml uses the deprecated %q", strings.TrimSpace(w))
		}
	}
}
