package e2e

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/paneimage"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// capturePNG calls capture_pane_image and decodes its picture.
func capturePNG(t *testing.T, cs *mcp.ClientSession, args map[string]any) ([]byte, image.Image) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "capture_pane_image", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("capture_pane_image: %v %+v", err, res)
	}
	ic, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || ic.MIMEType != "image/png" {
		t.Fatalf("first content %T, want a PNG image", res.Content[0])
	}
	img, err := png.Decode(bytes.NewReader(ic.Data))
	if err != nil {
		t.Fatalf("PNG: %v", err)
	}
	return ic.Data, img
}

// TestCapturePaneImageTransports: the picture reaches a client over stdio
// and over HTTP (the base64 of the image content survives both), with a
// red cell where the pane has one.
func TestCapturePaneImageTransports(t *testing.T) {
	ts := tmuxtest.New(t)
	ts.MustRun("respawn-pane", "-k", "-t", "%0", "printf '\\033[41m RED \\033[0m\\n'; exec sleep 600")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := ts.Run("capture-pane", "-p", "-t", "%0")
		return strings.Contains(out, "RED")
	})
	token := newToken()
	h := startHTTPD(t, ts, nil, "TMUX_MCP_HTTP_TOKEN="+token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	viaHTTP, err := dialHTTPD(ctx, h, token, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer viaHTTP.Close()
	cw, ch, _ := paneimage.CellSize(1)
	for name, cs := range map[string]*mcp.ClientSession{"stdio": connect(t, serverCmd(ts)), "http": viaHTTP} {
		t.Run(name, func(t *testing.T) {
			_, img := capturePNG(t, cs, map[string]any{"pane_id": "%0"})
			if b := img.Bounds(); b.Dx()%cw != 0 || b.Dy()%ch != 0 || b.Dx() == 0 {
				t.Fatalf("picture %v is not whole cells of %d×%d", b, cw, ch)
			}
			r, g, b, _ := img.At(cw+1, 1).RGBA()
			if r>>8 != 0xcd || g != 0 || b != 0 {
				t.Errorf("the red cell is #%02x%02x%02x", r>>8, g>>8, b>>8)
			}
		})
	}
}

// TestPaneImagePicture draws the picture docs/tools.md shows: a shell
// with a coloured prompt, ls --color, a coloured table in box drawing and
// characters the fonts lack, captured by the built binary over stdio. With
// TMUX_MCP_DOCS_IMAGE=path it writes the PNG there (how
// docs/images/capture_pane_image.png is made).
func TestPaneImagePicture(t *testing.T) {
	ts := tmuxtest.NewWith(t)
	dir := t.TempDir()
	for _, f := range []string{"main.go", "README.md", "go.mod"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "build.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "internal"), 0o755); err != nil {
		t.Fatal(err)
	}
	ps1 := `\[\e[1;32m\]agent@box\[\e[0m\]:\[\e[1;34m\]~/demo\[\e[0m\]$ `
	id := ts.MustRun("new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "demo", "-x", "72", "-y", "12", "-c", dir,
		"-e", "LANG=C.UTF-8", "-e", "TERM=tmux-256color", "bash --norc --noprofile")
	typeLine := func(line, until string) {
		ts.MustRun("send-keys", "-t", id, "-l", line)
		ts.MustRun("send-keys", "-t", id, "Enter")
		tmuxtest.WaitFor(t, 5*time.Second, func() bool {
			out, _ := ts.Run("capture-pane", "-p", "-t", id)
			return strings.Contains(out, until)
		})
	}
	report := "╭────────┬───────┬────────────╮\n" +
		"│ \x1b[1mstatus\x1b[0m │ \x1b[1mtests\x1b[0m │ \x1b[1mnote\x1b[0m       │\n" +
		"├────────┼───────┼────────────┤\n" +
		"│ \x1b[42;30m PASS \x1b[0m │ \x1b[32m118\x1b[0m   │ 中文 ok    │\n" +
		"│ \x1b[41;97m FAIL \x1b[0m │ \x1b[31m2\x1b[0m     │ \x1b[3mflaky\x1b[0m 🙂   │\n" +
		"│ \x1b[7m SKIP \x1b[0m │ \x1b[38;5;208m5\x1b[0m     │ \x1b[4munderline\x1b[0m  │\n" +
		"╰────────┴───────┴────────────╯\n" +
		"\x1b[38;2;255;121;198mtrue colour\x1b[0m \x1b[38;5;39m256 colours\x1b[0m \x1b[2mdim\x1b[0m \x1b[9mstrike\x1b[0m ▁▂▃▄▅▆▇█ ⣿⣷⣶⣤\n"
	if err := os.WriteFile(filepath.Join(dir, "report.txt"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	typeLine("PS1='"+ps1+"'; clear; ls --color=always -F", "internal/")
	typeLine("cat report.txt", "true colour")
	cs := connect(t, serverCmd(ts))
	raw, img := capturePNG(t, cs, map[string]any{"pane_id": id})
	cw, ch, _ := paneimage.CellSize(1)
	if img.Bounds().Dx() != 72*cw || img.Bounds().Dy() != 12*ch {
		t.Fatalf("picture %v for 72×12 cells", img.Bounds())
	}
	t.Logf("%d×%d px, %d bytes", img.Bounds().Dx(), img.Bounds().Dy(), len(raw))
	if path := os.Getenv("TMUX_MCP_DOCS_IMAGE"); path != "" {
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
