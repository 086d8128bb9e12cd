package record

import (
	"strconv"

	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
)

// Screen is what a terminal shows when a recording starts, with the modes
// that decide how the output after it is drawn. A recording that starts
// in the middle of a full-screen program must bring the player to the
// same state, or the program's next partial redraw (one line, a scroll
// within a region) lands on a screen that is not there.
type Screen struct {
	Height int
	// Shown is the screen on display, with its cursor.
	Shown *termgrid.Screen
	// Normal is set while a full-screen program has switched to the
	// alternate screen: the normal screen kept under it, with the cursor
	// it comes back to when the program leaves.
	Normal *termgrid.Screen
	// ScrollTop and ScrollBottom are the scroll region's first and last
	// rows (from 0); the whole screen is 0 and Height-1.
	ScrollTop, ScrollBottom int
	Origin                  bool // origin mode (DECOM): cursor positions count from the region's top
	Insert                  bool // insert mode (IRM)
	NoWrap                  bool // autowrap (DECAWM) off
}

// AppendFrame appends the escape sequences that bring a terminal in its
// default state to s: the normal screen, then (when a full-screen program
// is on) the switch to the alternate screen and that screen, then the
// modes, the cursor last.
func (s Screen) AppendFrame(dst []byte) []byte {
	if s.Normal != nil {
		dst = s.Normal.AppendANSI(dst)
		// Saves the cursor where the normal screen has it, as the
		// program's own switch did.
		dst = append(dst, "\x1b[?1049h"...)
	}
	dst = s.Shown.AppendANSI(dst)
	region := s.Height > 0 && s.ScrollBottom > s.ScrollTop && (s.ScrollTop != 0 || s.ScrollBottom != s.Height-1)
	if region {
		dst = append(dst, "\x1b["...)
		dst = strconv.AppendInt(dst, int64(s.ScrollTop+1), 10)
		dst = append(dst, ';')
		dst = strconv.AppendInt(dst, int64(s.ScrollBottom+1), 10)
		dst = append(dst, 'r')
	}
	if s.Origin {
		dst = append(dst, "\x1b[?6h"...)
	}
	if region || s.Origin {
		// Both moved the cursor home: back to where it is.
		y := s.Shown.Cursor.Y
		if s.Origin {
			y -= s.ScrollTop
		}
		dst = append(dst, "\x1b["...)
		dst = strconv.AppendInt(dst, int64(y+1), 10)
		dst = append(dst, ';')
		dst = strconv.AppendInt(dst, int64(s.Shown.Cursor.X+1), 10)
		dst = append(dst, 'H')
	}
	if s.Insert {
		dst = append(dst, "\x1b[4h"...)
	}
	if s.NoWrap {
		dst = append(dst, "\x1b[?7l"...)
	}
	return dst
}
