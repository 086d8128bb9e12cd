// Package scrape reads the Prometheus text exposition format (version
// 0.0.4) strictly, for tests that scrape /metrics: every sample belongs to
// a family declared by a TYPE line before it, each family's lines are
// together, no series repeats, label values are quoted and escaped as the
// format says, counters are not negative, and a histogram's buckets are
// cumulative and end with +Inf equal to its _count. A test then asserts on
// the values it read. It is not linked into the binary.
package scrape

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Sample is one series and its value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Family is a metric family: its TYPE, HELP and samples, in order.
type Family struct {
	Name, Type, Help string
	Samples          []Sample
}

// Exposition is a parsed scrape.
type Exposition struct {
	Families map[string]*Family
	series   map[string]float64
}

// Parse reads a whole exposition and checks it (see the package comment).
func Parse(r io.Reader) (*Exposition, error) {
	e := &Exposition{Families: map[string]*Family{}, series: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur *Family
	done := map[string]bool{} // families whose lines have ended
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		fail := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", n, line, fmt.Sprintf(format, args...))
		}
		if strings.HasPrefix(line, "#") {
			f := strings.SplitN(line, " ", 4)
			if len(f) < 3 || f[0] != "#" || (f[1] != "HELP" && f[1] != "TYPE") {
				return nil, fail("a comment other than # HELP or # TYPE")
			}
			name := f[2]
			if !validName(name) {
				return nil, fail("bad metric name")
			}
			if done[name] {
				return nil, fail("family %s seen before", name)
			}
			fam := e.Families[name]
			if fam == nil {
				fam = &Family{Name: name}
				e.Families[name] = fam
			}
			if cur != nil && cur != fam {
				done[cur.Name] = true
			}
			cur = fam
			rest := ""
			if len(f) == 4 {
				rest = f[3]
			}
			switch f[1] {
			case "HELP":
				if fam.Help != "" {
					return nil, fail("second HELP")
				}
				fam.Help = rest
			case "TYPE":
				if fam.Type != "" || len(fam.Samples) > 0 {
					return nil, fail("TYPE repeated or after samples")
				}
				switch rest {
				case "counter", "gauge", "histogram", "summary", "untyped":
					fam.Type = rest
				default:
					return nil, fail("unknown type %q", rest)
				}
			}
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fail("%v", err)
		}
		if cur == nil || cur.Type == "" || !belongs(cur, s.Name) {
			return nil, fail("sample outside its family's TYPE")
		}
		if cur.Type == "counter" && (s.Value < 0 || math.IsNaN(s.Value)) {
			return nil, fail("negative counter")
		}
		k := key(s.Name, s.Labels)
		if _, dup := e.series[k]; dup {
			return nil, fail("series repeated")
		}
		e.series[k] = s.Value
		cur.Samples = append(cur.Samples, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, f := range e.Families {
		if f.Type == "histogram" {
			if err := checkHistogram(f); err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
		}
	}
	return e, nil
}

// Value is the value of the series name{labels}; false when it is absent.
func (e *Exposition) Value(name string, labels map[string]string) (float64, bool) {
	v, ok := e.series[key(name, labels)]
	return v, ok
}

// Sum adds the values of every series of name whose labels include match.
func (e *Exposition) Sum(name string, match map[string]string) float64 {
	var total float64
	for _, f := range e.Families {
		for _, s := range f.Samples {
			if s.Name != name {
				continue
			}
			ok := true
			for k, v := range match {
				ok = ok && s.Labels[k] == v
			}
			if ok {
				total += s.Value
			}
		}
	}
	return total
}

// LabelValues lists every label name=value pair in the exposition.
func (e *Exposition) LabelValues() []string {
	var out []string
	for _, f := range e.Families {
		for _, s := range f.Samples {
			for k, v := range s.Labels {
				out = append(out, k+"="+v)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func belongs(f *Family, name string) bool {
	switch f.Type {
	case "histogram":
		return name == f.Name+"_bucket" || name == f.Name+"_sum" || name == f.Name+"_count"
	case "summary":
		return name == f.Name || name == f.Name+"_sum" || name == f.Name+"_count"
	}
	return name == f.Name
}

func key(name string, labels map[string]string) string {
	ks := make([]string, 0, len(labels))
	for k := range labels {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range ks {
		b.WriteString("\x00" + k + "=" + labels[k])
	}
	return b.String()
}

func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return s != ""
}

func validLabelName(s string) bool { return validName(s) && !strings.Contains(s, ":") }

// parseSample reads `name{label="value",...} value [timestamp]`.
func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := 0
	for i < len(line) && line[i] != '{' && line[i] != ' ' {
		i++
	}
	s.Name = line[:i]
	if !validName(s.Name) {
		return s, errors.New("bad metric name")
	}
	if i < len(line) && line[i] == '{' {
		i++
		for {
			if i < len(line) && line[i] == '}' {
				i++
				break
			}
			j := i
			for j < len(line) && line[j] != '=' {
				j++
			}
			ln := line[i:j]
			if !validLabelName(ln) || j+1 >= len(line) || line[j+1] != '"' {
				return s, errors.New("bad label")
			}
			var v strings.Builder
			j += 2
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' {
					j++
					if j >= len(line) {
						return s, errors.New("unfinished escape")
					}
					switch line[j] {
					case '\\':
						v.WriteByte('\\')
					case '"':
						v.WriteByte('"')
					case 'n':
						v.WriteByte('\n')
					default:
						return s, fmt.Errorf("bad escape \\%c", line[j])
					}
					continue
				}
				v.WriteByte(line[j])
			}
			if j >= len(line) {
				return s, errors.New("unterminated label value")
			}
			if _, dup := s.Labels[ln]; dup {
				return s, errors.New("label repeated")
			}
			s.Labels[ln] = v.String()
			i = j + 1
			switch {
			case i < len(line) && line[i] == ',':
				i++
			case i < len(line) && line[i] == '}':
			default:
				return s, errors.New("expected , or } after a label")
			}
		}
	}
	if i >= len(line) || line[i] != ' ' {
		return s, errors.New("no value")
	}
	f := strings.Split(line[i+1:], " ")
	if len(f) < 1 || len(f) > 2 {
		return s, errors.New("expected a value and at most a timestamp")
	}
	v, err := parseValue(f[0])
	if err != nil {
		return s, err
	}
	s.Value = v
	if len(f) == 2 {
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			return s, errors.New("bad timestamp")
		}
	}
	return s, nil
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || strings.ContainsAny(s, "_xXpP") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity") {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return v, nil
}

// checkHistogram checks each series of a histogram (its labels but le):
// buckets in increasing le, counts that never decrease, a +Inf bucket
// equal to _count, and a _sum.
func checkHistogram(f *Family) error {
	type series struct {
		les        []float64
		counts     []float64
		count, sum *float64
	}
	all := map[string]*series{}
	get := func(labels map[string]string) *series {
		k := key("", labels)
		if all[k] == nil {
			all[k] = &series{}
		}
		return all[k]
	}
	for _, s := range f.Samples {
		switch s.Name {
		case f.Name + "_bucket":
			le, ok := s.Labels["le"]
			if !ok {
				return errors.New("a bucket without le")
			}
			b, err := parseValue(le)
			if err != nil {
				return fmt.Errorf("le: %w", err)
			}
			rest := maps(s.Labels, "le")
			ser := get(rest)
			if n := len(ser.les); n > 0 && (b <= ser.les[n-1] || s.Value < ser.counts[n-1]) {
				return fmt.Errorf("buckets out of order or not cumulative at le=%s", le)
			}
			ser.les = append(ser.les, b)
			ser.counts = append(ser.counts, s.Value)
		case f.Name + "_count":
			v := s.Value
			get(s.Labels).count = &v
		case f.Name + "_sum":
			v := s.Value
			get(s.Labels).sum = &v
		}
	}
	for k, ser := range all {
		n := len(ser.les)
		switch {
		case n == 0 || !math.IsInf(ser.les[n-1], 1):
			return fmt.Errorf("series %q has no +Inf bucket", k)
		case ser.count == nil || ser.sum == nil:
			return fmt.Errorf("series %q lacks _count or _sum", k)
		case *ser.count != ser.counts[n-1]:
			return fmt.Errorf("series %q: _count %g but +Inf bucket %g", k, *ser.count, ser.counts[n-1])
		}
	}
	return nil
}

func maps(m map[string]string, drop string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if k != drop {
			out[k] = v
		}
	}
	return out
}
