package server

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// filterOps are the lookup operators of the reference's Django-style
// filters ("field__op": value). regex and iregex have no function here:
// parseFilters compiles their pattern once (filterSpec.re).
var filterOps = map[string]func(have, want string) bool{
	"eq":          func(h, w string) bool { return h == w },
	"exact":       func(h, w string) bool { return h == w },
	"iexact":      strings.EqualFold,
	"contains":    strings.Contains,
	"icontains":   func(h, w string) bool { return strings.Contains(strings.ToLower(h), strings.ToLower(w)) },
	"startswith":  strings.HasPrefix,
	"istartswith": func(h, w string) bool { return strings.HasPrefix(strings.ToLower(h), strings.ToLower(w)) },
	"endswith":    strings.HasSuffix,
	"iendswith":   func(h, w string) bool { return strings.HasSuffix(strings.ToLower(h), strings.ToLower(w)) },
	"in":          inList,
	"nin":         func(h, w string) bool { return !inList(h, w) },
	"regex":       nil,
	"iregex":      nil,
}

func inList(have, list string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.TrimSpace(v) == have {
			return true
		}
	}
	return false
}

// filterSpec is one parsed filter of the list tools' filters argument.
type filterSpec struct {
	field, op, want string
	re              *regexp.Regexp // regex and iregex, compiled once
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
		if _, ok := filterOps[op]; !ok {
			ops := make([]string, 0, len(filterOps))
			for o := range filterOps {
				ops = append(ops, o)
			}
			sort.Strings(ops)
			return nil, expectedf("invalid filter operator %s in %s; valid operators: %s", errarg.Quoted(op), errarg.Quoted(k), strings.Join(ops, ", "))
		}
		f := filterSpec{field: field, op: op, want: m[k]}
		if op == "regex" || op == "iregex" {
			pattern := m[k]
			if op == "iregex" {
				pattern = "(?i)" + pattern
			}
			if f.re, err = regexp.Compile(pattern); err != nil {
				return nil, expectedf("invalid regular expression in filters: %v", regexErr(err))
			}
		}
		out = append(out, f)
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
		if f.re != nil && !f.re.MatchString(have) || f.re == nil && !filterOps[f.op](have, f.want) {
			return false
		}
	}
	return true
}

// filterFields adds the fields the filters name to a query's field list,
// so filtering on, say, window_name works without asking every query for it.
func filterFields(fields []string, fs []filterSpec) []string {
	extra := []string{}
	for _, f := range fs {
		if validFormatName(f.field) && !slices.Contains(fields, f.field) && !slices.Contains(extra, f.field) {
			extra = append(extra, f.field)
		}
	}
	if len(extra) == 0 || len(fields) == 0 {
		return append(extra, fields...)
	}
	// Added before the last field, which stays last: it is the free-form
	// one (a path) that absorbs stray separators (see tmux.ParseRows).
	last := len(fields) - 1
	return append(append(append(extra[:0:0], fields[:last]...), extra...), fields[last])
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
