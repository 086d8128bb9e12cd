package scrape

import (
	"strings"
	"testing"
)

func TestParseRejects(t *testing.T) {
	good := "# HELP a_total A.\n# TYPE a_total counter\na_total{tool=\"x\",outcome=\"ok\"} 3\n" +
		"# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.3\nh_count 2\n"
	if e, err := Parse(strings.NewReader(good)); err != nil {
		t.Fatalf("good exposition refused: %v", err)
	} else if v, ok := e.Value("a_total", map[string]string{"tool": "x", "outcome": "ok"}); !ok || v != 3 {
		t.Errorf("a_total = %v %v", v, ok)
	}
	bad := []struct{ name, text string }{
		{"no TYPE", "a 1\n"},
		{"other comment", "# hello\n"},
		{"sample of another family", "# TYPE a counter\nb 1\n"},
		{"negative counter", "# TYPE a counter\na -1\n"},
		{"unquoted label", "# TYPE a gauge\na{x=1} 1\n"},
		{"bad escape", "# TYPE a gauge\na{x=\"\\t\"} 1\n"},
		{"unterminated", "# TYPE a gauge\na{x=\"1} 1\n"},
		{"repeated series", "# TYPE a gauge\na 1\na 2\n"},
		{"repeated label", "# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n"},
		{"bad value", "# TYPE a gauge\na one\n"},
		{"family split", "# TYPE a gauge\na{x=\"1\"} 1\n# TYPE b gauge\nb 1\n# HELP a again\n"},
		{"TYPE twice", "# TYPE a gauge\n# TYPE a gauge\n"},
		{"no +Inf", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n"},
		{"not cumulative", "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"},
		{"count differs", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 2\n"},
		{"no value", "# TYPE a gauge\na\n"},
		{"bad name", "# TYPE 1a gauge\n"},
	}
	for _, c := range bad {
		if _, err := Parse(strings.NewReader(c.text)); err == nil {
			t.Errorf("%s: accepted %q", c.name, c.text)
		}
	}
}
