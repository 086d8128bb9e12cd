package server

import (
	"encoding/json"
	"testing"
)

// TestOptionValueTyping pins libtmux's conversion rule (options.py
// convert_value, explode_arrays, explode_complex) as the wire shows it.
func TestOptionValueTyping(t *testing.T) {
	for _, c := range []struct {
		name string
		got  any
		want string
	}{
		{"digits", optionScalar("2000"), `2000`},
		{"leading zeros", optionScalar("042"), `42`},
		{"zero", optionScalar("000"), `0`},
		{"beyond int64", optionScalar("123456789012345678901234567890"), `123456789012345678901234567890`},
		{"negative stays a string", optionScalar("-1"), `"-1"`},
		{"decimal stays a string", optionScalar("1.5"), `"1.5"`},
		{"on", optionScalar("on"), `true`},
		{"off", optionScalar("off"), `false`},
		{"On is not on", optionScalar("On"), `"On"`},
		{"empty", optionScalar(""), `""`},
		{"non-ASCII digit", optionScalar("²"), `"²"`},
		{"format", optionScalar("%50"), `"%50"`},
		{"sparse array keeps tmux's order, strings unconverted", optionArray("user-keys",
			[]string{"user-keys[0]", "user-keys[3]", "user-keys[10]"}, []string{"on", "12", "x"}), `{"0":"on","3":"12","10":"x"}`},
		{"command-alias", optionArray("command-alias",
			[]string{"command-alias[0]", "command-alias[1]", "command-alias[2]"}, []string{"split-pane=split-window", "bad", "info=show-messages -JT"}),
			`{"split-pane":"split-window","info":"show-messages -JT"}`},
		{"terminal-features", optionArray("terminal-features",
			[]string{"terminal-features[0]", "terminal-features[1]"}, []string{"xterm*:clipboard:ccolour", "screen*:title"}),
			`{"xterm*":["clipboard","ccolour"],"screen*":["title"]}`},
		{"terminal-overrides", optionArray("terminal-overrides",
			[]string{"terminal-overrides[0]", "terminal-overrides[1]"}, []string{"xterm*:Tc:colors=256", "xterm*:Ms=x"}),
			`{"xterm*":{"Tc":null,"colors":256,"Ms":"x"}}`},
	} {
		raw, err := json.Marshal(c.got)
		if err != nil || string(raw) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, raw, err, c.want)
		}
	}
}
