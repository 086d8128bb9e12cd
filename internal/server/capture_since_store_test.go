package server

import (
	"strings"
	"testing"
)

func TestCursorStore(t *testing.T) {
	cs := newCursorStore(3)
	var ids []string
	for i := range 4 {
		text := cs.put(LocalOwner, &sinceState{Pane: "%7", HS: i})
		if len(text) >= 200 {
			t.Fatalf("cursor %q is long", text)
		}
		pane, id, ok := parseCursor(text)
		if !ok || pane != "%7" {
			t.Fatalf("parseCursor(%q) = %q, %q, %v", text, pane, id, ok)
		}
		ids = append(ids, id)
	}
	if cs.len() != 3 {
		t.Fatalf("store holds %d, want its cap 3", cs.len())
	}
	if cs.get(LocalOwner, ids[0]) != nil {
		t.Error("the least recently used cursor was not evicted")
	}
	// Using a cursor makes it recent: the next put evicts another.
	if st := cs.get(LocalOwner, ids[1]); st == nil || st.HS != 1 {
		t.Fatalf("get = %+v", st)
	}
	cs.put(LocalOwner, &sinceState{Pane: "%7"})
	if cs.get(LocalOwner, ids[1]) == nil || cs.get(LocalOwner, ids[2]) != nil {
		t.Error("eviction is not least recently used")
	}
	if cs.get("someone-else", ids[3]) != nil {
		t.Error("another owner read a cursor")
	}
}

func TestParseCursor(t *testing.T) {
	good := cursorPrefix + "%12:" + strings.Repeat("A", 22)
	cases := []struct {
		text string
		ok   bool
	}{
		{good, true},
		{"capture-since-v2:" + "%12:" + strings.Repeat("A", 22), false},
		{cursorPrefix + "12:" + strings.Repeat("A", 22), false},
		{cursorPrefix + "%:" + strings.Repeat("A", 22), false},
		{cursorPrefix + "%1x:" + strings.Repeat("A", 22), false},
		{cursorPrefix + "%12:" + strings.Repeat("A", 21), false},
		{cursorPrefix + "%12:" + strings.Repeat("*", 22), false},
		{cursorPrefix + "%12", false},
		{"", false},
	}
	for _, c := range cases {
		if _, _, ok := parseCursor(c.text); ok != c.ok {
			t.Errorf("parseCursor(%q) ok = %v, want %v", c.text, ok, c.ok)
		}
	}
}
