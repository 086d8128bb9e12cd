package server

import (
	"slices"
	"time"
)

// How capture_since finds what is new since a cursor.
//
// Every row of a pane has an absolute index: history_size + y. Scrolling
// keeps a row's index (the row at y=0 becomes history row history_size),
// and so does a height change (tmux moves rows between the screen and the
// history). Two things shift indices: tmux trimming the history, and
// clear-history (or a width change, which rewraps every row). tmux trims
// only when a row scrolls in while history_size is at history-limit, and
// then it drops the oldest limit/10 rows (at least one) at once; so every
// row's index has moved by a multiple of that step, and right after a trim
// history_size is above limit - step. With history-limit 0 every scroll
// drops the top row (a step of one).
//
// So a cursor keeps, besides history_size and friends, the hashes of the
// rows from up to sinceRowsAbove rows above its anchor (the cursor row) to
// the bottom of the screen. A later call tries every shift the trimming
// rule allows and keeps those under which all the remembered rows above the
// anchor that still exist equal the rows now at the shifted positions. It
// answers exactly only when one shift survives, backed by enough rows;
// otherwise (none, or several: repeated prompts or repetitive output make
// windows of rows alike) it says lines_missed. Nothing rests on one row, or
// one hash, being unique.
//
// When history_size is too low for any trim to have happened, only the
// zero shift is possible, and it is still checked (clear-history followed by
// new output would otherwise go unseen).
//
// What this cannot see: more output than the whole grid holds that happens
// to reproduce the remembered rows at an allowed shift (with a step of one,
// history-limit under 20, any shift is allowed, so there it is likeliest).
//
// On the alternate screen the program redraws at will, so only history rows
// are compared, and the answer is every row of the screen from the first
// one that changed; entering or leaving it is lines_missed.
//
// One more fact is a proof rather than an inference: tmux stamps a window's
// activity time (whole seconds) whenever a pane of it receives output. If
// the stamp was older than tmux's clock when the cursor was issued and is
// unchanged now, nothing has been printed since, however alike the rows.

// sinceMinEvidence is how many remembered rows must agree before a shift
// that is not the only possible one is believed.
const sinceMinEvidence = 4

// sinceSnap is one read of a pane: its state and its whole grid (history
// then screen), with the rows' hashes.
type sinceSnap struct {
	HS, Limit, Width, Height, CursorX, CursorY int
	Alt                                        bool
	Activity, Clock                            int64
	Grid                                       []string
	Hashes                                     []uint64
}

// remember is the state a cursor issued on this read keeps: the pane's
// geometry and the hashes of the rows from up to sinceRowsAbove rows above
// the cursor row (and at least the whole screen) to sinceRowsBelow rows
// below it.
func (snap *sinceSnap) remember() *sinceState {
	st := &sinceState{HS: snap.HS, Limit: snap.Limit, Width: snap.Width, Height: snap.Height,
		Anchor: snap.HS + snap.CursorY, Alt: snap.Alt, Activity: snap.Activity, Clock: snap.Clock, Issued: time.Now()}
	st.Top = max(0, min(st.Anchor-sinceRowsAbove, st.HS))
	if st.Top < len(snap.Hashes) {
		end := min(len(snap.Hashes), st.Anchor+1+sinceRowsBelow)
		st.Rows = slices.Clone(snap.Hashes[st.Top:end])
	}
	return st
}

// alignSince returns the rows of now that are new or rewritten since old,
// or missed when that cannot be established exactly.
func alignSince(old *sinceState, now *sinceSnap) (rows []string, missed bool) {
	shift, missed := alignShift(old, now)
	if missed {
		return nil, true
	}
	return rowsFrom(old, now, shift), false
}

// alignShift returns how many rows the grid has lost at its top since old
// (tmux trimmed its history): old's anchor row is now at old.Anchor-shift.
// missed when that cannot be established exactly.
func alignShift(old *sinceState, now *sinceSnap) (shift int, missed bool) {
	if now.Width != old.Width || now.Limit != old.Limit || now.Alt != old.Alt {
		// Rewrapped rows, another trim step, or another screen: the rows
		// of the cursor are not where they were.
		return 0, true
	}
	step := max(old.Limit/10, 1)
	grew := now.Height > old.Height
	quiet := old.Activity < old.Clock && now.Activity == old.Activity
	var shifts []int
	only := false // a single shift is possible at all
	switch {
	case quiet && now.HS == old.HS && now.Height == old.Height:
		shifts, only = []int{0}, true
	case old.Limit > 0 && now.HS <= old.Limit-step:
		if now.HS < old.HS && !grew {
			return 0, true // history cleared
		}
		shifts, only = []int{0}, true
	default:
		if now.HS >= old.HS || grew {
			shifts = append(shifts, 0)
		}
		// Shifts that leave the anchor and at least one row above it in
		// the grid; a larger one means the rows were lost anyway.
		for d := step; d < old.Anchor; d += step {
			shifts = append(shifts, d)
		}
	}
	found, shift, evidence := 0, 0, 0
	for _, d := range shifts {
		if n, ok := agree(old, now, d); ok {
			found++
			shift, evidence = d, n
		}
	}
	if found != 1 {
		return 0, true
	}
	if !only && evidence < max(1, min(sinceMinEvidence, old.Anchor-old.Top)) {
		// Too few rows to tell this shift from one that trimmed the
		// anchor away (not among the shifts tried).
		return 0, true
	}
	return shift, false
}

// agree compares the remembered rows above the anchor with the rows now
// shift rows higher, and reports how many were compared and whether all
// agreed. On the alternate screen the program may redraw anything on it,
// so only history rows (then and now) count.
func agree(old *sinceState, now *sinceSnap, shift int) (int, bool) {
	n := 0
	for i := max(old.Top, shift); i < old.Anchor && i-old.Top < len(old.Rows); i++ {
		j := i - shift
		if old.Alt && (i >= old.HS || j >= now.HS) {
			continue
		}
		if j >= len(now.Hashes) || old.Rows[i-old.Top] != now.Hashes[j] {
			return n, false
		}
		n++
	}
	return n, true
}

// rowsFrom returns the rows from the anchor (the top of the screen, on the
// alternate screen) down, less the leading rows left as they were.
func rowsFrom(old *sinceState, now *sinceSnap, shift int) []string {
	start := old.Anchor
	if old.Alt {
		start = min(old.HS, old.Anchor)
	}
	n := min(max(start-shift, 0), len(now.Grid))
	k := 0
	for n+k < len(now.Grid) {
		i := start + k - old.Top
		if i < 0 || i >= len(old.Rows) || old.Rows[i] != now.Hashes[n+k] {
			break
		}
		k++
	}
	return trimBlankTail(now.Grid[n+k:])
}
