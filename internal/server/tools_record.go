package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/record"
	"github.com/tmux-mcp/tmux-mcp/internal/termgrid"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, recordTools) }

type recordPaneArgs struct {
	PaneTarget
	OutputPath *string `json:"output_path" desc:"New file on this machine (for a host pane too); null stops."`
	Overwrite  bool    `json:"overwrite" default:"false" doc:"Replace output_path when it exists (by default an existing file is refused)."`
	SocketArgs
}

type listRecordingsArgs struct {
	SocketArgs
}

// RecordingInfo describes one recording.
type RecordingInfo struct {
	RecordingID string `json:"recording_id" desc:"The recording's id."`
	URI         string `json:"uri" desc:"Its resource, tmux://recordings/{recording_id}, readable only by the client that made it."`
	OutputPath  string `json:"output_path" desc:"The asciicast v2 file, on the machine tmux-mcp runs on."`
	PaneID      string `json:"pane_id" desc:"The pane recorded."`
	OnHost
	Recording       bool    `json:"recording" desc:"Still recording."`
	StopReason      *string `json:"stop_reason" desc:"Why it stopped: stopped (output_path=null), pane closed, pane's program exited, tmux server exited, a limit, tmux-mcp exited..."`
	Width           int     `json:"width" desc:"Columns at the start (later sizes are resize events)."`
	Height          int     `json:"height" desc:"Rows at the start."`
	StartedAt       string  `json:"started_at" desc:"When it started (RFC 3339)."`
	DurationSeconds float64 `json:"duration_seconds" desc:"Time of its last event."`
	Bytes           int64   `json:"bytes" desc:"Size of the file."`
	Events          int     `json:"events" desc:"Events after the header."`
}

const recordPaneDoc = "A recording is an [asciicast v2](https://docs.asciinema.org/manual/asciicast/v2/) file: `asciinema play FILE` replays it in a terminal, " +
	"`asciinema cat FILE` prints it, and the asciinema web player shows it. It starts with the pane's current screen (colours, attributes and " +
	"cursor, and for a full-screen program the screen under it and its scroll region), so a recording started in the middle of vim replays correctly. " +
	"Then every piece of output is an `o` event timed when tmux's control-mode stream delivered it (no polling, no process per recording: the same " +
	"event stream wait_for_text uses); a resize is an `r` event; what this server's tools typed into the pane (send_keys, send_keys_batch, " +
	"send_and_wait, paste_text, paste_buffer, run_command's command) is an `i` event, except `secret: true` input, of which only an `m` marker says " +
	"that something was typed; output that tmux dropped (it pauses a pane whose output cannot be sent fast enough) is an `m` marker where it happened. " +
	"The recording stops on `record_pane(output_path=null)`, when the pane closes or its program exits, when its tmux server exits, at the size " +
	"limit (`TMUX_MCP_RECORD_MAX_SIZE`, default 100M) or duration limit (`TMUX_MCP_RECORD_MAX_DURATION`, default 4h), and when tmux-mcp exits " +
	"(SIGTERM, SIGINT, end of input); its last line is then an `m` marker `recording stopped: <reason>`. Every line is written whole, so the file " +
	"is a valid recording at any moment.\n\n" +
	"The file is created on the machine tmux-mcp runs on (mode 0600), also for a pane on a `host`: the events come over the host's ssh connection. " +
	"An existing file is refused unless `overwrite: true`. A new recording of a pane you are already recording replaces that one (as pipe_pane " +
	"replaces a pipe). Recordings belong to the client that started them (over HTTP, the token's name or OAuth subject; over stdio, the one client): " +
	"list_recordings lists only yours, `tmux://recordings/{recording_id}` reads only yours (up to 1 MB; a larger one is read from its file), and " +
	"`output_path: null` stops only yours. At most 32 run at once.\n\n" +
	"Example: `record_pane({\"pane_id\": \"%3\", \"output_path\": \"~/agent.cast\"})` answers " +
	"`{\"recording_id\": \"rec-5f0c2a9e41d7\", \"uri\": \"tmux://recordings/rec-5f0c2a9e41d7\", \"output_path\": \"/home/me/agent.cast\", \"pane_id\": \"%3\", \"recording\": true, ...}`; " +
	"later `record_pane({\"pane_id\": \"%3\", \"output_path\": null})` stops it, and `asciinema play ~/agent.cast` shows what happened."

func recordTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "record_pane", Title: "Record Pane", Toolset: "pane", Tier: config.Mutating, Preset: CRE,
			Description: "Record a pane to an asciicast v2 file (asciinema play) from its current screen: timed output, resizes, what tools type (never secret input). Stops on output_path=null, pane end or a limit. See list_recordings.",
			Doc:         recordPaneDoc,
		}, func(ctx context.Context, c *Call, a recordPaneArgs) (RecordingInfo, error) {
			if a.OutputPath == nil {
				return c.stopRecording(ctx, a)
			}
			return c.startRecording(ctx, a)
		}),
		define(Tool{
			Name: "list_recordings", Title: "List Recordings", Toolset: "pane", Tier: config.Readonly, Preset: RO,
			Description: "List your record_pane recordings (running and stopped) with file, size, stop reason and resource URI.",
			Doc:         "Newest first, those of the calling client only (see record_pane), as long as this server process runs (the last 256; their files stay). With `host`, only recordings of panes on that host; with `socket_name` or `socket_path`, only those of that tmux server.",
		}, func(ctx context.Context, c *Call, a listRecordingsArgs) ([]RecordingInfo, error) {
			out := []RecordingInfo{}
			sock := c.Socket(a.SocketArgs)
			bySock := str(a.SocketName) != "" || str(a.SocketPath) != ""
			for _, r := range c.recordings().of(CallerIdentity(ctx)) {
				if a.Host != nil && r.key.host != c.host || bySock && r.key.sock != sock {
					continue
				}
				out = append(out, r.info())
			}
			return out, nil
		}),
	}
}

// info is the recording as tools report it.
func (r *recording) info() RecordingInfo {
	st := r.rec.Stats()
	r.mu.Lock()
	w, h := r.width, r.height
	r.mu.Unlock()
	ri := RecordingInfo{RecordingID: r.id, URI: recordingURI(r.id), OutputPath: r.path, PaneID: r.key.pane,
		Recording: !st.Stopped, Width: w, Height: h, StartedAt: r.started.Format(time.RFC3339),
		DurationSeconds: roundMs(st.Duration), Bytes: st.Bytes, Events: st.Events}
	if st.Stopped {
		reason := st.Reason
		if st.Err != nil {
			reason += ": " + st.Err.Error()
		}
		ri.StopReason = &reason
	}
	if r.key.host != "" {
		h := r.key.host
		ri.Host = &h
	}
	return ri
}

// stopRecording is record_pane(output_path=null): the caller's recording
// of the pane stops.
func (c *Call) stopRecording(ctx context.Context, a recordPaneArgs) (RecordingInfo, error) {
	sock := c.Socket(a.SocketArgs)
	pane, err := c.targetPaneID(ctx, sock, a.PaneTarget)
	if err != nil {
		return RecordingInfo{}, err
	}
	rs := c.recordings().runningOn(paneKey{c.host, sock, pane}, CallerIdentity(ctx))
	if len(rs) == 0 {
		return RecordingInfo{}, expectedf("pane %s has no recording of yours running (list_recordings lists yours)", pane)
	}
	for _, r := range rs {
		r.stop("stopped (output_path=null)")
		c.recordings().ended(r)
	}
	return rs[0].info(), nil
}

// recordFields are what a recording's start reads of its pane, with the
// screen, in the same step as it subscribes to the pane's output.
var recordFields = []string{"pane_id", "pane_width", "pane_height", "pane_dead", "cursor_x", "cursor_y", "cursor_flag",
	"alternate_on", "alternate_saved_x", "alternate_saved_y", "scroll_region_upper", "scroll_region_lower",
	"origin_flag", "insert_flag", "wrap_flag", "default-terminal", "window_index", "pane_index", "session_name"}

// recordEntry reads the pane's state and screen; with alt, also the normal
// screen kept under the alternate one (capture-pane -a, which tmux refuses
// when there is none).
func recordEntry(pane string, alt bool) []tmux.Command {
	cmds := []tmux.Command{
		{"display-message", "-p", "-t", pane, tmux.Format(recordFields...)},
		{"capture-pane", "-p", "-e", "-N", "-t", pane},
	}
	if alt {
		cmds = append(cmds, tmux.Command{"capture-pane", "-p", "-e", "-N", "-a", "-t", pane})
	}
	return cmds
}

// startRecording is record_pane with an output_path.
func (c *Call) startRecording(ctx context.Context, a recordPaneArgs) (RecordingInfo, error) {
	p := *a.OutputPath
	if strings.TrimSpace(p) == "" {
		return RecordingInfo{}, expectedf("output_path must not be blank; pass null to stop recording")
	}
	if err := pwNoNUL("output_path", p); err != nil {
		return RecordingInfo{}, err
	}
	// The file is this machine's, whichever host the pane is on.
	path, err := absPath("output_path", p, false)
	if err != nil {
		return RecordingInfo{}, err
	}
	sock := c.Socket(a.SocketArgs)
	row, err := c.resolvePane(ctx, sock, a.PaneTarget, append([]string{"alternate_on", "pane_dead"}, tmux.WhereFields...))
	if err != nil {
		return RecordingInfo{}, err
	}
	pane := row["pane_id"]
	if row["pane_dead"] == "1" {
		return RecordingInfo{}, deadPane(pane)
	}
	// Subscribe and read the screen in one ordered step on the watcher's
	// connection: the stream then holds exactly what follows that screen.
	// Which captures the step needs depends on whether a full-screen
	// program is on; should that change in between, read again.
	alt := row["alternate_on"] == "1"
	var ps *paneStream
	var st tmux.Row
	var outs [][]byte
	for attempt := 0; ; attempt++ {
		ps, outs, err = c.openTimedStream(ctx, sock, tmux.WhereOf(row), recordEntry(pane, alt)...)
		if err != nil && alt && attempt < 2 && !errors.Is(err, tmux.ErrNotFound) {
			alt = false // the program left the alternate screen: capture-pane -a had none to read
			continue
		}
		if err != nil {
			return RecordingInfo{}, err
		}
		if st, err = rowFor(outs[0], recordFields, pane); err != nil {
			ps.close()
			return RecordingInfo{}, err
		}
		if (st["alternate_on"] == "1") == alt || attempt == 2 {
			break
		}
		ps.close()
		alt = !alt
	}
	screen := recordScreen(st, outs)
	width, height := atoi(st["pane_width"]), atoi(st["pane_height"])
	now := time.Now()
	h := record.Header{Width: width, Height: height, Timestamp: now,
		Title: fmt.Sprintf("%s:%s.%s (%s)", st["session_name"], st["window_index"], st["pane_index"], pane)}
	if term := st["default-terminal"]; term != "" {
		h.Env = map[string]string{"TERM": term}
	}
	if c.host != "" {
		h.Title += " on " + c.host
	}
	// A file a running recording writes is never opened again: its
	// writes would interleave with the new one's. The caller's own
	// recording of this pane is being replaced anyway: it stops first.
	owner := CallerIdentity(ctx)
	key := paneKey{c.host, sock, pane}
	store := c.recordings()
	for _, old := range store.all() {
		if old.path != path {
			continue
		}
		if old.owner != owner || old.key != key {
			ps.close()
			return RecordingInfo{}, expectedf("output_path %s is the file of another running recording: choose another file", errarg.Bare(path))
		}
		old.stop("replaced by a new recording in the same file")
		store.ended(old)
	}
	lim := record.Limits{MaxBytes: c.cfg.RecordMaxBytes, MaxDuration: c.cfg.RecordMaxDuration}
	if lim.MaxBytes == 0 {
		lim.MaxBytes = config.DefaultRecordMaxBytes
	}
	if lim.MaxDuration == 0 {
		lim.MaxDuration = config.DefaultRecordMaxDuration
	}
	rec, err := record.Create(path, a.Overwrite, h, screen.AppendFrame(nil), lim)
	if err != nil {
		ps.close()
		if errors.Is(err, os.ErrExist) {
			return RecordingInfo{}, expectedf("output_path %s exists: choose a new file, or pass overwrite=true to replace it", errarg.Bare(path))
		}
		return RecordingInfo{}, expectedf("output_path: %s", errarg.Within(err.Error(), path))
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &recording{id: newRecordingID(), owner: owner, key: key, path: path, started: now,
		rec: rec, cancel: cancel, width: width, height: height}
	previous := store.runningOn(key, owner)
	if err := store.add(r); err != nil {
		r.stop("not started: " + err.Error())
		ps.close()
		_ = os.Remove(path)
		return RecordingInfo{}, err
	}
	for _, old := range previous {
		old.stop("replaced by a new recording (" + r.id + ")")
		store.ended(old)
	}
	go r.pump(pctx, c, ps)
	return r.info(), nil
}

// openTimedStream is openStreamAt with a timed subscription.
func (c *Call) openTimedStream(ctx context.Context, sock tmux.Socket, where tmux.PaneWhere, entry ...tmux.Command) (*paneStream, [][]byte, error) {
	w, err := c.watch.Get(sock, where.Session)
	if err != nil {
		return nil, nil, err
	}
	sub, outs, err := w.SubscribeTimedAndRun(ctx, where.Pane, where.Window, entry...)
	if err != nil {
		return nil, nil, notFoundAs(err, "pane", where.Pane)
	}
	return &paneStream{c: c, sock: sock, where: where, sub: sub, timed: true}, outs, nil
}

// recordScreen is the pane's screen as the entry read it.
func recordScreen(st tmux.Row, outs [][]byte) record.Screen {
	height := atoi(st["pane_height"])
	shown := termgrid.Parse(outs[1])
	shown.Cursor = termgrid.Cursor{X: atoi(st["cursor_x"]), Y: atoi(st["cursor_y"]), Hidden: st["cursor_flag"] == "0"}
	s := record.Screen{Height: height, Shown: shown, ScrollTop: atoi(st["scroll_region_upper"]), ScrollBottom: atoi(st["scroll_region_lower"]),
		Origin: st["origin_flag"] == "1", Insert: st["insert_flag"] == "1", NoWrap: st["wrap_flag"] == "0"}
	if st["alternate_on"] == "1" && len(outs) > 2 {
		s.Normal = termgrid.Parse(outs[2])
		x, y := atoi(st["alternate_saved_x"]), atoi(st["alternate_saved_y"])
		if x >= 0 && y >= 0 && y < height {
			s.Normal.Cursor = termgrid.Cursor{X: x, Y: y}
		}
	}
	return s
}

// Markers a recording writes where output is missing.
const (
	markPaused = "output missed: tmux paused the pane's output (it printed faster than it could be sent)"
	markMoved  = "output may be missing: the pane's window moved to another session"
)

// pump writes the pane's output stream into the recording until the
// recording stops, the pane ends or the server closes.
func (r *recording) pump(ctx context.Context, c *Call, ps *paneStream) {
	defer func() { ps.close() }()
	defer c.recordings().ended(r)
	defer r.cancel()
	for {
		select {
		case <-r.rec.Done():
			return
		case <-ctx.Done():
			return
		case <-ps.notify():
		}
		chunks := ps.sub.TakeChunks()
		var evs []record.Event
		flush := func() bool {
			err := r.rec.Add(evs...)
			evs = evs[:0]
			return err == nil
		}
		for _, ch := range chunks {
			switch ch.Kind {
			case tmux.ChunkOutput:
				evs = append(evs, record.Event{At: ch.At, Kind: record.KindOutput, Data: string(ch.Data)})
			case tmux.ChunkGap:
				evs = append(evs, record.Event{At: ch.At, Kind: record.KindMarker, Data: markPaused})
			case tmux.ChunkChanged:
				if !flush() {
					return
				}
				if reason := r.checkPane(ctx, c, ps, ch.At); reason != "" {
					_ = r.rec.Stop(ch.At, reason)
					return
				}
			}
		}
		if !flush() {
			return
		}
		if ps.sub.Moved() {
			// The window left the watched session, or the watcher ended
			// (its tmux server exited): follow the pane, if it is still
			// somewhere.
			ps.sub.Close()
			at := time.Now()
			if err := r.follow(ctx, ps); err != nil {
				if ctx.Err() != nil {
					return
				}
				_ = r.rec.Stop(at, paneEndReason(err))
				return
			}
			if !flush() {
				return
			}
			_ = r.rec.Marker(at, markMoved)
		}
	}
}

// followRetries are the pauses before following a moved pane again when
// tmux could not be asked (the engine's connection was lost with the
// watcher's, or an answer was late): only an answer ends the recording.
var followRetries = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1500 * time.Millisecond}

// follow is paneStream.follow, tried again while tmux gives no answer.
func (r *recording) follow(ctx context.Context, ps *paneStream) error {
	err := ps.follow(ctx)
	for _, d := range followRetries {
		if err == nil || !errors.Is(err, tmux.ErrControlLost) && !errors.Is(err, tmux.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.rec.Done():
			return ErrShutdown
		case <-time.After(d):
		}
		err = ps.follow(ctx)
	}
	return err
}

// checkPane asks tmux what the pane is now, after a change of its window
// or state: a resize is recorded, an end returned as the reason to stop.
func (r *recording) checkPane(ctx context.Context, c *Call, ps *paneStream, at time.Time) string {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fields := []string{"pane_id", "pane_width", "pane_height", "pane_dead"}
	outs, err := c.tmux.Run(qctx, ps.sock, tmux.Command{"display-message", "-p", "-t", r.key.pane, tmux.Format(fields...)})
	var st tmux.Row
	if err == nil {
		st, err = rowFor(outs[0], fields, r.key.pane)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return ""
	case errors.Is(err, tmux.ErrNotFound), errors.Is(err, tmux.ErrNoServer):
		return paneEndReason(err)
	case err != nil:
		return "" // a slow or lost answer: the next change asks again
	case st["pane_dead"] == "1":
		return "pane's program exited"
	}
	w, h := atoi(st["pane_width"]), atoi(st["pane_height"])
	r.mu.Lock()
	changed := w != r.width || h != r.height
	r.width, r.height = w, h
	r.mu.Unlock()
	if changed {
		_ = r.rec.Resize(at, w, h)
	}
	return ""
}

// paneEndReason says why a followed pane is gone.
func paneEndReason(err error) string {
	switch {
	case errors.Is(err, tmux.ErrNoServer):
		return "tmux server exited"
	case errors.Is(err, tmux.ErrWatchersClosed):
		return "tmux-mcp exited"
	case errors.Is(err, tmux.ErrNotFound):
		return "pane closed"
	}
	var te *ToolError
	if errors.As(err, &te) && te.Type == typePaneNotFound {
		return "pane closed"
	}
	return "pane lost: " + err.Error()
}
