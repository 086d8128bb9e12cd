package config

import (
	"errors"
	"strings"
	"testing"
)

// TestConfirmSettings: --confirm and --confirm-fallback from flags and
// environment; anything but their words stops start-up without echoing
// the value; a fallback without --confirm warns that it decides nothing.
func TestConfirmSettings(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		flags     map[string]string
		confirm   Confirm
		allow     bool
		threshold Tier
		warns     int
		invalid   bool
	}{
		{"default", nil, nil, ConfirmDefault, false, Destructive, 0, false},
		{"destructive", map[string]string{"TMUX_MCP_CONFIRM": "destructive"}, nil, ConfirmDestructive, false, Destructive, 0, false},
		{"mutating, any case", map[string]string{"TMUX_MCP_CONFIRM": " Mutating"}, nil, ConfirmMutating, false, Mutating, 0, false},
		{"off", nil, map[string]string{"confirm": "off"}, ConfirmOff, false, 0, 0, false},
		{"flag wins", map[string]string{"TMUX_MCP_CONFIRM": "off"}, map[string]string{"confirm": "mutating"}, ConfirmMutating, false, Mutating, 0, false},
		{"fallback allow", map[string]string{"TMUX_MCP_CONFIRM": "destructive", "TMUX_MCP_CONFIRM_FALLBACK": "allow"}, nil, ConfirmDestructive, true, Destructive, 0, false},
		{"fallback refuse", nil, map[string]string{"confirm": "destructive", "confirm-fallback": "refuse"}, ConfirmDestructive, false, Destructive, 0, false},
		{"fallback alone", map[string]string{"TMUX_MCP_CONFIRM_FALLBACK": "allow"}, nil, ConfirmDefault, true, Destructive, 1, false},
		{"typo", map[string]string{"TMUX_MCP_CONFIRM": "destrutcive"}, nil, 0, false, 0, 0, true},
		{"bad fallback", map[string]string{"TMUX_MCP_CONFIRM": "mutating", "TMUX_MCP_CONFIRM_FALLBACK": "maybe-secret"}, nil, ConfirmMutating, false, Mutating, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, warns, err := Load(envOf(tc.env), tc.flags)
			if tc.invalid {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("want ErrInvalid, got %v", err)
				}
				for _, v := range tc.env {
					if strings.Contains(err.Error(), v) {
						t.Errorf("the error echoes the value: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Confirm != tc.confirm || c.ConfirmFallbackAllow != tc.allow || c.Confirm.Threshold() != tc.threshold || len(warns) != tc.warns {
				t.Errorf("confirm %v allow %v threshold %v warnings %v", c.Confirm, c.ConfirmFallbackAllow, c.Confirm.Threshold(), warns)
			}
		})
	}
}
