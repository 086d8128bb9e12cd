package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/server"
	"github.com/tmux-mcp/tmux-mcp/internal/server/app"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// appHostDir holds the browser test's host (scripts/app-host): the
// official MCP Apps host bridge and TypeScript SDK client, puppeteer-core
// and esbuild, installed from its lockfile.
var appHostDir = filepath.Join("..", "scripts", "app-host")

// appHost returns node and Chromium. Where either, or the npm packages
// (`npm ci --prefix scripts/app-host`), is missing the test skips, except
// under CI (CI set), which installs them all: there it fails.
func appHost(t *testing.T) (node, chromium string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed; the MCP App browser test needs node, Chromium (apt-get install chromium) and `npm ci --prefix scripts/app-host`")
	}
	chromium = os.Getenv("TMUX_MCP_CHROMIUM")
	if chromium == "" {
		for _, c := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
			if p, err := exec.LookPath(c); err == nil {
				chromium = p
				break
			}
		}
	}
	if chromium == "" {
		missing(t, "Chromium is not installed (apt-get install chromium, or TMUX_MCP_CHROMIUM=path); the MCP App browser test needs it")
	}
	for _, pkg := range []string{"@modelcontextprotocol/ext-apps", "@modelcontextprotocol/client", "puppeteer-core", "esbuild"} {
		if _, err := os.Stat(filepath.Join(appHostDir, "node_modules", pkg, "package.json")); err != nil {
			missing(t, pkg+" is not installed in scripts/app-host; run `npm ci --prefix scripts/app-host`")
		}
	}
	return node, chromium
}

// appHostReport is what scripts/app-host/host.mjs prints.
type appHostReport struct {
	OpenerListed   bool                `json:"openerListed"`
	OpenerMeta     map[string]any      `json:"openerMeta"`
	OpenedWith     string              `json:"openedWith"`
	ResourceURI    string              `json:"resourceUri"`
	ResourceListed bool                `json:"resourceListed"`
	MIMEType       string              `json:"mimeType"`
	CSP            map[string][]string `json:"csp"`
	OpenerIsError  bool                `json:"openerIsError"`
	ProbeRequests  int                 `json:"probeRequests"`
	DelaysMS       []int               `json:"delaysMs"`
	Pause          struct {
		CallsWhilePaused int    `json:"callsWhilePaused"`
		ShownWhilePaused bool   `json:"shownWhilePaused"`
		Status           string `json:"status"`
		Button           string `json:"button"`
		ResumeMS         int    `json:"resumeMs"`
	} `json:"pause"`
	Screenshot string           `json:"screenshot"`
	ViewCalls  map[string]int   `json:"viewCalls"`
	Requests   []map[string]any `json:"requests"`
	DataURLs   []map[string]any `json:"dataURLs"`
	ViewTitle  string           `json:"viewTitle"`
}

// appTrials is how many times the test types and times the view's update.
const appTrials = 7

// TestAppInChromium hosts the pane view in headless Chromium through the
// official host bridge, connected to a real tmux-mcp over streamable HTTP
// and over stdio. It types into the pane with send_keys and times how
// long the view takes to show it (each trial at most 2 s, the median at
// most 1 s: the view reads every 0.5 s), checks the pause button, that no
// frame made a network request (a control view that does make requests is
// seen making them), and that the audit log holds exactly the view's calls
// and only read-only tools. With TMUX_MCP_APP_SCREENSHOT=1 the HTTP run's
// screenshot becomes docs/images/pane-app.png.
func TestAppInChromium(t *testing.T) {
	node, chromium := appHost(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			ts := tmuxtest.New(t)
			ts.MustRun("respawn-pane", "-k", "-t", "%0", "sh")
			ts.MustRun("resize-window", "-t", "main", "-x", "100", "-y", "20")
			dir := t.TempDir()
			shot := filepath.Join(dir, "pane-app.png")
			if transport == "http" && os.Getenv("TMUX_MCP_APP_SCREENSHOT") != "" {
				shot, _ = filepath.Abs(filepath.Join("..", "docs", "images", "pane-app.png"))
				if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cfg := map[string]any{"transport": transport, "chromium": chromium, "pane": "%0", "trials": appTrials, "screenshot": shot}
			driverLog, viewLog := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.jsonl")
			if transport == "http" {
				token := newToken()
				h := startHTTPD(t, ts, nil, "TMUX_MCP_HTTP_TOKEN="+token, "TMUX_MCP_AUDIT_LOG="+driverLog)
				cfg["endpoint"], cfg["token"] = h.Endpoint, token
			} else {
				// One server process per client, each with its own audit log.
				viewLog = filepath.Join(dir, "audit-view.jsonl")
				env := func(audit string) map[string]string {
					m := map[string]string{}
					for _, kv := range append(tmuxtest.CleanEnv(), "TMUX_MCP_SOCKET="+ts.Socket.Name, "TMUX_MCP_TMUX_BIN="+ts.Bin, "TMUX_MCP_AUDIT_LOG="+audit) {
						k, v, _ := strings.Cut(kv, "=")
						m[k] = v
					}
					return m
				}
				cfg["binary"], cfg["env"], cfg["viewEnv"] = binary, env(driverLog), env(viewLog)
			}
			raw, _ := json.Marshal(cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "host.mjs", string(raw))
			cmd.Dir = appHostDir
			cmd.Env = tmuxtest.CleanEnv()
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("host.mjs: %v\n%s", err, tail(errb.String(), 4000))
			}
			var rep appHostReport
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("host.mjs output: %v: %q\n%s", err, out.String(), tail(errb.String(), 2000))
			}
			checkAppReport(t, rep, viewCalls(t, viewLog, transport == "http"))
		})
	}
}

// viewCalls reads the audit log and returns the tools the view had the
// host call, in order; the driver's calls (send_keys...) must be in the
// log too, under their own client.
func viewCalls(t *testing.T, path string, shared bool) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	var view []string
	driver := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r struct {
			Tool   string `json:"tool"`
			Client string `json:"client_id"`
			Event  string `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit record %q: %v", sc.Text(), err)
		}
		switch {
		case r.Event != "":
		case r.Client == "tmux-mcp-app-view" || !shared:
			if r.Client != "tmux-mcp-app-view" {
				t.Errorf("audit record of client %q in the view's log", r.Client)
			}
			view = append(view, r.Tool)
		case r.Client == "tmux-mcp-app-driver":
			driver++
		default:
			t.Errorf("audit record of an unknown client %q", r.Client)
		}
	}
	if shared && driver < appTrials {
		t.Errorf("%d driver calls in the audit log, want at least the %d send_keys", driver, appTrials)
	}
	return view
}

func checkAppReport(t *testing.T, rep appHostReport, audited []string) {
	t.Helper()
	srv, err := server.New(config.Config{Safety: config.Destructive}, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	readonly := map[string]bool{}
	for _, tool := range srv.All() {
		readonly[tool.Name] = tool.Tier == config.Readonly
	}

	// What the host found, read and opened.
	if rep.MIMEType != app.MIMEType || !rep.ResourceListed || rep.ResourceURI != app.PaneURI || rep.OpenerIsError {
		t.Errorf("view %q listed=%v read as %q, opened by %s (error %v)", rep.ResourceURI, rep.ResourceListed, rep.MIMEType, rep.OpenedWith, rep.OpenerIsError)
	}
	for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
		if d, ok := rep.CSP[k]; !ok || len(d) != 0 {
			t.Errorf("_meta.ui.csp.%s = %v, want []", k, d)
		}
	}
	if !rep.OpenerListed || rep.OpenedWith != "capture_pane_image" {
		t.Errorf("the host opened the view with %q, want capture_pane_image (listed %v, _meta %v)", rep.OpenedWith, rep.OpenerListed, rep.OpenerMeta)
	}

	// The update delay.
	if len(rep.DelaysMS) != appTrials {
		t.Fatalf("%d trials: %v", len(rep.DelaysMS), rep.DelaysMS)
	}
	sorted := slices.Clone(rep.DelaysMS)
	sort.Ints(sorted)
	median := sorted[len(sorted)/2]
	t.Logf("send_keys -> view shows it: median %d ms, min %d ms, max %d ms over %d trials %v (the view reads every 500 ms)",
		median, sorted[0], sorted[len(sorted)-1], len(sorted), rep.DelaysMS)
	if median > 1000 || sorted[len(sorted)-1] > 2000 {
		t.Errorf("the view updated too slowly: median %d ms (want <= 1000), max %d ms (want <= 2000)", median, sorted[len(sorted)-1])
	}

	// Pause and resume.
	p := rep.Pause
	t.Logf("paused: %d calls, typed text shown %v, status %q, button %q; resumed and shown in %d ms", p.CallsWhilePaused, p.ShownWhilePaused, p.Status, p.Button, p.ResumeMS)
	if p.CallsWhilePaused != 0 || p.ShownWhilePaused || !strings.HasPrefix(p.Status, "paused") || p.Button != "Resume" || p.ResumeMS > 2000 {
		t.Errorf("pause: %+v", p)
	}

	// No network, with a control that shows requests are seen.
	if rep.ProbeRequests < 2 {
		t.Errorf("the control view's 2 requests were seen as %d: the request check would prove nothing", rep.ProbeRequests)
	}
	if len(rep.Requests) != 0 {
		t.Errorf("network requests while the view ran: %v", rep.Requests)
	}
	// data: URLs reach no network; the view uses one for the opening
	// result's image, and nothing else.
	for _, d := range rep.DataURLs {
		if d["frame"] != "view" || d["type"] != "image" || !strings.HasPrefix(d["mime"].(string), "image/") {
			t.Errorf("a data: URL other than the result's image: %v", d)
		}
	}
	t.Logf("network requests: none; data: URLs (the opening result's image): %d", len(rep.DataURLs))

	// The view's calls: read-only tools only, each one in the audit log.
	n := 0
	for name, c := range rep.ViewCalls {
		n += c
		if !readonly[name] {
			t.Errorf("the view called %s, which is not a read-only tool", name)
		}
	}
	for _, name := range audited {
		if !readonly[name] {
			t.Errorf("audit log: the view's client called %s, which is not a read-only tool", name)
		}
	}
	t.Logf("view calls: %v; audited for the view's client: %d", rep.ViewCalls, len(audited))
	if n < appTrials || len(audited) != n {
		t.Errorf("the view made %d calls through the host and the audit log holds %d for it; want the same, at least %d", n, len(audited), appTrials)
	}

	// The screenshot.
	f, err := os.Open(rep.Screenshot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", rep.Screenshot, err)
	}
	t.Logf("screenshot %s (%dx%d); view title %q", rep.Screenshot, img.Bounds().Dx(), img.Bounds().Dy(), rep.ViewTitle)
}
