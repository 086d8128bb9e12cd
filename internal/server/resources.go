package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// codeResourceNotFound is the error code the reference uses for a missing
// tmux object behind a resource URI (contract 3.1).
const codeResourceNotFound = -32002

var resourceTemplates = []*mcp.ResourceTemplate{
	{URITemplate: "tmux://sessions{?socket_name}", Name: "sessions", Title: "All Sessions", MIMEType: "application/json",
		Description: "Every session (SessionInfo list)."},
	{URITemplate: "tmux://sessions/{session_name}{?socket_name}", Name: "session", Title: "Session Detail", MIMEType: "application/json",
		Description: "One session with its windows."},
	{URITemplate: "tmux://sessions/{session_name}/windows{?socket_name}", Name: "session_windows", Title: "Session Windows", MIMEType: "application/json",
		Description: "The windows of a session."},
	{URITemplate: "tmux://sessions/{session_name}/windows/{window_index}{?socket_name}", Name: "window", Title: "Window Detail", MIMEType: "application/json",
		Description: "One window with its panes."},
	{URITemplate: "tmux://panes/{pane_id}{?socket_name}", Name: "pane", Title: "Pane Detail", MIMEType: "application/json",
		Description: "One pane (PaneInfo). Write the pane id percent-encoded: %12 is %2512."},
	{URITemplate: "tmux://panes/{pane_id}/content{?socket_name}", Name: "pane_content", Title: "Pane Content", MIMEType: "text/plain",
		Description: "The visible screen of a pane. Subscribe to be told when it changes."},
}

// hostResourceTemplates are the same resources on a remote host
// (TMUX_MCP_HOSTS): ids are per host, so the host is part of the URI. They
// are listed only when hosts are configured.
var hostResourceTemplates = []*mcp.ResourceTemplate{
	{URITemplate: "tmux://hosts/{host}/sessions{?socket_name}", Name: "host_sessions", Title: "All Sessions on a Host", MIMEType: "application/json",
		Description: "Every session on a remote host (SessionInfo list)."},
	{URITemplate: "tmux://hosts/{host}/panes/{pane_id}{?socket_name}", Name: "host_pane", Title: "Pane Detail on a Host", MIMEType: "application/json",
		Description: "One pane on a remote host (PaneInfo)."},
	{URITemplate: "tmux://hosts/{host}/panes/{pane_id}/content{?socket_name}", Name: "host_pane_content", Title: "Pane Content on a Host", MIMEType: "text/plain",
		Description: "The visible screen of a pane on a remote host. Subscribe to be told when it changes."},
}

var rawPaneSegment = lazyRegexp(`^(tmux://(?:hosts/[^/?]+/)?panes/)(%[0-9A-Fa-f]+)([/?].*)?$`)

// fixPaneURI accepts a raw pane id in a URI (tmux://panes/%12), which the
// SDK's template matcher refuses, by percent-encoding it, unless the segment
// already is a percent-encoded pane id (%2512 decodes to %12).
func fixPaneURI(uri string) string {
	m := rawPaneSegment().FindStringSubmatch(uri)
	if m == nil {
		return uri
	}
	if dec, err := url.PathUnescape(m[2]); err == nil && validPaneID(dec) {
		return uri
	}
	return m[1] + "%25" + m[2][1:] + m[3]
}

func validPaneID(s string) bool { _, err := tmux.ParsePaneID(s); return err == nil }

// resourceRef is a parsed tmux:// URI.
type resourceRef struct {
	kind        string // sessions, session, windows, window, pane, content
	session     string
	windowIndex string
	pane        string
	socketName  string
	host        string // a remote host (tmux://hosts/{host}/...); "" local
}

func parseResourceURI(uri string) (resourceRef, error) {
	u, err := url.Parse(fixPaneURI(uri))
	if err != nil || u.Scheme != "tmux" {
		return resourceRef{}, fmt.Errorf("not a tmux:// URI")
	}
	ref := resourceRef{socketName: u.Query().Get("socket_name")}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) == 1 && parts[0] == "" {
		parts = nil
	}
	if u.Host == "hosts" {
		if len(parts) < 2 || parts[0] == "" {
			return resourceRef{}, fmt.Errorf("unknown tmux:// resource")
		}
		ref.host, u.Host, parts = parts[0], parts[1], parts[2:]
	}
	switch {
	case u.Host == "sessions" && len(parts) == 0:
		ref.kind = "sessions"
	case u.Host == "sessions" && len(parts) == 1:
		ref.kind, ref.session = "session", parts[0]
	case u.Host == "sessions" && len(parts) == 2 && parts[1] == "windows":
		ref.kind, ref.session = "windows", parts[0]
	case u.Host == "sessions" && len(parts) == 3 && parts[1] == "windows":
		ref.kind, ref.session, ref.windowIndex = "window", parts[0], parts[2]
	case u.Host == "panes" && len(parts) == 1:
		ref.kind, ref.pane = "pane", parts[0]
	case u.Host == "panes" && len(parts) == 2 && parts[1] == "content":
		ref.kind, ref.pane = "content", parts[0]
	default:
		return resourceRef{}, fmt.Errorf("unknown tmux:// resource")
	}
	return ref, nil
}

func resourceNotFound(msg string) error {
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: msg}
}

// internalCall runs a read tool's handler directly (resources are snapshots
// served by the same code as the tools) and returns its structured result
// (if any) and its text.
func (s *Server) internalCall(ctx context.Context, name string, args map[string]any) (json.RawMessage, string, error) {
	t := s.tool(name)
	raw, _ := json.Marshal(args)
	a, err := checkArguments(t.Title, t.inSchema(), raw)
	if err != nil {
		return nil, "", err
	}
	c := s.newCall()
	c.Tool = t
	if err := c.bindHost(hostArg(a)); err != nil {
		return nil, "", err
	}
	res, err := s.safeCall(ctx, t, c, a)
	if err != nil {
		return nil, "", err
	}
	sc, _ := res.StructuredContent.(json.RawMessage)
	return sc, text(res), nil
}

// readResource serves every tmux:// URI.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	ref, err := parseResourceURI(uri)
	if err != nil {
		return nil, resourceNotFound(err.Error())
	}
	sock := map[string]any{}
	if ref.socketName != "" {
		sock["socket_name"] = ref.socketName
	}
	if ref.host != "" {
		sock[HostArgName] = ref.host
	}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range sock {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	notFound := func(err error, what string) error {
		if errors.Is(err, tmux.ErrNotFound) || errors.Is(err, tmux.ErrBadID) || errors.Is(err, tmux.ErrNoServer) {
			return resourceNotFound(what)
		}
		var te *ToolError
		if errors.As(err, &te) && te.Expected {
			return resourceNotFound(what + ": " + te.Msg)
		}
		return err
	}
	var body []byte
	mime := "application/json"
	switch ref.kind {
	case "sessions", "windows":
		tool, args := "list_sessions", with()
		if ref.kind == "windows" {
			tool, args = "list_windows", with("session_name", ref.session)
		}
		sc, _, err := s.internalCall(ctx, tool, args)
		if err != nil {
			return nil, notFound(err, "Session not found: "+ref.session)
		}
		var w struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(sc, &w)
		body = indentJSON(w.Result)
	case "session":
		sc, _, err := s.internalCall(ctx, "get_session_info", with("session_name", ref.session))
		if err != nil {
			return nil, notFound(err, "Session not found: "+ref.session)
		}
		ws, _, err := s.internalCall(ctx, "list_windows", with("session_name", ref.session))
		if err != nil {
			return nil, notFound(err, "Session not found: "+ref.session)
		}
		body = mergeChild(sc, "windows", ws)
	case "window":
		sc, _, err := s.internalCall(ctx, "get_window_info", with("session_name", ref.session, "window_index", ref.windowIndex))
		if err != nil {
			return nil, notFound(err, "Window not found: index "+ref.windowIndex)
		}
		ps, _, err := s.internalCall(ctx, "list_panes", with("session_name", ref.session, "window_index", ref.windowIndex))
		if err != nil {
			return nil, notFound(err, "Window not found: index "+ref.windowIndex)
		}
		body = mergeChild(sc, "panes", ps)
	case "pane":
		sc, _, err := s.internalCall(ctx, "get_pane_info", with("pane_id", ref.pane))
		if err != nil {
			return nil, notFound(err, "Pane not found: "+ref.pane)
		}
		body = indentJSON(sc)
	case "content":
		_, txt, err := s.internalCall(ctx, "capture_pane", with("pane_id", ref.pane, "max_lines", nil))
		if err != nil {
			return nil, notFound(err, "Pane not found: "+ref.pane)
		}
		body, mime = []byte(txt), "text/plain"
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(body)}}}, nil
}

func indentJSON(raw json.RawMessage) []byte {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return b
}

// mergeChild adds a {"result": [...]} list under key to an object.
func mergeChild(obj json.RawMessage, key string, list json.RawMessage) []byte {
	var m map[string]any
	_ = json.Unmarshal(obj, &m)
	var w struct {
		Result []any `json:"result"`
	}
	_ = json.Unmarshal(list, &w)
	if w.Result == nil {
		w.Result = []any{}
	}
	m[key] = w.Result
	b, _ := json.MarshalIndent(m, "", "  ")
	return b
}

// resourceState is the live side of resources for one MCP server: the
// concrete resources mirroring what exists now (so resources/list is real
// and list_changed fires when it changes) and the subscriptions.
type resourceState struct {
	s  *Server
	ms *mcp.Server

	mu        sync.Mutex
	mirrored  map[string]bool
	subs      map[string]*uriWatch        // subscribed URI -> its one watch and who holds it
	ended     map[*mcp.ServerSession]bool // sessions whose end releases their subscriptions
	following bool                        // followList is keeping the list current
}

func newResourceState(s *Server) *resourceState {
	return &resourceState{s: s, mirrored: map[string]bool{}, subs: map[string]*uriWatch{}, ended: map[*mcp.ServerSession]bool{}}
}

// uriWatch is the one watch behind a subscribed URI, shared by every
// session subscribed to it: over HTTP many sessions share one MCP server,
// and one session's unsubscribe (or end) must not stop another's
// notifications. The SDK itself sends resources/updated only to the
// sessions subscribed to the URI (Server.ResourceUpdated).
type uriWatch struct {
	stop    func()
	holders map[*mcp.ServerSession]bool
}

// complete offers live values for prompt arguments and resource-template
// variables: session names, window indexes (of the session given so far)
// and pane ids.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	prefix := req.Params.Argument.Value
	c := s.newCall()
	// Values of a host-qualified template come from that host.
	if req.Params.Context != nil && req.Params.Argument.Name != HostArgName {
		if h := req.Params.Context.Arguments[HostArgName]; h != "" && c.bindHost(h) != nil {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
		}
	}
	sock := c.Socket(SocketArgs{})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var values []string
	switch name := req.Params.Argument.Name; {
	case name == HostArgName:
		if s.hosts != nil {
			values = s.hosts.Names()
		}
	case !c.scopeCompletion(ctx, sock): // scope_mcp.go
	case name == "session_name":
		rows, _ := c.tmux.Rows(ctx, sock, tmux.Command{"list-sessions"}, []string{"session_name", "session_id"})
		for _, r := range c.scopeRows(rows, "session_id") {
			values = append(values, r["session_name"])
		}
	case name == "window_index":
		var sess string
		if req.Params.Context != nil {
			sess = req.Params.Context.Arguments["session_name"]
		}
		if args, err := tmux.WindowScope("", sess); err == nil {
			rows, _ := c.tmux.Rows(ctx, sock, append(tmux.Command{"list-windows"}, args...), []string{"window_index", "window_id", "session_id"})
			for _, r := range c.scopeRows(rows, "window_id") {
				values = append(values, r["window_index"])
			}
		}
	case name == "pane_id":
		rows, _ := c.tmux.Rows(ctx, sock, tmux.Command{"list-panes", "-a"}, []string{"pane_id"})
		for _, r := range tmux.DedupeBy(c.scopeRows(rows, "pane_id"), "pane_id") {
			values = append(values, r["pane_id"])
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, v := range values {
		if strings.HasPrefix(v, prefix) && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	total := len(out)
	if len(out) > 100 {
		out = out[:100]
	}
	if out == nil {
		out = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: total, HasMore: total > len(out)}}, nil
}

// sync makes the concrete resources match the objects on the configured
// server, in one tmux round trip; the SDK debounces the list_changed
// notification that the changes cause.
func (rs *resourceState) sync(ctx context.Context) {
	fields := []string{"session_name", "window_index", "pane_id"}
	c := rs.s.newCall()
	rows, err := rs.s.tmux.Rows(ctx, c.Socket(SocketArgs{}), tmux.Command{"list-panes", "-a"}, fields)
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		return
	}
	want := map[string]*mcp.Resource{"tmux://sessions": {URI: "tmux://sessions", Name: "sessions", Title: "All Sessions", MIMEType: "application/json"}}
	for _, r := range tmux.DedupeBy(rows, "pane_id") {
		sess := url.PathEscape(r["session_name"])
		pane := url.PathEscape(r["pane_id"])
		add := func(uri, name, title, mime string) {
			want[uri] = &mcp.Resource{URI: uri, Name: name, Title: title, MIMEType: mime}
		}
		add("tmux://sessions/"+sess, "session "+r["session_name"], "Session "+r["session_name"], "application/json")
		add("tmux://sessions/"+sess+"/windows", "windows of "+r["session_name"], "Windows of "+r["session_name"], "application/json")
		add("tmux://sessions/"+sess+"/windows/"+r["window_index"], "window "+r["session_name"]+":"+r["window_index"], "Window "+r["session_name"]+":"+r["window_index"], "application/json")
		add("tmux://panes/"+pane, "pane "+r["pane_id"], "Pane "+r["pane_id"], "application/json")
		add("tmux://panes/"+pane+"/content", "content of "+r["pane_id"], "Content of pane "+r["pane_id"], "text/plain")
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var gone []string
	for uri := range rs.mirrored {
		if want[uri] == nil {
			gone = append(gone, uri)
			delete(rs.mirrored, uri)
		}
	}
	if len(gone) > 0 {
		rs.ms.RemoveResources(gone...)
	}
	uris := make([]string, 0, len(want))
	for uri := range want {
		uris = append(uris, uri)
	}
	sort.Strings(uris)
	for _, uri := range uris {
		if !rs.mirrored[uri] {
			rs.mirrored[uri] = true
			rs.ms.AddResource(want[uri], rs.s.readResource)
		}
	}
}

// subscribe starts watching a URI: a pane's content follows its output
// stream; everything else follows structure events. Both are debounced.
func (rs *resourceState) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	ref, err := parseResourceURI(uri)
	if err != nil {
		return resourceNotFound(err.Error())
	}
	// The same socket rules as every tool call: a subscription only attaches,
	// but a bad name must still be refused clearly, not reach tmux.
	// A subscription on a remote host keeps that host's engine (its call),
	// as a run or a wait does.
	c := rs.s.newCall()
	check := rs.s.checkSocket
	if ref.host != "" {
		if err := c.bindHost(ref.host); err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		check = func(a SocketArgs) error { return checkRemoteSocket(a) }
	}
	if err := check(SocketArgs{SocketName: &ref.socketName}); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	sock := c.Socket(SocketArgs{SocketName: &ref.socketName})
	if err := c.scopeSubscription(ctx, ref, sock); err != nil { // scope_mcp.go
		return err
	}
	if rs.hold(uri, req.Session) {
		return nil // already watched for another session
	}
	wctx, cancel := context.WithCancel(context.Background())
	closeFn := func() {} // a structure watch ends with wctx
	if ref.kind == "content" {
		ps, _, err := c.openStream(ctx, sock, ref.pane)
		if err != nil {
			cancel()
			return resourceNotFound("Pane not found: " + ref.pane)
		}
		closeFn = ps.close
		go func() {
			for {
				select {
				case <-wctx.Done():
					return
				case <-ps.notify(): // re-read: following a moved pane changes the subscription
					if _, err := ps.take(wctx); err != nil {
						return
					}
					rs.updated(wctx, uri)
				}
			}
		}()
	} else {
		err := rs.followStructure(wctx, c, sock, func() {
			rs.sync(wctx)
			rs.updated(wctx, uri)
		}, nil)
		if err != nil {
			cancel()
			return err
		}
	}
	stop := func() { cancel(); closeFn() }
	if rs.hold(uri, req.Session) { // another session started one meanwhile
		stop()
		return nil
	}
	rs.mu.Lock()
	rs.subs[uri] = &uriWatch{stop: stop, holders: map[*mcp.ServerSession]bool{req.Session: true}}
	rs.releaseAtEnd(req.Session)
	rs.mu.Unlock()
	return nil
}

// hold adds ss to the holders of uri's watch and reports whether there is
// one.
func (rs *resourceState) hold(uri string, ss *mcp.ServerSession) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	w := rs.subs[uri]
	if w == nil {
		return false
	}
	w.holders[ss] = true
	rs.releaseAtEnd(ss)
	return true
}

// releaseAtEnd arranges, once per session, that the session's end (client
// disconnect, DELETE, idle expiry, end of a subscriptions/listen request)
// releases its subscriptions: the SDK forgets an ended session's
// subscriptions without calling the unsubscribe handler. rs.mu is held.
func (rs *resourceState) releaseAtEnd(ss *mcp.ServerSession) {
	if ss == nil || rs.ended[ss] {
		return
	}
	rs.ended[ss] = true
	go func() {
		_ = ss.Wait()
		rs.mu.Lock()
		defer rs.mu.Unlock()
		delete(rs.ended, ss)
		for uri := range rs.subs {
			rs.dropLocked(uri, ss)
		}
	}()
}

// dropLocked removes ss from the holders of uri and stops the watch when
// nobody holds it any more. rs.mu is held.
func (rs *resourceState) dropLocked(uri string, ss *mcp.ServerSession) {
	w := rs.subs[uri]
	if w == nil || !w.holders[ss] {
		return
	}
	delete(w.holders, ss)
	if len(w.holders) == 0 {
		w.stop()
		delete(rs.subs, uri)
	}
}

// updated tells subscribers a URI changed, at most every 100 ms per URI:
// a busy pane must not flood the client.
func (rs *resourceState) updated(ctx context.Context, uri string) {
	select {
	case <-ctx.Done():
		return
	case <-time.After(100 * time.Millisecond):
	}
	_ = rs.ms.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
}

// followStructure calls changed after each change of the server's
// sessions, windows or panes until ctx ends. The watcher it rides on is
// attached to one session; when that session goes (its control client is
// detached), following moves to another session, and stops, calling ended,
// when none is left or the server is closing.
func (rs *resourceState) followStructure(ctx context.Context, c *Call, sock tmux.Socket, changed, ended func()) error {
	subscribe := func() (*tmux.Subscription, error) {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return rs.structureSub(sctx, c, sock)
	}
	sub, err := subscribe()
	if err != nil {
		return err
	}
	go func() {
		defer func() {
			if sub != nil {
				sub.Close()
			}
			if ended != nil {
				ended()
			}
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub.Notify():
			}
			if sub.Moved() {
				sub.Close()
				sub = nil
				next, err := subscribe()
				if errors.Is(err, tmux.ErrWatchersClosed) {
					return // the server is closing
				}
				changed() // the session it watched may be what went
				if err != nil {
					return
				}
				sub = next
				continue
			}
			changed()
		}
	}()
	return nil
}

// followList keeps resources/list current once a client has asked for it:
// objects that appear or vanish later are added or removed, and the SDK
// sends notifications/resources/list_changed for them (the capability we
// advertise). It holds one structure subscription for the life of the MCP
// server, or until the tmux server has no session left; the next
// resources/list starts it again.
func (rs *resourceState) followList() {
	rs.mu.Lock()
	if rs.following {
		rs.mu.Unlock()
		return
	}
	rs.following = true
	rs.mu.Unlock()
	stopped := func() {
		rs.mu.Lock()
		rs.following = false
		rs.mu.Unlock()
	}
	c := rs.s.newCall()
	sock := c.Socket(SocketArgs{})
	err := rs.followStructure(context.Background(), c, sock, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rs.sync(sctx)
		cancel()
	}, stopped)
	if err != nil {
		stopped()
	}
}

// structureSub subscribes to structure events through a watcher on the
// server's first session: tmux sends session and window events to every
// control client, and the watcher's format subscription covers panes in
// the other sessions (see tmux.Watcher).
func (rs *resourceState) structureSub(ctx context.Context, c *Call, sock tmux.Socket) (*tmux.Subscription, error) {
	rows, err := c.tmux.Rows(ctx, sock, tmux.Command{"list-sessions"}, []string{"session_id"})
	if err != nil || len(rows) == 0 {
		return nil, resourceNotFound("no tmux session to watch on this server")
	}
	w, err := c.watch.Get(sock, rows[0]["session_id"])
	if err != nil {
		return nil, err
	}
	return w.Subscribe(tmux.StructurePane, ""), nil
}

func (rs *resourceState) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.dropLocked(req.Params.URI, req.Session)
	return nil
}

// resourceMiddleware rewrites raw pane ids in URIs and refreshes the mirror
// before the SDK answers resources/list.
func (rs *resourceState) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.ReadResourceRequest:
			if r.Params != nil {
				r.Params.URI = fixPaneURI(r.Params.URI)
			}
		case *mcp.SubscribeRequest:
			if r.Params != nil {
				r.Params.URI = fixPaneURI(r.Params.URI)
			}
		case *mcp.UnsubscribeRequest:
			if r.Params != nil {
				r.Params.URI = fixPaneURI(r.Params.URI)
			}
		case *mcp.ListResourcesRequest:
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			rs.sync(sctx)
			cancel()
			go rs.followList()
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && err == nil {
				sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				if err := rs.s.scopeResourceList(sctx, lr); err != nil { // scope_mcp.go
					return nil, err
				}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}
