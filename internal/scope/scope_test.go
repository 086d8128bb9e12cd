package scope

import (
	"errors"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Scope
		str  string
	}{
		{"", Scope{}, "none"},
		{"none", Scope{}, "none"},
		{" own ", Scope{Own: true, set: true}, "own"},
		{"sessions=editor", Scope{Names: []string{"editor"}, set: true}, "sessions=editor"},
		{"sessions=ci-*,$3, notes", Scope{Names: []string{"notes"}, IDs: []string{"$3"}, Prefixes: []string{"ci-"}, set: true}, "sessions=notes,$3,ci-*"},
		{"own,sessions=a,own", Scope{Own: true, Names: []string{"a", "own"}, set: true}, "own,sessions=a,own"},
		{"sessions=*", Scope{Prefixes: []string{""}, set: true}, "sessions=*"},
		{"sessions=$x", Scope{Names: []string{"$x"}, set: true}, "sessions=$x"},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		if got.String() != tc.str {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got.String(), tc.str)
		}
		if again, err := Parse(got.String()); err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(String()) of %q = %+v, %v", tc.in, again, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{"all", "own,", "sessions=", "sessions=a,,b", "sessions=a.b", "sessions=x:1",
		"sessions=a*b", "sessions=**", "owner", "own,sessions", "sessions=a, ,b", "OWN"} {
		sc, err := Parse(in)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %+v, %v; want ErrSyntax", in, sc, err)
		}
	}
}

func TestAdmits(t *testing.T) {
	type sess struct{ id, name, owner string }
	editor := sess{"$0", "editor", ""}
	mine := sess{"$1", "work", "alice"}
	theirs := sess{"$2", "ci-build", "bob"}
	for _, tc := range []struct {
		scope    string
		identity string
		want     []bool // editor, mine, theirs
	}{
		{"", "alice", []bool{true, true, true}},
		{"own", "alice", []bool{false, true, false}},
		{"own", "bob", []bool{false, false, true}},
		{"own", "", []bool{false, false, false}},
		{"sessions=editor", "alice", []bool{true, false, false}},
		{"sessions=ci-*", "alice", []bool{false, false, true}},
		{"sessions=$1", "bob", []bool{false, true, false}},
		{"own,sessions=editor", "alice", []bool{true, true, false}},
		{"sessions=*", "x", []bool{true, true, true}},
	} {
		sc := mustParse(t, tc.scope)
		for i, s := range []sess{editor, mine, theirs} {
			if got := sc.Admits(s.id, s.name, s.owner, tc.identity); got != tc.want[i] {
				t.Errorf("scope %q identity %q: Admits(%v) = %v, want %v", tc.scope, tc.identity, s, got, tc.want[i])
			}
		}
	}
}

// mustParse is Parse for a test's own valid scopes.
func mustParse(t *testing.T, s string) Scope {
	t.Helper()
	sc, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
