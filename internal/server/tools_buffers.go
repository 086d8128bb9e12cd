package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Buffers (contract 1.8). tmux's paste buffers are one flat namespace per
// tmux server, shared with the user and with clipboard sync, so the tools
// only ever touch buffers this server instance created:
//
//	tmux_mcp_<pid>_<start>_<instance>_<nonce>_<logical>
//
// pid is this process's id and start its start time (both hex; start is
// 0 where /proc is missing), which together identify the owning process
// even after its pid is reused; instance is random per Server; nonce is
// random per buffer; logical is the caller's label. Every tool refuses a
// name without this instance's prefix, so a user's or the clipboard's
// buffers can never be read, pasted or deleted, nor those of another
// tmux-mcp process. Close deletes the leftovers; a process that died
// without Close (SIGKILL) has its buffers reclaimed by the next instance
// that touches the same tmux server.
//
// Within the process, each buffer belongs to the client (Owner) that
// loaded it: another client's show, paste or delete finds no such buffer.
// At most maxLiveBuffers per client and maxBuffersTotal in all live at
// once; load_buffer then refuses rather than evicting one, since a client
// may still mean to paste it.

var (
	bufferNameRE  = lazyRegexp(`^tmux_mcp_([0-9a-f]{1,8})_([0-9a-f]{1,16})_[0-9a-f]{8}_[0-9a-f]{16}_[A-Za-z0-9_.-]{1,64}$`)
	logicalNameRE = lazyRegexp(`^[A-Za-z0-9_.-]{1,64}$`)
)

// maxArgContent is the largest content passed to tmux as an argument
// (set-buffer); tmux refuses a command message over 16 KiB. Larger content,
// or content with a NUL byte, goes through a private temporary file (on a
// remote host, in pieces or streamed: see loadCommand).
const maxArgContent = 8 << 10

// maxLiveBuffers caps the buffers load_buffer keeps per client (Owner): a
// soak left 999. It is stated in load_buffer's description. Over HTTP one
// process serves many clients, so one client's buffers must not use up
// the places of the others; maxBuffersTotal bounds them all together.
const maxLiveBuffers = 100

// maxBuffersTotal is the process-wide ceiling over every client's buffers
// (ten clients at their cap), so many clients cannot fill tmux's memory
// either.
const maxBuffersTotal = 1000

type bufferState struct {
	prefix string

	mu        sync.Mutex
	touched   map[hostKey]bool // servers a buffer tool reached, for Close
	reclaimed map[hostKey]bool // servers whose dead owners' buffers were reclaimed
	live      map[Owner]map[string]*liveBuffer
	count     int    // entries in live, the number held against maxBuffersTotal
	seq       uint64 // advanced each time a load completes
}

// liveBuffer is one buffer made by load_buffer and not yet deleted.
type liveBuffer struct {
	sock hostKey // the host and server it was loaded on
	// loaded is the seq at which tmux confirmed the buffer, 0 while its
	// load is in flight: a listing begun after that point must show it.
	loaded uint64
}

// buffers returns this server's buffer namespace, made on first use.
func (s *Server) buffers() *bufferState {
	s.bufOnce.Do(func() {
		s.bufState = &bufferState{
			prefix:    fmt.Sprintf("tmux_mcp_%x_%s_%s_", os.Getpid(), procStart(os.Getpid()), randHex(4)),
			touched:   map[hostKey]bool{},
			reclaimed: map[hostKey]bool{},
			live:      map[Owner]map[string]*liveBuffer{},
		}
	})
	return s.bufState
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// procStart returns a process's start time (clock ticks since boot, field
// 22 of /proc/<pid>/stat) in hex, or "0" when it cannot be read.
func procStart(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "0"
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return "0"
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 20 {
		return "0"
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return "0"
	}
	return strconv.FormatUint(n, 16)
}

// ownerAlive reports whether the process that named a buffer still runs:
// its pid exists and, where the start time was recorded, it is the same
// process rather than a later one that reused the pid.
func ownerAlive(pidHex, start string) bool {
	pid, err := strconv.ParseInt(pidHex, 16, 64)
	if err != nil || pid <= 0 || pid > 1<<31-1 {
		return false
	}
	if pid == int64(os.Getpid()) {
		return start == procStart(os.Getpid()) || start == "0"
	}
	p, err := os.FindProcess(int(pid))
	if err != nil {
		return false
	}
	defer p.Release()
	if err := p.Signal(syscall.Signal(0)); errors.Is(err, os.ErrProcessDone) {
		return false
	}
	if start != "0" {
		if cur := procStart(int(pid)); cur != "0" && cur != start {
			return false
		}
	}
	return true
}

// newBufferName allocates a fresh name in this instance's namespace.
func (st *bufferState) newBufferName(logical string) string {
	return st.prefix + randHex(8) + "_" + logical
}

// ownName checks that a caller-supplied name is one of ours.
func (st *bufferState) ownName(name string) error {
	if !bufferNameRE().MatchString(name) || !strings.HasPrefix(name, st.prefix) {
		return &ToolError{
			Msg:  "Invalid buffer name: only buffer names returned by load_buffer in this server process can be used (other buffers, such as the user's or the clipboard's, are never read, pasted or deleted)",
			Type: typeExpected, Expected: true, Suggestion: hint["buffer"],
		}
	}
	return nil
}

// owned checks that name is a buffer the calling client loaded and has
// not deleted, and returns the tmux server it was loaded on.
func (st *bufferState) owned(ctx context.Context, name string) (hostKey, error) {
	if err := st.ownName(name); err != nil {
		return hostKey{}, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if b, ok := st.live[OwnerFrom(ctx)][name]; ok && b.loaded != 0 {
		return b.sock, nil
	}
	return hostKey{}, &tmux.NotFoundError{What: "buffer", Detail: name}
}

// reserve takes a place under the owner's maxLiveBuffers and the process's
// maxBuffersTotal for a buffer about to be loaded. When no place is free it
// first drops buffers that are gone from tmux (deleted behind our back, or
// their server ended) and refuses only if a cap is still reached.
func (st *bufferState) reserve(ctx context.Context, c *Call, owner Owner, name string, sock hostKey) error {
	if st.add(owner, name, sock) {
		return nil
	}
	st.prune(ctx, c)
	if st.add(owner, name, sock) {
		return nil
	}
	st.mu.Lock()
	mine, all := len(st.live[owner]), st.count
	st.mu.Unlock()
	held := fmt.Sprintf("you already hold %d buffers made by load_buffer, the most one client keeps at once", mine)
	if mine < maxLiveBuffers {
		held = fmt.Sprintf("this server process already holds %d buffers made by load_buffer for all its clients (%d of them yours), "+
			"the most it keeps at once", all, mine)
	}
	return &ToolError{
		Msg:  "Buffer limit reached: " + held + "; none is ever evicted. Delete one you no longer need with delete_buffer, then load again.",
		Type: typeExpected, Expected: true,
		Suggestion: "delete_buffer frees a place; paste_text pastes text without keeping a buffer.",
	}
}

func (st *bufferState) add(owner Owner, name string, sock hostKey) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.live[owner]) >= maxLiveBuffers || st.count >= maxBuffersTotal {
		return false
	}
	if st.live[owner] == nil {
		st.live[owner] = map[string]*liveBuffer{}
	}
	st.live[owner][name] = &liveBuffer{sock: sock}
	st.count++
	return true
}

// confirm records that tmux holds the buffer; false if its place was
// released meanwhile (ReleaseBuffers, Close), and the caller must delete it.
func (st *bufferState) confirm(owner Owner, name string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	b, ok := st.live[owner][name]
	if ok {
		st.seq++
		b.loaded = st.seq
	}
	return ok
}

// forget frees a buffer's place.
func (st *bufferState) forget(owner Owner, name string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.forgetLocked(owner, name)
}

func (st *bufferState) forgetLocked(owner Owner, name string) {
	if _, ok := st.live[owner][name]; !ok {
		return
	}
	delete(st.live[owner], name)
	if len(st.live[owner]) == 0 {
		delete(st.live, owner)
	}
	st.count--
}

// gone frees a buffer's place when tmux said, on the server it was loaded
// on, that it does not exist (err is what bufferError returned).
func (st *bufferState) gone(ctx context.Context, name string, sock, loadedOn hostKey, err error) {
	var nf *tmux.NotFoundError
	if sock == loadedOn && (errors.As(err, &nf) && nf.What == "buffer" || errors.Is(err, tmux.ErrNoServer)) {
		st.forget(OwnerFrom(ctx), name)
	}
}

// prune frees the places of buffers that tmux no longer holds. Only
// buffers loaded before a server's listing began are judged by it.
func (st *bufferState) prune(ctx context.Context, c *Call) {
	st.mu.Lock()
	socks := map[hostKey]bool{}
	for _, names := range st.live {
		for _, b := range names {
			socks[b.sock] = true
		}
	}
	st.mu.Unlock()
	for sock := range socks {
		st.mu.Lock()
		before := st.seq
		st.mu.Unlock()
		tc, err := c.clientFor(sock.host)
		if err != nil {
			continue
		}
		outs, err := tc.Run(ctx, sock.sock, tmux.Command{"list-buffers", "-F", "#{buffer_name}"})
		present := map[string]bool{}
		switch {
		case errors.Is(err, tmux.ErrNoServer): // the server ended, and its buffers with it
		case err != nil:
			continue
		default:
			for _, n := range splitRows(outs[0]) {
				present[n] = true
			}
		}
		st.mu.Lock()
		for owner, names := range st.live {
			for n, b := range names {
				if b.sock == sock && b.loaded != 0 && b.loaded <= before && !present[n] {
					st.forgetLocked(owner, n)
				}
			}
		}
		st.mu.Unlock()
	}
}

// ReleaseBuffers deletes the buffers owner made with load_buffer and frees
// their places under the cap. A transport calls it when a client's session
// ends; Close does the same for every client. A tmux server that is gone
// is not an error.
func (s *Server) ReleaseBuffers(ctx context.Context, owner Owner) error {
	st := s.buffers()
	st.mu.Lock()
	bySock := map[hostKey][]string{}
	for n, b := range st.live[owner] {
		bySock[b.sock] = append(bySock[b.sock], n)
		st.forgetLocked(owner, n)
	}
	st.mu.Unlock()
	var errs []error
	for sock, names := range bySock {
		tc, err := s.clientFor(sock.host)
		if err == nil {
			err = deleteBuffers(ctx, tc, sock.sock, names)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sock, err))
		}
	}
	return errors.Join(errs...)
}

// run is Run for buffer tools: it records the server for Close and, the
// first time, lists the buffers in the same round trip so that those of
// dead tmux-mcp processes can be reclaimed.
func (st *bufferState) run(ctx context.Context, c *Call, sock tmux.Socket, cmds ...tmux.Command) ([][]byte, error) {
	k := c.key(sock)
	st.mu.Lock()
	st.touched[k] = true
	// Whether a buffer's owner lives is judged by its pid on this machine:
	// on a remote host that says nothing, so nothing is reclaimed there.
	first := !st.reclaimed[k] && c.host == ""
	st.mu.Unlock()
	if !first {
		return c.tmux.Run(ctx, sock, cmds...)
	}
	all := append([]tmux.Command{{"list-buffers", "-F", "#{buffer_name}"}}, cmds...)
	outs, err := c.tmux.Run(ctx, sock, all...)
	if len(outs) > 0 {
		st.mu.Lock()
		st.reclaimed[k] = true
		st.mu.Unlock()
		st.reclaim(ctx, c.Server, sock, outs[0])
		outs = outs[1:]
	}
	return outs, err
}

// sortBuffers picks out of a list-buffers answer the buffers of this
// process and those of tmux-mcp processes that are gone; other buffers
// (the user's, the clipboard's, live servers') are in neither.
func (st *bufferState) sortBuffers(list []byte) (mine, dead []string) {
	for _, name := range splitRows(list) {
		m := bufferNameRE().FindStringSubmatch(name)
		switch {
		case m == nil:
		case strings.HasPrefix(name, st.prefix):
			mine = append(mine, name)
		case !ownerAlive(m[1], m[2]):
			dead = append(dead, name)
		}
	}
	return mine, dead
}

// reclaim deletes the buffers of tmux-mcp processes that are gone.
func (st *bufferState) reclaim(ctx context.Context, s *Server, sock tmux.Socket, list []byte) {
	_, dead := st.sortBuffers(list)
	if len(dead) == 0 {
		return
	}
	if err := deleteBuffers(ctx, s.tmux, sock, dead); err != nil {
		s.log.Warn("reclaiming buffers of exited tmux-mcp processes", "socket", sock.String(), "error", err)
	} else {
		s.log.Info("reclaimed buffers of exited tmux-mcp processes", "socket", sock.String(), "count", len(dead))
	}
}

// deleteBuffers deletes names in one round trip; if one is already gone,
// the rest are deleted one by one.
func deleteBuffers(ctx context.Context, tc *tmux.Client, sock tmux.Socket, names []string) error {
	cmds := make([]tmux.Command, len(names))
	for i, n := range names {
		cmds[i] = tmux.Command{"delete-buffer", "-b", n}
	}
	if _, err := tc.Run(ctx, sock, cmds...); err == nil || errors.Is(err, tmux.ErrNoServer) {
		return nil
	}
	var errs []error
	for _, cmd := range cmds {
		if _, err := tc.Run(ctx, sock, cmd); err != nil && !errors.Is(err, tmux.ErrNotFound) && !errors.Is(err, tmux.ErrNoServer) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeBuffers deletes the buffers this server created that are still left on
// every tmux server a buffer tool reached. The CLI calls it on SIGTERM,
// SIGINT and end of input. A tmux server that is gone is not an error.
func (s *Server) closeBuffers(ctx context.Context) error {
	st := s.buffers()
	st.mu.Lock()
	st.live, st.count = map[Owner]map[string]*liveBuffer{}, 0
	socks := make([]hostKey, 0, len(st.touched))
	for sock := range st.touched {
		socks = append(socks, sock)
	}
	st.mu.Unlock()
	var errs []error
	for _, sock := range socks {
		tc, err := s.clientFor(sock.host)
		var outs [][]byte
		if err == nil {
			outs, err = tc.Run(ctx, sock.sock, tmux.Command{"list-buffers", "-F", "#{buffer_name}"})
		}
		if err != nil {
			if !errors.Is(err, tmux.ErrNoServer) {
				errs = append(errs, fmt.Errorf("%s: %w", sock, err))
			}
			continue
		}
		if mine, _ := st.sortBuffers(outs[0]); len(mine) > 0 {
			if err := deleteBuffers(ctx, tc, sock.sock, mine); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", sock, err))
			}
		}
	}
	return errors.Join(errs...)
}

// bufferTempPrefix names the temporary directories that carry large buffer
// content to tmux. It is specific enough that a leak check can tell them
// from other programs' (or other tests') tmux-mcp directories in $TMPDIR.
const bufferTempPrefix = "tmux-mcp-buffer-"

// loadCommand returns the tmux commands that put content into buffer name
// and a cleanup for any temporary file it needed. Small content travels as
// an argument; larger content (or content with a NUL byte) through a file
// in a fresh 0700 directory, mode 0600, removed by cleanup. Nothing else is
// ever written to disk.
//
// On a remote host a file here would be no file there (tmux's client, which
// reads it, runs on the host), so content up to maxPiecedContent is set in
// pieces of at most maxArgContent, appended in order in the same round
// trip; larger content, or any with a NUL byte, is streamed instead.
func loadCommand(name, content string, remote bool) ([]tmux.Command, func(), error) {
	if len(content) <= maxArgContent && !strings.Contains(content, "\x00") {
		return []tmux.Command{{"set-buffer", "-b", name, "--", content}}, func() {}, nil
	}
	if remote {
		if streamed(content, remote) {
			return nil, nil, errors.New("loadCommand: content to be streamed")
		}
		return setPieces(name, content), func() {}, nil
	}
	dir, err := os.MkdirTemp("", bufferTempPrefix)
	if err != nil {
		return nil, nil, fmt.Errorf("temporary directory for buffer content: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	f, err := os.CreateTemp(dir, "buffer-")
	if err == nil {
		_, err = f.WriteString(content)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("temporary file for buffer content: %w", err)
	}
	return []tmux.Command{{"load-buffer", "-b", name, f.Name()}}, cleanup, nil
}

// setPieces sets buffer name to content (without a NUL byte) in
// set-buffer pieces of at most maxArgContent, never splitting a character.
func setPieces(name, content string) []tmux.Command {
	var cmds []tmux.Command
	for rest := content; rest != ""; {
		n := min(len(rest), maxArgContent)
		for n < len(rest) && n > 0 && !utf8.RuneStart(rest[n]) {
			n-- // never split a character
		}
		cmd := tmux.Command{"set-buffer", "-b", name, "--", rest[:n]}
		if len(cmds) > 0 {
			cmd = tmux.Command{"set-buffer", "-a", "-b", name, "--", rest[:n]}
		}
		cmds = append(cmds, cmd)
		rest = rest[n:]
	}
	return cmds
}

// maxPiecedContent is the most content set in pieces on a remote host
// (loadCommand). Pieces go in the call's one round trip of the shared
// control connection but grow faster than linearly (3 MB outlasted the
// 10 s call bound); streaming costs about 100 ms for its own channel and
// tmux client, then little more. BenchmarkLoadBufferSizes, p50 on a loaded
// 2-core machine: 256 KiB 52 ms in pieces, 103 ms streamed; even at
// 512 KiB; 2 MiB 1.1 s against 0.25 s. Below the crossover, so that no
// load holds the shared connection for long.
const maxPiecedContent = 256 << 10

// streamed reports whether content for a call goes on the standard input
// of a "load-buffer -" on the host (bufferState.stream) rather than through
// loadCommand: on a remote host, content over maxPiecedContent, or with a
// NUL byte, which no tmux command line can carry. Streamed, any byte
// arrives as it is, as locally.
func streamed(content string, remote bool) bool {
	return remote && (len(content) > maxPiecedContent || strings.Contains(content, "\x00"))
}

// stream fills buffer name with content on the call's host through
// tmux.BufferLoader.
func (st *bufferState) stream(ctx context.Context, c *Call, sock tmux.Socket, name, content string) error {
	st.mu.Lock()
	st.touched[c.key(sock)] = true
	st.mu.Unlock()
	return c.tmux.LoadBuffer(ctx, sock, name, content)
}

// pasteTarget resolves the pane a paste goes to. With a pane_id it returns
// a command that validates the pane inside the paste's own round trip;
// otherwise it resolves the pane (first pane of the window or session).
func (c *Call) pasteTarget(ctx context.Context, sock tmux.Socket, t PaneTarget) ([]tmux.Command, string, error) {
	id, err := c.targetPaneID(ctx, sock, t)
	if err != nil || str(t.PaneID) == "" {
		return nil, id, err
	}
	return []tmux.Command{{"list-panes", "-t", id, "-F", "#{pane_id}"}}, id, nil
}

// bufferError names the object a failed buffer command could not find.
func bufferError(err error, pane, buffer string) error {
	var ce *tmux.CommandError
	if errors.As(err, &ce) && len(ce.Command) > 0 && tmuxNotFound(err) {
		switch ce.Command[0] {
		case "list-panes":
			return &tmux.NotFoundError{What: "pane", Detail: pane}
		case "paste-buffer", "show-buffer", "delete-buffer":
			if strings.Contains(ce.Stderr, "buffer") {
				return &tmux.NotFoundError{What: "buffer", Detail: buffer}
			}
			return &tmux.NotFoundError{What: "pane", Detail: pane}
		}
	}
	return err
}

type loadBufferArgs struct {
	Content     string  `json:"content" desc:"May be multi-line. Never logged."`
	LogicalName *string `json:"logical_name" desc:"[A-Za-z0-9_.-]{1,64}; empty or omitted: 'buf'."`
	SocketArgs
}

type pasteBufferArgs struct {
	BufferName string `json:"buffer_name" doc:"Full name returned by load_buffer."`
	Bracket    bool   `json:"bracket" default:"true" doc:"Use bracketed paste, so a shell takes the text as typed, not run line by line."`
	PaneTarget
	SocketArgs
}

type pasteTextArgs struct {
	Text    string `json:"text" desc:"May be multi-line. Never logged."`
	Bracket bool   `json:"bracket" default:"true" doc:"Use bracketed paste, so a shell takes the text as typed, not run line by line."`
	PaneTarget
	SocketArgs
}

type showBufferArgs struct {
	BufferName string `json:"buffer_name" doc:"Full name returned by load_buffer."`
	MaxLines   *int   `json:"max_lines" default:"500" desc:"Tail lines kept; null: all."`
	SocketArgs
}

type deleteBufferArgs struct {
	BufferName string `json:"buffer_name" doc:"Full name returned by load_buffer."`
	SocketArgs
}

func bufferTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "load_buffer", Title: "Load tmux Buffer", Toolset: "buffer", Tier: config.Mutating, Preset: SHL,
			Description: "Stage text in a new paste buffer owned by this server, to paste into panes (paste_buffer), read back (show_buffer) or delete (delete_buffer). For a one-shot paste use paste_text. Only buffers made here are reachable; " +
				fmt.Sprintf("at most %d at once.", maxLiveBuffers),
		}, loadBuffer),
		define(Tool{
			Name: "paste_buffer", Title: "Paste tmux Buffer", Toolset: "buffer", Tier: config.Mutating, Preset: SHL,
			Description: "Paste a buffer made by load_buffer into a pane (bracketed by default); the buffer stays for more pastes. For one-shot text use paste_text.",
		}, pasteBuffer),
		define(Tool{
			Name: "show_buffer", Title: "Show tmux Buffer", Toolset: "buffer", Tier: config.Readonly, Preset: RO,
			Description: "Read back a buffer made by load_buffer. Content is byte-exact unless longer than max_lines, then only its last lines.",
		}, showBuffer),
		define(Tool{
			Name: "delete_buffer", Title: "Delete tmux Buffer", Toolset: "buffer", Tier: config.Mutating, Preset: MUT,
			Description: "Delete a buffer made by load_buffer. Leftover buffers are also deleted when this server shuts down.",
		}, deleteBuffer),
		define(Tool{
			Name: "paste_text", Title: "Paste Text", Toolset: "pane", Tier: config.Mutating, Preset: SHL,
			Description: "Paste text into a pane as one paste (bracketed by default) through a private buffer. Better than send_keys for multi-line text or code: nothing runs line by line. To paste the same text again use load_buffer.",
		}, pasteText),
	}
}

func init() { toolGroups = append(toolGroups, bufferTools) }

func loadBuffer(ctx context.Context, c *Call, a loadBufferArgs) (BufferRef, error) {
	logical := str(a.LogicalName)
	if logical == "" {
		logical = "buf"
	}
	if !logicalNameRE().MatchString(logical) {
		return BufferRef{}, expectedf("Invalid logical buffer name: it must match [A-Za-z0-9_.-]{1,64}")
	}
	if a.Content == "" {
		return BufferRef{}, expectedf("content is empty: tmux does not keep an empty buffer")
	}
	st := c.buffers()
	owner, sock := OwnerFrom(ctx), c.Socket(a.SocketArgs)
	name := st.newBufferName(logical)
	if err := st.reserve(ctx, c, owner, name, c.key(sock)); err != nil {
		return BufferRef{}, err
	}
	var err error
	if streamed(a.Content, c.host != "") {
		err = st.stream(ctx, c, sock, name, a.Content)
	} else {
		cmds, cleanup, lerr := loadCommand(name, a.Content, c.host != "")
		if lerr != nil {
			st.forget(owner, name)
			return BufferRef{}, lerr
		}
		defer cleanup()
		_, err = st.run(ctx, c, sock, cmds...)
	}
	if err == nil && st.confirm(owner, name) {
		return BufferRef{BufferName: name, LogicalName: a.LogicalName}, nil
	}
	st.forget(owner, name)
	if !errors.Is(err, tmux.ErrNoServer) {
		// tmux may have made the buffer before the call failed (a cancel,
		// a timeout), or its place was released meanwhile: never leave it.
		_, _ = c.tmux.Run(context.WithoutCancel(ctx), sock, tmux.Command{"delete-buffer", "-b", name})
	}
	if err == nil {
		err = expectedf("this client's buffers were released while the buffer was being loaded")
	}
	return BufferRef{}, err
}

func pasteBuffer(ctx context.Context, c *Call, a pasteBufferArgs) (Text, error) {
	st := c.buffers()
	loadedOn, err := st.owned(ctx, a.BufferName)
	if err != nil {
		return "", err
	}
	sock := c.Socket(a.SocketArgs)
	cmds, pane, err := c.pasteTarget(ctx, sock, a.PaneTarget)
	if err != nil {
		return "", err
	}
	paste := tmux.Command{"paste-buffer", "-b", a.BufferName, "-t", pane}
	if a.Bracket {
		paste = append(paste, "-p")
	}
	release, err := c.holdInput(ctx, sock, pane) // not into a run_command's wrapper line
	if err != nil {
		return "", err
	}
	defer release()
	typed := func(error) {}
	if c.recorded(sock, pane) {
		// What is pasted, for the pane's recording: read only then.
		if outs, err := st.run(ctx, c, sock, tmux.Command{"show-buffer", "-b", a.BufferName}); err == nil {
			typed = c.recordTyping(sock, pane, pastedBytes(string(outs[0])), false)
		}
	}
	if _, err := st.run(ctx, c, sock, append(cmds, paste)...); err != nil {
		typed(err)
		err = bufferError(err, pane, a.BufferName)
		st.gone(ctx, a.BufferName, c.key(sock), loadedOn, err)
		return "", err
	}
	return Text(fmt.Sprintf("Buffer '%s' pasted to pane %s", a.BufferName, pane)), nil
}

func pasteText(ctx context.Context, c *Call, a pasteTextArgs) (Text, error) {
	if a.Text == "" {
		return "", expectedf("text is empty: nothing to paste")
	}
	st := c.buffers()
	sock := c.Socket(a.SocketArgs)
	cmds, pane, err := c.pasteTarget(ctx, sock, a.PaneTarget)
	if err != nil {
		return "", err
	}
	name := st.newBufferName("paste")
	// drop deletes the buffer when the paste fails once the text may be
	// in it: it must never stay behind.
	drop := func() {
		_, _ = c.tmux.Run(context.WithoutCancel(ctx), sock, tmux.Command{"delete-buffer", "-b", name})
	}
	var load []tmux.Command
	if streamed(a.Text, c.host != "") {
		// Loaded first, on a channel of its own; the paste (and the
		// pane's check) then go in one round trip, as below.
		if err := st.stream(ctx, c, sock, name, a.Text); err != nil {
			if !errors.Is(err, tmux.ErrNoServer) {
				drop()
			}
			return "", err
		}
	} else {
		var cleanup func()
		load, cleanup, err = loadCommand(name, a.Text, c.host != "")
		if err != nil {
			return "", err
		}
		defer cleanup()
	}
	paste := tmux.Command{"paste-buffer", "-b", name, "-t", pane, "-d"}
	if a.Bracket {
		paste = append(paste, "-p")
	}
	release, err := c.holdInput(ctx, sock, pane) // not into a run_command's wrapper line
	if err != nil {
		if load == nil { // streamed: the text is already there
			drop()
		}
		return "", err
	}
	defer release()
	typed := c.recordTyping(sock, pane, pastedBytes(a.Text), false)
	if _, err := st.run(ctx, c, sock, append(append(cmds, load...), paste)...); err != nil {
		typed(err)
		drop() // the paste may have failed after the load
		return "", bufferError(err, pane, name)
	}
	return Text("Text pasted to pane " + pane), nil
}

func showBuffer(ctx context.Context, c *Call, a showBufferArgs) (BufferContent, error) {
	st := c.buffers()
	loadedOn, err := st.owned(ctx, a.BufferName)
	if err != nil {
		return BufferContent{}, err
	}
	if err := positive("max_lines", a.MaxLines); err != nil {
		return BufferContent{}, err
	}
	sock := c.Socket(a.SocketArgs)
	outs, err := st.run(ctx, c, sock, tmux.Command{"show-buffer", "-b", a.BufferName})
	if err != nil {
		err = bufferError(err, "", a.BufferName)
		st.gone(ctx, a.BufferName, c.key(sock), loadedOn, err)
		return BufferContent{}, err
	}
	raw := outs[0]
	if !utf8.Valid(raw) {
		return BufferContent{}, expectedf("buffer content is not valid UTF-8 text, so it cannot be returned exactly")
	}
	res := BufferContent{BufferName: a.BufferName, Content: string(raw)}
	if a.MaxLines != nil {
		lines := strings.Split(strings.TrimSuffix(res.Content, "\n"), "\n")
		if drop := len(lines) - *a.MaxLines; drop > 0 && res.Content != "" {
			res.Content = strings.Join(lines[drop:], "\n")
			res.ContentTruncated, res.ContentTruncatedLines = true, drop
		}
	}
	return res, nil
}

func deleteBuffer(ctx context.Context, c *Call, a deleteBufferArgs) (Text, error) {
	st := c.buffers()
	loadedOn, err := st.owned(ctx, a.BufferName)
	if err != nil {
		return "", err
	}
	sock := c.Socket(a.SocketArgs)
	if _, err := st.run(ctx, c, sock, tmux.Command{"delete-buffer", "-b", a.BufferName}); err != nil {
		err = bufferError(err, "", a.BufferName)
		st.gone(ctx, a.BufferName, c.key(sock), loadedOn, err)
		return "", err
	}
	if c.key(sock) == loadedOn {
		st.forget(OwnerFrom(ctx), a.BufferName)
	}
	return Text(fmt.Sprintf("Buffer '%s' deleted", a.BufferName)), nil
}
