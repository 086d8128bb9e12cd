package server

import (
	"regexp"
	"sort"
)

// Routing names, for each tool, the other tools its description must point
// to: where to go instead, or next. A model picks a tool from its description
// alone, so trimming descriptions for size (budget.go) must never drop these
// pointers; TestRoutingNamesAlternatives fails when one goes missing.
var Routing = map[string][]string{
	"call_destructive_tools_batch": {"run_command", "wait_for_channel", "wait_for_text"},
	"call_mutating_tools_batch":    {"run_command", "wait_for_channel", "wait_for_text"},
	"call_readonly_tools_batch":    {"run_command", "wait_for_channel", "wait_for_text"},
	"capture_pane":                 {"search_panes", "snapshot_pane"},
	"capture_pane_image":           {"capture_pane"},
	"capture_since":                {"capture_pane"},
	"clear_pane":                   {"respawn_pane"},
	"create_session":               {"create_window"},
	"create_window":                {"create_session", "split_window"},
	"delete_buffer":                {"load_buffer"},
	"display_message":              {"get_pane_info"},
	"enter_copy_mode":              {"exit_copy_mode"},
	"exit_copy_mode":               {"enter_copy_mode"},
	"find_pane_by_position":        {"get_window_info", "list_panes"},
	"get_pane_info":                {"capture_pane"},
	"get_prompt":                   {"list_prompts"},
	"get_server_info":              {"list_servers"},
	"get_session_info":             {"list_sessions"},
	"get_window_info":              {"list_windows"},
	"kill_pane":                    {"respawn_pane"},
	"kill_server":                  {"kill_session"},
	"kill_session":                 {"kill_window"},
	"kill_window":                  {"kill_pane"},
	"list_panes":                   {"capture_pane", "search_panes"},
	"list_prompts":                 {"get_prompt"},
	"list_servers":                 {"get_server_info"},
	"list_sessions":                {"list_panes", "list_windows"},
	"list_windows":                 {"list_panes"},
	"load_buffer":                  {"delete_buffer", "paste_buffer", "paste_text", "show_buffer"},
	"move_window":                  {"swap_pane"},
	"paste_buffer":                 {"load_buffer", "paste_text"},
	"paste_text":                   {"load_buffer", "send_keys"},
	"pipe_pane":                    {"capture_since"},
	"record_pane":                  {"list_recordings"},
	"list_recordings":              {"record_pane"},
	"rename_session":               {"rename_window"},
	"rename_window":                {"rename_session"},
	"resize_pane":                  {"resize_window"},
	"resize_window":                {"resize_pane"},
	"respawn_pane":                 {"kill_pane"},
	"run_command":                  {"send_and_wait", "wait_for_run"},
	"search_panes":                 {"capture_pane"},
	"select_layout":                {"resize_pane"},
	"select_pane":                  {"select_window"},
	"select_window":                {"select_pane"},
	"send_and_wait":                {"run_command", "send_keys"},
	"send_keys":                    {"capture_pane", "run_command", "send_and_wait", "wait_for_text"},
	"send_keys_batch":              {"send_keys"},
	"set_environment":              {"run_command"},
	"set_option":                   {"show_option"},
	"set_pane_title":               {"list_panes"},
	"show_buffer":                  {"load_buffer"},
	"show_environment":             {"set_environment"},
	"show_hook":                    {"show_hooks"},
	"show_hooks":                   {"show_hook"},
	"show_option":                  {"set_option"},
	"signal_channel":               {"wait_for_channel"},
	"snapshot_pane":                {"capture_pane", "get_pane_info"},
	"split_window":                 {"create_window"},
	"swap_pane":                    {"move_window"},
	"wait_for_channel":             {"signal_channel"},
	"wait_for_run":                 {"run_command"},
	"wait_for_prompt":              {"send_and_wait"},
	"wait_for_text":                {"run_command", "wait_for_channel", "wait_for_prompt"},
}

// missingAlternatives returns the alternatives a description does not name
// (as a whole word), sorted.
func missingAlternatives(description string, alternatives []string) []string {
	var out []string
	for _, a := range alternatives {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(a) + `\b`).MatchString(description) {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}
