package server

import (
	"reflect"
	"testing"
)

// TestRoutingNamesAlternatives: every tool has a routing entry naming at
// least one other, existing tool, and its description names each of them.
func TestRoutingNamesAlternatives(t *testing.T) {
	s := allToolsServer(t)
	names := map[string]bool{}
	for _, tool := range s.All() {
		names[tool.Name] = true
	}
	for _, tool := range s.All() {
		alts, ok := Routing[tool.Name]
		if !ok || len(alts) == 0 {
			t.Errorf("%s: no alternatives in Routing", tool.Name)
			continue
		}
		for _, a := range alts {
			if !names[a] || a == tool.Name {
				t.Errorf("%s: Routing names %q, which is not another tool", tool.Name, a)
			}
		}
		if miss := missingAlternatives(tool.Description, alts); len(miss) > 0 {
			t.Errorf("%s: description no longer names %v: %q", tool.Name, miss, tool.Description)
		}
	}
	for name := range Routing {
		if !names[name] {
			t.Errorf("Routing has an entry for %s, which is not a tool", name)
		}
	}
}

// TestMissingAlternatives: a name counts only as a whole word, so
// capture_pane inside snapshot_pane's text or a prefix does not hide a loss.
func TestMissingAlternatives(t *testing.T) {
	for _, c := range []struct {
		desc string
		alts []string
		want []string
	}{
		{"Use snapshot_pane or search_panes.", []string{"snapshot_pane", "search_panes"}, nil},
		{"Use snapshot_pane.", []string{"snapshot_pane", "search_panes"}, []string{"search_panes"}},
		{"see show_hooks", []string{"show_hook"}, []string{"show_hook"}},
		{"kill_panes", []string{"kill_pane"}, []string{"kill_pane"}},
	} {
		if got := missingAlternatives(c.desc, c.alts); !reflect.DeepEqual(got, c.want) {
			t.Errorf("missingAlternatives(%q, %v) = %v, want %v", c.desc, c.alts, got, c.want)
		}
	}
}
