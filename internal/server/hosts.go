package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
	"github.com/tmux-mcp/tmux-mcp/internal/remote"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

// Remote hosts (issue 12). A call's host argument names a TMUX_MCP_HOSTS
// entry; the call then runs on that host's engine (remote.Set): the same
// tools, the same tmux commands, carried by ssh. Ids are per host (%3 on
// one host is not %3 on another), so every piece of state bound to an
// object (a run, a capture_since cursor, a buffer, a watcher) is keyed by
// the host as well as the socket, and results that list panes, windows,
// sessions or servers name the host they describe.

// OnHost is embedded in result models that describe a tmux object: the host
// it is on, absent for the local machine. Call.stampHost fills it.
type OnHost struct {
	Host *string `json:"host,omitempty" desc:"TMUX_MCP_HOSTS entry the object is on; absent: local. Addition of tmux-mcp."`
}

// hostKey is a tmux server as state is keyed by it: the host ("" local)
// and the socket on that host.
type hostKey struct {
	host string
	sock tmux.Socket
}

func (k hostKey) String() string {
	if k.host == "" {
		return k.sock.String()
	}
	return "host " + k.host + " " + k.sock.String()
}

// newCall is a call's view of the server on the local machine; bindHost
// moves it to a remote host.
func (s *Server) newCall() *Call {
	return &Call{Server: s, tmux: s.tmux, watch: s.watch}
}

// hostArg is the host an argument map names; "" for none or null.
func hostArg(args map[string]any) string {
	h, _ := args[HostArgName].(string)
	return h
}

// bindHost routes the call to the host it names: that host's client and
// watchers replace the local ones. An unknown host is a validation error
// that lists the configured hosts.
func (c *Call) bindHost(name string) error {
	if name == "" {
		return nil
	}
	if c.hosts == nil {
		return hostError(fmt.Errorf("%w %s: none are configured (TMUX_MCP_HOSTS)", remote.ErrUnknownHost, errarg.Quoted(name)))
	}
	e, err := c.hosts.Get(name)
	if err != nil {
		return hostError(err)
	}
	c.host, c.eng, c.tmux, c.watch = name, e, e.Client, e.Watchers
	return nil
}

// hostError is a host that cannot be used as a validation error.
func hostError(err error) *ToolError {
	msg := HostArgName + ": " + err.Error()
	return &ToolError{Msg: msg, Type: "ValidationError", Expected: true, Err: err,
		Suggestion: "host names an entry of TMUX_MCP_HOSTS; null or absent is the local machine."}
}

// clientFor is the tmux client of a host ("" local), for work that outlives
// the call that started it (Close, releasing a client's buffers).
func (s *Server) clientFor(host string) (*tmux.Client, error) {
	if host == "" {
		return s.tmux, nil
	}
	if s.hosts == nil {
		return nil, remote.ErrUnknownHost
	}
	e, err := s.hosts.Get(host)
	if err != nil {
		return nil, err
	}
	return e.Client, nil
}

// key is the state key of a socket reached by this call.
func (c *Call) key(sock tmux.Socket) hostKey { return hostKey{c.host, sock} }

// remoteSocket is Socket for a remote host: the call's socket_path or
// socket_name, else the host's configured socket, else tmux's default
// there. The local configuration (TMUX_MCP_SOCKET) is the local machine's
// and does not apply; a path is the remote host's, never expanded here.
func (c *Call) remoteSocket(a SocketArgs) tmux.Socket {
	var sock tmux.Socket
	switch {
	case a.SocketPath != nil && *a.SocketPath != "":
		sock.Path = *a.SocketPath
	case a.SocketName != nil && *a.SocketName != "":
		sock.Name = *a.SocketName
	}
	return c.eng.Host.Socket(sock)
}

// checkRemoteSocket is checkSocket for a remote host's socket. Nothing is
// looked up on this machine (the path is the remote host's): a name must be
// a valid socket name and a path absolute, and both plain words, the only
// values that may cross the remote command line.
func checkRemoteSocket(a SocketArgs) error {
	if a.SocketName != nil && *a.SocketName != "" {
		if err := tmux.CheckSocketName(*a.SocketName); err != nil {
			return socketError("socket_name", err)
		}
		if err := tmux.CheckRemoteWord("socket_name", *a.SocketName); err != nil {
			return socketError("socket_name", err)
		}
	}
	if a.SocketPath != nil && *a.SocketPath != "" {
		p := *a.SocketPath
		if !strings.HasPrefix(p, "/") {
			return socketError("socket_path", errors.New("a remote host's socket path must be absolute"))
		}
		if err := tmux.CheckRemoteWord("socket_path", p); err != nil {
			return socketError("socket_path", err)
		}
	}
	return nil
}

// callerOnServer shadows the Server's: the pane this process runs in is on
// the local machine, so no server on a remote host holds it.
func (c *Call) callerOnServer(sock tmux.Socket, serverSocketPath string) bool {
	if c.host != "" {
		return false
	}
	return c.Server.callerOnServer(sock, serverSocketPath)
}

// onHostType and the is_caller field are what stampHost looks for.
var onHostType = reflect.TypeFor[OnHost]()

// stampHost marks a remote call's result: every OnHost in it names the
// call's host, and every is_caller that says anything says false (the
// caller's pane is local; a remote pane that shares its id is another
// pane). A local call's result is left as it is.
func (c *Call) stampHost(out any) {
	if c.host == "" {
		return
	}
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer {
		return
	}
	stampValue(v.Elem(), c.host)
}

func stampValue(v reflect.Value, host string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			stampValue(v.Elem(), host)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			stampValue(v.Index(i), host)
		}
	case reflect.Struct:
		if v.Type() == onHostType {
			h := host
			v.Field(0).Set(reflect.ValueOf(&h))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Name == "IsCaller" && f.Type == reflect.TypeFor[*bool]() {
				if fv := v.Field(i); !fv.IsNil() {
					no := false
					fv.Set(reflect.ValueOf(&no))
				}
				continue
			}
			stampValue(v.Field(i), host)
		}
	}
}

// remoteProbeTimeout bounds list_servers' probe of one remote host: ssh's
// connect timeout and the remote shell's start-up (10 s each by default)
// fit in it, so an unreachable host is reported, not waited on for ever.
const remoteProbeTimeout = 25 * time.Second

// listAllServers is list_servers without a host: the local machine's
// servers, then each configured host's (probed at once), an unreachable
// host as one row with its reason.
func (c *Call) listAllServers(ctx context.Context, extra []string) []ServerRow {
	var names []string
	if c.hosts != nil {
		names = c.hosts.Names()
	}
	remote := make([][]ServerRow, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := c.Server.newCall()
			hc.Tool, hc.Req, hc.RequestID = c.Tool, c.Req, c.RequestID
			if err := hc.bindHost(name); err != nil {
				remote[i] = []ServerRow{unreachable(name, err)}
				return
			}
			remote[i] = hc.listRemoteServers(ctx, nil)
			hc.stampHost(&remote[i])
		}()
	}
	out := rowsOf(c.listServers(ctx, extra))
	wg.Wait()
	for _, rows := range remote {
		out = append(out, rows...)
	}
	return out
}

// listRemoteServers lists the servers of the call's remote host that it
// can name without a shell there: the host's own socket (its configured
// one, else tmux's default) and the extra socket paths. A host that cannot
// be reached is one row saying why.
func (c *Call) listRemoteServers(ctx context.Context, extra []string) []ServerRow {
	socks := []tmux.Socket{c.eng.Host.Socket(tmux.Socket{})}
	for _, p := range extra {
		if p == "" || checkRemoteSocket(SocketArgs{SocketPath: &p}) != nil {
			continue
		}
		socks = append(socks, tmux.Socket{Path: p})
	}
	pctx, cancel := context.WithTimeout(ctx, remoteProbeTimeout)
	defer cancel()
	out := []ServerRow{}
	seen := map[string]bool{}
	for _, sock := range socks {
		info, err := c.serverInfo(pctx, sock)
		switch {
		case errors.Is(err, tmux.ErrHostUnreachable) || errors.Is(err, remote.ErrBusy) || errors.Is(err, tmux.ErrTmuxMissing):
			return []ServerRow{unreachable(c.host, err)}
		case err != nil:
			c.log.Warn("list_servers: probe failed", "host", c.host, "socket", sock.String(), "error", err)
			continue
		case !info.IsAlive:
			continue
		}
		if info.SocketPath != nil {
			if seen[*info.SocketPath] {
				continue
			}
			seen[*info.SocketPath] = true
		}
		out = append(out, ServerRow{ServerInfo: info})
	}
	return out
}

// unreachable is list_servers' row for a host it could not reach.
func unreachable(host string, err error) ServerRow {
	why := err.Error()
	return ServerRow{ServerInfo: ServerInfo{SessionCount: new(int), OnHost: OnHost{Host: &host}}, HostError: &why}
}

// rowsOf is list_servers' rows for servers that answered.
func rowsOf(infos []ServerInfo) []ServerRow {
	out := make([]ServerRow, 0, len(infos))
	for _, info := range infos {
		out = append(out, ServerRow{ServerInfo: info})
	}
	return out
}
