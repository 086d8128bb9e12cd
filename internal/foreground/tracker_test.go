package foreground

import (
	"testing"
	"time"
)

// TestTracker: a state that lasts across reports lasts since first seen;
// the OS figure of a blocked state wins; a running group seen doing
// something else earlier runs since then at most.
func TestTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	var tr Tracker
	steps := []struct {
		at    float64
		r     Report
		wantS float64
	}{
		{0, Report{Pgrp: 5, State: WaitingForInput, StateSeconds: 2}, 2}, // the OS says 2 s
		{3, Report{Pgrp: 5, State: WaitingForInput, StateSeconds: 5}, 5}, // still the OS
		{4, Report{Pgrp: 5, State: Running, StateSeconds: 600}, 1},       // was waiting at 3 s: running 1 s at most
		{6, Report{Pgrp: 5, State: Running, StateSeconds: 0.5}, 3},       // running since 3 s without a break
		{7, Report{Pgrp: 9, State: Sleeping, StateSeconds: 0}, 0},        // another group, no OS figure
		{9.5, Report{Pgrp: 9, State: Sleeping, StateSeconds: 0}, 2.5},    // since first seen
		{10, Report{Pgrp: 9, State: Unknown}, 0},                         // unknown is not tracked
		{11, Report{Pgrp: 9, State: Sleeping, StateSeconds: 0}, 4},       // ... and breaks nothing
	}
	for i, st := range steps {
		st.r.At = at(st.at)
		if got := tr.Observe("pane", st.r); got.StateSeconds != st.wantS {
			t.Errorf("step %d (%s at %vs): state_seconds %v, want %v", i, st.r.State, st.at, got.StateSeconds, st.wantS)
		}
	}
}
