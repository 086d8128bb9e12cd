package server

import (
	"regexp"
	"sort"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// filterOps are the lookup operators of the reference's Django-style
// filters ("field__op": value).
var filterOps = map[string]func(have, want string) (bool, error){
	"eq":          func(h, w string) (bool, error) { return h == w, nil },
	"exact":       func(h, w string) (bool, error) { return h == w, nil },
	"iexact":      func(h, w string) (bool, error) { return strings.EqualFold(h, w), nil },
	"contains":    func(h, w string) (bool, error) { return strings.Contains(h, w), nil },
	"icontains":   func(h, w string) (bool, error) { return strings.Contains(strings.ToLower(h), strings.ToLower(w)), nil },
	"startswith":  func(h, w string) (bool, error) { return strings.HasPrefix(h, w), nil },
	"istartswith": func(h, w string) (bool, error) { return strings.HasPrefix(strings.ToLower(h), strings.ToLower(w)), nil },
	"endswith":    func(h, w string) (bool, error) { return strings.HasSuffix(h, w), nil },
	"iendswith":   func(h, w string) (bool, error) { return strings.HasSuffix(strings.ToLower(h), strings.ToLower(w)), nil },
	"in":          func(h, w string) (bool, error) { return inList(h, w), nil },
	"nin":         func(h, w string) (bool, error) { return !inList(h, w), nil },
	"regex":       func(h, w string) (bool, error) { return regexMatch(h, w, false) },
	"iregex":      func(h, w string) (bool, error) { return regexMatch(h, w, true) },
}

func inList(have, list string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == have {
			return true
		}
	}
	return false
}

func regexMatch(have, pattern string, fold bool) (bool, error) {
	if fold {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return false, expectedf("invalid regular expression in filters: %v", err)
	}
	return re.MatchString(have), nil
}

// FiltersArg is the filters argument of the list tools.
type filterSpec struct {
	field, op, want string
}

// parseFilters validates the filters argument. Keys are "field" or
// "field__op"; "in"/"nin" take a comma-separated list. A bad operator is an
// expected error that lists the valid ones.
func parseFilters(a StringMapArg) ([]filterSpec, error) {
	m, err := a.Map("filters")
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []filterSpec
	for _, k := range keys {
		field, op := k, "exact"
		if i := strings.LastIndex(k, "__"); i > 0 {
			field, op = k[:i], k[i+2:]
		}
		if filterOps[op] == nil {
			ops := make([]string, 0, len(filterOps))
			for o := range filterOps {
				ops = append(ops, o)
			}
			sort.Strings(ops)
			return nil, expectedf("invalid filter operator %q in %q; valid operators: %s", op, k, strings.Join(ops, ", "))
		}
		if op == "regex" || op == "iregex" {
			if _, err := regexMatch("", m[k], op == "iregex"); err != nil {
				return nil, err
			}
		}
		out = append(out, filterSpec{field: field, op: op, want: m[k]})
	}
	return out, nil
}

// matchFilters reports whether a row passes every filter. Fields are tmux
// format names (pane_id, session_name, window_name...); a field the row does
// not have never matches.
func matchFilters(r tmux.Row, fs []filterSpec) bool {
	for _, f := range fs {
		have, ok := r[f.field]
		if !ok {
			return false
		}
		m, err := filterOps[f.op](have, f.want)
		if err != nil || !m {
			return false
		}
	}
	return true
}

// filterFields adds the fields the filters name to a query's field list,
// so filtering on, say, window_name works without asking every query for it.
func filterFields(fields []string, fs []filterSpec) []string {
	for _, f := range fs {
		if validFormatName(f.field) {
			fields = withField(fields, f.field)
		}
	}
	return fields
}

// validFormatName accepts plain tmux format variable names only, so a
// filter key can never inject format syntax into a query.
func validFormatName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
