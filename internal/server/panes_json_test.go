package server

import (
	"bytes"
	"testing"
)

// TestPaneListJSONMatches: paneList's own encoding is marshalJSON's, byte
// for byte, for panes with every field set, none set, strings that need
// escaping (quotes, backslashes, control characters, HTML characters,
// U+2028, invalid UTF-8, non-ASCII), a host and a foreground object.
func TestPaneListJSONMatches(t *testing.T) {
	s := func(v string) *string { return &v }
	i := func(v int) *int { return &v }
	b := func(v bool) *bool { return &v }
	full := PaneInfoForeground{PaneInfo: PaneInfo{
		PaneEdges: PaneEdges{PaneLeft: i(0), PaneTop: i(-1), PaneRight: i(199), PaneBottom: i(1 << 40), PaneAtLeft: b(true),
			PaneAtRight: b(false), PaneAtTop: b(true), PaneAtBottom: b(false), PaneTTY: s("/dev/pts/7")},
		IsCaller: b(false), PaneActive: s("1"), PaneCurrentCommand: s("vim"), PaneCurrentPath: s("/tmp/with space"),
		PaneHeight: s("24"), PaneID: "%3", PaneIndex: s("0"), PanePID: s("123"), PaneTitle: s("host"), PaneWidth: s("80"),
		SessionID: s("$0"), WindowID: s("@1"),
	}}
	odd := full
	odd.PaneTitle = s("\"quoted\" \\ back <b>&amp;</b> \u2028\u2029 \x00\x01\x1f\t\n\r\b\f \x7f é 日本 \U0001F600 \xff\xfe")
	odd.PaneCurrentPath = s("/tmp/ünï dïr (deleted)")
	odd.PaneCurrentCommand = s("")
	odd.Host = s("box")
	odd.Foreground = &Foreground{PID: 9, Command: "<py>", State: "running", StateSeconds: 1.25, Basis: "exact"}
	for name, l := range map[string]paneList{
		"none":    nil,
		"empty":   {},
		"full":    {full},
		"all nil": {{PaneInfo: PaneInfo{PaneID: ""}}},
		"odd":     {odd},
		"several": {full, odd, {PaneInfo: PaneInfo{PaneID: "%9"}}, full},
	} {
		got, err := marshalResult(l)
		if err != nil {
			t.Fatal(err)
		}
		want, err := marshalJSON([]PaneInfoForeground(l))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
