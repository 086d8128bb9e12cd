package server

// Result models of the option, environment, hook and buffer tools
// (contract 1.6, 1.8, 1.9, 1.10), with the reference's field names and JSON
// types.

// OptionResult is show_option's answer.
type OptionResult struct {
	Option string `json:"option" desc:"Option name"`
	Value  any    `json:"value" desc:"The value, typed as libtmux types it: all digits an integer, on/off a boolean, else a string; an array option an object keyed by element index (command-alias, terminal-features and terminal-overrides exploded further); null when the option is not set."`
}

// OptionSetResult is set_option's answer.
type OptionSetResult struct {
	Option string `json:"option" desc:"Option name"`
	Value  string `json:"value" desc:"Value that was set"`
	Status string `json:"status" desc:"'set'"`
}

// EnvVars maps a variable to its value; a variable marked for removal from
// spawned processes appears as "-NAME": true, as libtmux reports it.
type EnvVars map[string]any

func (EnvVars) jsonSchema() map[string]any {
	// A type list, not anyOf of two schemas: the same values, and ajv
	// compiles it as one check instead of two subschemas (docs/cold-start.md).
	return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": []any{"string", "boolean"}}}
}

// EnvironmentResult is show_environment's answer.
type EnvironmentResult struct {
	Variables EnvVars `json:"variables" desc:"Variable name to value; a variable tmux removes from new processes appears as \"-NAME\": true."`
}

// EnvironmentSetResult is set_environment's answer.
type EnvironmentSetResult struct {
	Name   string `json:"name" desc:"Variable name"`
	Value  string `json:"value" desc:"Value that was set"`
	Status string `json:"status" desc:"'set'"`
}

// HookEntry is one command of a hook.
type HookEntry struct {
	HookName string `json:"hook_name" desc:"Hook name (e.g. 'pane-exited')"`
	Index    *int   `json:"index" desc:"Array index of the command, null for a scalar hook"`
	Command  string `json:"command" desc:"The tmux command the hook runs, as tmux prints it"`
}

// HookListResult is the answer of show_hooks and show_hook.
type HookListResult struct {
	Entries []HookEntry `json:"entries" desc:"Hook commands, sorted by hook name and index; empty when none is set"`
}

// BufferRef names a buffer load_buffer created.
type BufferRef struct {
	BufferName  string  `json:"buffer_name" desc:"Full buffer name to pass to paste_buffer, show_buffer and delete_buffer"`
	LogicalName *string `json:"logical_name" desc:"The logical_name argument as given"`
}

// BufferContent is show_buffer's answer.
type BufferContent struct {
	BufferName            string `json:"buffer_name" desc:"Buffer name"`
	Content               string `json:"content" desc:"Buffer text; byte-exact unless truncated, then the last max_lines lines joined with newlines"`
	ContentTruncated      bool   `json:"content_truncated" desc:"True when lines were dropped from the head"`
	ContentTruncatedLines int    `json:"content_truncated_lines" desc:"Number of lines dropped"`
}
