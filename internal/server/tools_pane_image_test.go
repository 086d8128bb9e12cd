package server

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/paneimage"
	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
	"github.com/tmux-mcp/tmux-mcp/internal/termgrid/screentest"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux/tmuxtest"
)

// paneImageResult checks capture_pane_image's answer shape (a PNG image
// content, then one text block, no structured content) and decodes it.
func paneImageResult(t *testing.T, res *mcp.CallToolResult) (image.Image, string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("capture_pane_image: %s", text(res))
	}
	if len(res.Content) != 2 {
		t.Fatalf("%d content blocks, want an image and a text", len(res.Content))
	}
	ic, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || ic.MIMEType != "image/png" {
		t.Fatalf("first block %T %+v, want a PNG image", res.Content[0], res.Content[0])
	}
	tc, ok := res.Content[1].(*mcp.TextContent)
	if !ok {
		t.Fatalf("second block %T, want text", res.Content[1])
	}
	if res.StructuredContent != nil {
		t.Errorf("structured content %v, want none (no output schema)", res.StructuredContent)
	}
	img, err := png.Decode(bytes.NewReader(ic.Data))
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	if !strings.Contains(tc.Text, fmt.Sprintf("%d bytes", len(ic.Data))) {
		t.Errorf("text %q does not give the PNG's %d bytes", tc.Text, len(ic.Data))
	}
	return img, tc.Text
}

// paneSize reads a pane's size and cursor from tmux itself.
func paneSize(t *testing.T, ts *tmuxtest.Server, id string) (cols, rows, cx, cy int) {
	t.Helper()
	f := strings.Fields(ts.MustRun("display-message", "-p", "-t", id, "#{pane_width} #{pane_height} #{cursor_x} #{cursor_y}"))
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return n(f[0]), n(f[1]), n(f[2]), n(f[3])
}

func rgbaAt(img image.Image, x, y int) color.RGBA {
	r, g, b, _ := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0xff}
}

// colourSample is a screen with backgrounds of each colour space at known
// cells: red (SGR 41) at row 1 columns 0-4, palette 21 at row 2 columns
// 0-1, true colour #00875f at row 2 columns 2-3.
const colourSample = "plain text\n\x1b[41m RED \x1b[0m after\n\x1b[48;5;21m  \x1b[0m\x1b[48;2;0;135;95m  \x1b[0m tail\n中文 wide\nend\n"

// TestCapturePaneImage: a real pane's screen as a PNG: its size is the
// pane's cells times the cell size, cells show their colours, the cursor
// is a block where tmux says it is and shows it, and the scale grows it.
func TestCapturePaneImage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := showText(t, e, "main", colourSample)
	cols, rows, cx, cy := paneSize(t, e.tmux, id)
	for _, scale := range []float64{0, 1, 2, 0.5} {
		t.Run(fmt.Sprintf("scale %g", scale), func(t *testing.T) {
			args := map[string]any{"pane_id": id}
			if scale != 0 {
				args["scale"] = scale
			}
			img, txt := paneImageResult(t, e.call("capture_pane_image", args))
			cw, ch, err := paneimage.CellSize(scale)
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != cols*cw || b.Dy() != rows*ch {
				t.Fatalf("picture %v, want %d×%d cells of %d×%d", b, cols, rows, cw, ch)
			}
			wantText := fmt.Sprintf("Pane %s", id)
			if e.host != "" {
				wantText += " on host " + e.host
			}
			if !strings.HasPrefix(txt, wantText) || !strings.Contains(txt, fmt.Sprintf("%d×%d cells", cols, rows)) ||
				!strings.Contains(txt, fmt.Sprintf("PNG %d×%d px", cols*cw, rows*ch)) {
				t.Errorf("text %q", txt)
			}
			cell := func(x, y int) color.RGBA { return rgbaAt(img, x*cw+1, y*ch+1) }
			for _, c := range []struct {
				x, y int
				want color.RGBA
			}{
				{0, 1, color.RGBA{0xcd, 0, 0, 0xff}},      // SGR 41
				{4, 1, color.RGBA{0xcd, 0, 0, 0xff}},      // the red run's end
				{5, 1, paneimage.DefaultBg},               // and after it
				{0, 2, color.RGBA{0, 0, 0xff, 0xff}},      // palette 21
				{2, 2, color.RGBA{0, 0x87, 0x5f, 0xff}},   // true colour
				{4, 2, paneimage.DefaultBg},               // after it
				{0, 0, paneimage.DefaultBg},               // 'p' leaves its corner
				{cx, cy, paneimage.DefaultFg},             // the cursor's block
				{cx + 1, cy, paneimage.DefaultBg},         // beside it
				{cols - 1, rows - 1, paneimage.DefaultBg}, // blank bottom right
			} {
				if got := cell(c.x, c.y); got != c.want {
					t.Errorf("cell (%d,%d): %v, want %v", c.x, c.y, got, c.want)
				}
			}
		})
	}
	t.Run("hidden cursor", func(t *testing.T) {
		id := showText(t, e, "main", "\x1b[?25l"+colourSample)
		_, _, cx, cy := paneSize(t, e.tmux, id)
		img, _ := paneImageResult(t, e.call("capture_pane_image", map[string]any{"pane_id": id}))
		cw, ch, _ := paneimage.CellSize(1)
		if got := rgbaAt(img, cx*cw+1, cy*ch+1); got != paneimage.DefaultBg {
			t.Errorf("hidden cursor's cell is %v, want the background", got)
		}
	})
	t.Run("session target", func(t *testing.T) {
		first := e.tmux.MustRun("display-message", "-p", "-t", "main:0.0", "#{pane_id}")
		_, txt := paneImageResult(t, e.call("capture_pane_image", map[string]any{"session_name": "main"}))
		if !strings.Contains(txt, "Pane "+first) {
			t.Errorf("session target answered %q, want pane %s", txt, first)
		}
	})
	t.Run("picture too large", func(t *testing.T) {
		e.tmux.MustRun("new-session", "-d", "-s", "huge", "-x", "1000", "-y", "300")
		msg, _ := e.fail("capture_pane_image", map[string]any{"session_name": "huge", "scale": 4})
		if !strings.Contains(msg, "picture too large") || !strings.Contains(msg, "smaller scale") {
			t.Errorf("error %q", msg)
		}
		img, _ := paneImageResult(t, e.call("capture_pane_image", map[string]any{"session_name": "huge", "scale": 0.5}))
		if img.Bounds().Dx() < 1000 {
			t.Errorf("1000 columns at scale 0.5: %v", img.Bounds())
		}
	})
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"scale too small", map[string]any{"pane_id": id, "scale": 0.25}, "scale must be from 0.5 to 4"},
		{"scale too large", map[string]any{"pane_id": id, "scale": 5}, "scale must be from 0.5 to 4"},
		{"missing pane", map[string]any{"pane_id": "%999"}, "%999"},
		{"bad pane id", map[string]any{"pane_id": "nope"}, "pane id must look like"},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg, _ := e.fail("capture_pane_image", c.args)
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q lacks %q", msg, c.want)
			}
		})
	}
}

// TestCapturePaneImageOneRoundTrip: the screen, its size and the cursor
// come from one tmux process (the exec transport spawns one a round
// trip), whatever the scale.
func TestCapturePaneImageOneRoundTrip(t *testing.T) {
	skipOverSSH(t, "counts local tmux processes")
	t.Parallel()
	e, n := countingEnv(t)
	id := e.tmux.MustRun("display-message", "-p", "-t", "main:0.0", "#{pane_id}")
	for _, scale := range []float64{1, 3} {
		n.Store(0)
		paneImageResult(t, e.call("capture_pane_image", map[string]any{"pane_id": id, "scale": scale}))
		if got := n.Load(); got != 1 {
			t.Errorf("scale %g: %d tmux processes, want 1", scale, got)
		}
	}
}

// TestCapturePaneImageCorpus: real programs' screens (ls, git, grep, vim,
// less, top, htop, dialog) draw as pictures of the pane's size with their
// colours: each has more colours than the default two.
func TestCapturePaneImageCorpus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cw, ch, _ := paneimage.CellSize(1)
	for _, sc := range screentest.Start(t, e.tmux) {
		t.Run(sc.Name, func(t *testing.T) {
			cols, rows, _, _ := paneSize(t, e.tmux, sc.Pane)
			img, _ := paneImageResult(t, e.call("capture_pane_image", map[string]any{"pane_id": sc.Pane}))
			if b := img.Bounds(); b.Dx() != cols*cw || b.Dy() != rows*ch {
				t.Fatalf("picture %v, want %d×%d cells of %d×%d", b, cols, rows, cw, ch)
			}
			// Every backgrounds' colour the styles name is on the picture.
			seen := map[color.RGBA]bool{}
			for y := 0; y < img.Bounds().Dy(); y += 2 {
				for x := 0; x < img.Bounds().Dx(); x += 2 {
					seen[rgbaAt(img, x, y)] = true
				}
			}
			capture := e.tmux.MustRun("capture-pane", "-p", "-e", "-N", "-t", sc.Pane)
			s := termgrid.Parse([]byte(capture))
			for _, l := range s.Lines {
				for _, c := range l {
					if c.Style.Attr&termgrid.Reverse != 0 || c.Style.Bg.IsDefault() {
						continue
					}
					if bg := paneimage.RGB(c.Style.Bg, paneimage.DefaultBg); !seen[bg] {
						t.Errorf("background %v (%s) is not on the picture", bg, c.Style.Bg)
					}
				}
			}
			if len(seen) < 3 {
				t.Errorf("%d colours on the picture of a coloured program", len(seen))
			}
		})
	}
}

// TestRemoteCapturePaneImage: through a remote host the picture is of the
// host's pane, in one round trip over its ssh, and says so.
func TestRemoteCapturePaneImage(t *testing.T) {
	he := newHostEnv(t)
	e := he.env
	id := he.box.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "printf '\\033[41m RED \\033[0m\\n'; exec sleep 600")
	tmuxtest.WaitFor(t, 5*time.Second, func() bool {
		out, _ := he.box.Run("capture-pane", "-p", "-t", id)
		return strings.Contains(out, "RED")
	})
	cols, rows, _, _ := paneSize(t, he.box, id)
	img, txt := paneImageResult(t, e.call("capture_pane_image", on(map[string]any{"pane_id": id})))
	cw, ch, _ := paneimage.CellSize(1)
	if b := img.Bounds(); b.Dx() != cols*cw || b.Dy() != rows*ch {
		t.Fatalf("picture %v, want %d×%d cells of %d×%d", b, cols, rows, cw, ch)
	}
	if !strings.HasPrefix(txt, "Pane "+id+" on host box:") {
		t.Errorf("text %q does not name the host", txt)
	}
	if got := rgbaAt(img, 2*cw+1, 1); got != (color.RGBA{0xcd, 0, 0, 0xff}) {
		t.Errorf("the red cell on the host is %v", got)
	}
}

// BenchmarkCapturePaneImage is capture_pane_image of a 200×50 pane full of
// coloured text, through the whole server over the control-mode engine,
// beside capture_pane styles:true of the same pane (the same tmux round
// trip, answered as text and spans) as the baseline.
func BenchmarkCapturePaneImage(b *testing.B) {
	ts := tmuxtest.New(b)
	e := benchEnv(b, ts, "control")
	var sample strings.Builder
	for i := range 49 {
		for j := range 18 {
			fmt.Fprintf(&sample, "\x1b[%d;%dmword%04d \x1b[0m", 1+i%2, 31+(i+j)%7, i*18+j)
		}
		sample.WriteString("\n")
	}
	ts.MustRun("new-session", "-d", "-s", "big", "-x", "200", "-y", "50")
	f := b.TempDir() + "/sample"
	if err := os.WriteFile(f, []byte(sample.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	id := ts.MustRun("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "big:", "cat "+f+"; exec sleep 600")
	tmuxtest.WaitFor(b, 5*time.Second, func() bool {
		out, _ := ts.Run("capture-pane", "-p", "-t", id)
		return strings.Contains(out, "word0881")
	})
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"baseline-capture_pane-styles", map[string]any{"pane_id": id, "styles": true}},
		{"capture_pane_image", map[string]any{"pane_id": id}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tool := strings.TrimPrefix(c.name, "baseline-")
			tool = strings.TrimSuffix(tool, "-styles")
			params := &mcp.CallToolParams{Name: tool, Arguments: c.args}
			var size int
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.cs.CallTool(context.Background(), params)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
				size = 0
				for _, ct := range res.Content {
					switch ct := ct.(type) {
					case *mcp.ImageContent:
						size += len(ct.Data)
					case *mcp.TextContent:
						size += len(ct.Text)
					}
				}
			}
			b.ReportMetric(float64(size), "answer-bytes")
		})
	}
}
