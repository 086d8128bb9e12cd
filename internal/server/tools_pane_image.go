package server

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/paneimage"
	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// capture_pane_image (issue 25): a pane's visible screen as a PNG. A model
// that reads images takes in a TUI's layout, colours and selection at a
// glance, where the text and its styles take a careful read. The screen
// comes from tmux in one round trip, with its styles (capture-pane -e, as
// capture_pane styles: true) and the cursor, and is drawn in process by
// internal/paneimage: no process per picture, and over a host the same
// round trip goes through that host's ssh.

func init() { toolGroups = append(toolGroups, paneImageTools) }

type capturePaneImageArgs struct {
	PaneTarget
	Scale float64 `json:"scale" default:"1.0" desc:"Cell size factor, 0.5-4 (1: 7x15 px cells)."`
	SocketArgs
}

// imageFields are read in the capture's round trip: the size the screen
// is drawn at and the cursor.
var imageFields = []string{"pane_id", "pane_width", "pane_height", "cursor_x", "cursor_y", "cursor_flag"}

// captureImageDoc is docs/tools.md's note on the picture.
const captureImageDoc = "The answer is an image content (PNG) and a text block naming the pane, its size in " +
	"cells, and the picture's size in pixels and bytes, for clients that drop images. The picture is the pane's " +
	"screen as its program drew it (a pane in copy mode is drawn without the copy-mode view), in xterm's colours " +
	"on black (bold text in the first eight colours in their bright twins, as xterm shows it), with the cursor as " +
	"a block where the pane shows it. Glyphs: the Go Mono fonts (embedded; BSD-style licence) cover Latin, Greek " +
	"and Cyrillic; box drawing, block elements, braille and the triangles of Powerline prompts (and ▲▶▼◀) are " +
	"drawn as shapes; any other character they lack (CJK, emoji, most symbols) is an outlined placeholder box as " +
	"wide as the character (two cells for a wide one). A screen of more than 256 colours is drawn with its " +
	"colours rounded to the 256-colour palette; a dense one with sharp glyph edges. A picture whose base64 would " +
	"pass the 1 MB result cap is refused (use a smaller scale).\n\n" +
	"![capture_pane_image of a shell: a coloured prompt, ls --color and a table in box drawing](images/capture_pane_image.png)"

func paneImageTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "capture_pane_image", Title: "Capture Pane Image", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "A pane's visible screen as a PNG image (colours, bold, reverse, cursor), plus a line of text with its size. For the text use capture_pane.",
			Doc:         captureImageDoc,
		}, func(ctx context.Context, c *Call, a capturePaneImageArgs) (paneImage, error) {
			if err := paneimage.CheckScale(a.Scale); err != nil {
				return paneImage{}, expectedf("%v", err)
			}
			sock := c.Socket(a.SocketArgs)
			id, err := c.targetPaneID(ctx, sock, a.PaneTarget)
			if err != nil {
				return paneImage{}, err
			}
			// capture-pane first: it fails on a missing pane, where
			// display-message would answer with empty fields.
			outs, err := c.tmux.Run(ctx, sock,
				styledCaptureCmd(id, nil, nil), // the styles: -e -N
				tmux.Command{"display-message", "-p", "-t", id, tmux.Format(imageFields...)})
			if err != nil {
				return paneImage{}, notFoundAs(err, "pane", id)
			}
			rows, err := tmux.ParseRows(outs[1], imageFields)
			if err != nil {
				return paneImage{}, err
			}
			if len(rows) == 0 || rows[0]["pane_id"] != id {
				return paneImage{}, &tmux.NotFoundError{What: "pane", Detail: id}
			}
			r := rows[0]
			screen := termgrid.Parse(outs[0])
			screen.Cursor = termgrid.Cursor{X: atoi(r["cursor_x"]), Y: atoi(r["cursor_y"]), Hidden: r["cursor_flag"] != "1"}
			cols, lines := atoi(r["pane_width"]), atoi(r["pane_height"])
			img, err := paneimage.PNG(screen, cols, lines, paneimage.Options{Scale: a.Scale})
			if errors.Is(err, paneimage.ErrTooLarge) {
				return paneImage{}, expectedf("%v; use a smaller scale", err)
			}
			if err != nil {
				return paneImage{}, err
			}
			if b64 := 4 * ((len(img.PNG) + 2) / 3); b64 > maxResultBytes-4096 {
				return paneImage{}, &ToolError{Type: "ResultTooLarge", Expected: true,
					Msg:        fmt.Sprintf("Result too large: the picture of %s is %d bytes as PNG, %d in base64, over the %d-byte cap on one result.", id, len(img.PNG), b64, maxResultBytes),
					Suggestion: fmt.Sprintf("Use a smaller scale (this one: %g), or capture_pane for the text.", orOne(a.Scale))}
			}
			return paneImage{pane: id, host: c.host, cols: cols, rows: lines, img: img}, nil
		}),
	}
}

func orOne(f float64) float64 {
	if f == 0 || math.IsNaN(f) {
		return 1
	}
	return f
}

// paneImage is capture_pane_image's answer: the PNG as image content and
// a text block of facts, with no structured content (and no output
// schema): the picture is the answer, and the facts are for a client
// that drops images.
type paneImage struct {
	pane       string
	host       string
	cols, rows int
	img        *paneimage.Image
}

func (p paneImage) buildResult() (*mcp.CallToolResult, error) {
	where := p.pane
	if p.host != "" {
		where += " on host " + p.host
	}
	note := ""
	if p.img.Approximate {
		note = "; colours rounded to the 256-colour palette"
	}
	text := fmt.Sprintf("Pane %s: %d×%d cells, PNG %d×%d px (cell %d×%d), %d bytes%s.",
		where, p.cols, p.rows, p.img.Width, p.img.Height, p.img.CellWidth, p.img.CellHeight, len(p.img.PNG), note)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{MIMEType: "image/png", Data: p.img.PNG},
		&mcp.TextContent{Text: text},
	}}, nil
}

func (paneImage) outputSchema() map[string]any { return nil }
