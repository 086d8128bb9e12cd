package server

import (
	"slices"
	"strconv"
)

// paneList is list_panes's answer. encoding/json spends ~3 µs per pane on
// it by reflection (1.4 ms of a 500-pane listing); appendJSON writes the
// same bytes directly (TestPaneListJSONMatches), falling back to
// encoding/json for whatever is not plain: a string that needs escaping,
// the foreground object.
type paneList []PaneInfoForeground

// jsonAppender is a result that appends its own encoding, byte for byte
// marshalJSON's (see buildResult).
type jsonAppender interface {
	appendJSON(b []byte) ([]byte, error)
}

// marshalResult is marshalJSON, by appendJSON where the value has it.
func marshalResult(v any) ([]byte, error) {
	if ja, ok := v.(jsonAppender); ok {
		return ja.appendJSON(nil)
	}
	return marshalJSON(v)
}

func (l paneList) appendJSON(b []byte) ([]byte, error) {
	b = slices.Grow(b, 512*len(l)+3)
	if l == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i := range l {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = l[i].appendJSON(b); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// appendJSON writes p as encoding/json does: the fields in declaration
// order, the embedded structs' in place, host and foreground omitted when
// nil.
func (p *PaneInfoForeground) appendJSON(b []byte) ([]byte, error) {
	e := &p.PaneEdges
	b = appendIntField(b, `{"pane_left":`, e.PaneLeft)
	b = appendIntField(b, `,"pane_top":`, e.PaneTop)
	b = appendIntField(b, `,"pane_right":`, e.PaneRight)
	b = appendIntField(b, `,"pane_bottom":`, e.PaneBottom)
	b = appendBoolField(b, `,"pane_at_left":`, e.PaneAtLeft)
	b = appendBoolField(b, `,"pane_at_right":`, e.PaneAtRight)
	b = appendBoolField(b, `,"pane_at_top":`, e.PaneAtTop)
	b = appendBoolField(b, `,"pane_at_bottom":`, e.PaneAtBottom)
	var err error
	str := func(key string, s *string) {
		if err == nil {
			b = append(b, key...)
			b, err = appendStringPtr(b, s)
		}
	}
	str(`,"pane_tty":`, e.PaneTTY)
	b = appendBoolField(b, `,"is_caller":`, p.IsCaller)
	str(`,"pane_active":`, p.PaneActive)
	str(`,"pane_current_command":`, p.PaneCurrentCommand)
	str(`,"pane_current_path":`, p.PaneCurrentPath)
	str(`,"pane_height":`, p.PaneHeight)
	str(`,"pane_id":`, &p.PaneID)
	str(`,"pane_index":`, p.PaneIndex)
	str(`,"pane_pid":`, p.PanePID)
	str(`,"pane_title":`, p.PaneTitle)
	str(`,"pane_width":`, p.PaneWidth)
	str(`,"session_id":`, p.SessionID)
	str(`,"window_id":`, p.WindowID)
	if p.Host != nil {
		str(`,"host":`, p.Host)
	}
	if err != nil {
		return nil, err
	}
	if p.Foreground != nil {
		fg, err := marshalJSON(p.Foreground)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"foreground":`...), fg...)
	}
	return append(b, '}'), nil
}

func appendIntField(b []byte, key string, v *int) []byte {
	b = append(b, key...)
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

func appendBoolField(b []byte, key string, v *bool) []byte {
	b = append(b, key...)
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendBool(b, *v)
}

// appendStringPtr writes s as a JSON string (null when nil): printable
// ASCII other than '"' and '\' as it is, anything else through
// encoding/json, for its exact escapes.
func appendStringPtr(b []byte, s *string) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	for i := 0; i < len(*s); i++ {
		if c := (*s)[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			q, err := marshalJSON(*s)
			if err != nil {
				return nil, err
			}
			return append(b, q...), nil
		}
	}
	b = append(b, '"')
	b = append(b, *s...)
	return append(b, '"'), nil
}
