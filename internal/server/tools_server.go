package server

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/config"
	"github.com/tmux-mcp/tmux-mcp/internal/tmux"
)

func init() { toolGroups = append(toolGroups, serverReadTools) }

type listServersArgs struct {
	ExtraSocketPaths *[]string `json:"extra_socket_paths" desc:"More socket paths (tmux -S) to probe."`
	// Host narrows the listing to one host; null lists the local machine
	// and every configured host.
	Host *string `json:"host" doc:"A TMUX_MCP_HOSTS entry: the call reaches tmux on that host over ssh; omitted: this machine."`
}

type listSessionsArgs struct {
	Filters StringMapArg `json:"filters" desc:"Mapping or JSON string of tmux field lookups, e.g. {\"session_name__startswith\": \"dev\"}. Ops: exact, contains, startswith, endswith, regex (i-prefix: any case), in, nin."`
	SocketArgs
}

type getServerInfoArgs struct {
	SocketArgs
}

// socketProbeTimeout bounds the connect() that tells a live server's socket
// from a stale file (contract 1.2: 0.1 s).
const socketProbeTimeout = 100 * time.Millisecond

// serverProbeTimeout bounds each server probe of list_servers, so one wedged
// server cannot stall the whole listing.
const serverProbeTimeout = 3 * time.Second

// serverProbeParallel is how many servers list_servers probes at once.
const serverProbeParallel = 8

func serverReadTools() []*Tool {
	return []*Tool{
		define(Tool{
			Name: "list_servers", Title: "List tmux Servers", Toolset: "server", Tier: config.Readonly, Preset: RO,
			Description: "Find running tmux servers: locally, live sockets in this user's tmux socket directory; on a remote host, its configured socket only (no directory scan there); both plus extra_socket_paths. Without host: local, then each host's. Use it when you do not know which socket_name or socket_path to target; get_server_info checks one.",
		}, func(ctx context.Context, c *Call, a listServersArgs) ([]ServerRow, error) {
			var extra []string
			if a.ExtraSocketPaths != nil {
				extra = *a.ExtraSocketPaths
			}
			if c.host != "" {
				return c.listRemoteServers(ctx, extra), nil
			}
			return c.listAllServers(ctx, extra), nil
		}),
		define(Tool{
			Name: "list_sessions", Title: "List tmux Sessions", Toolset: "server", Tier: config.Readonly, Preset: RO,
			Description: "List a tmux server's sessions with ids, window counts and active pane; empty when no server runs on the socket. Use list_windows or list_panes to go deeper.",
		}, func(ctx context.Context, c *Call, a listSessionsArgs) ([]SessionInfo, error) {
			fs, err := parseFilters(a.Filters)
			if err != nil {
				return nil, err
			}
			fields := filterFields(sessionFields, fs)
			sock := c.Socket(a.SocketArgs)
			rows, ours, err := c.sessionQuery(ctx, sock, fields, tmux.Command{"list-sessions", "-F", tmux.Format(fields...)})
			if errors.Is(err, tmux.ErrNoServer) {
				c.addNote(noServerNote(sock))
				return []SessionInfo{}, nil
			}
			if err != nil {
				return nil, err
			}
			var keep []tmux.Row
			for _, r := range c.scopeRows(rows, "session_id") {
				if matchFilters(r, fs) {
					keep = append(keep, r)
				}
			}
			return sessionInfos(keep, ours), nil
		}),
		define(Tool{
			Name: "get_server_info", Title: "Get tmux Server Info", Toolset: "server", Tier: config.Readonly, Preset: RO,
			Description: "Check one tmux server: is_alive, version, socket path and session count. Use list_servers to find servers.",
		}, func(ctx context.Context, c *Call, a getServerInfoArgs) (ServerInfo, error) {
			return c.serverInfo(ctx, c.Socket(a.SocketArgs))
		}),
	}
}

// serverInfo probes one server in a single tmux round trip. A server that
// is not running is a result (is_alive false), not an error. socket_path is
// the path tmux itself reports when the server answers, else the selected
// one.
func (c *Call) serverInfo(ctx context.Context, sock tmux.Socket) (ServerInfo, error) {
	info := ServerInfo{SessionCount: new(int)}
	if sock.Name != "" && sock.Path == "" {
		info.SocketName = new(sock.Name)
	}
	if sock.Path != "" {
		info.SocketPath = new(sock.Path)
	}
	serverFields := []string{"version", "socket_path"}
	outs, err := c.tmux.Run(ctx, sock,
		tmux.Command{"display-message", "-p", tmux.Format(serverFields...)},
		tmux.Command{"list-sessions", "-F", tmux.Format("session_id")})
	if errors.Is(err, tmux.ErrNoServer) {
		return info, nil
	}
	if err != nil {
		return ServerInfo{}, err
	}
	srv, err := tmux.ParseRows(outs[0], serverFields)
	if err != nil || len(srv) != 1 {
		return ServerInfo{}, errors.New("tmux: unexpected reply to display-message")
	}
	sessions, err := tmux.ParseRows(outs[1], []string{"session_id"})
	if err != nil {
		return ServerInfo{}, err
	}
	info.IsAlive = true
	*info.SessionCount = len(c.scopeRows(sessions, "session_id"))
	info.Version = strp(srv[0], "version")
	if p := strp(srv[0], "socket_path"); p != nil {
		info.SocketPath = p
	}
	return info, nil
}

// listServers scans the socket directory (sorted) and then the extra paths
// (in the order given). A candidate must be a socket that accepts a
// connection within socketProbeTimeout; the survivors are probed like
// get_server_info, by path so that the probe reaches exactly the socket that
// was scanned, and reported with the basename as socket_name for the
// directory's sockets. A server is reported once, however many paths lead
// to it (compared by real path). Candidates that turn out not to be running
// are dropped.
func (c *Call) listServers(ctx context.Context, extra []string) []ServerInfo {
	type candidate struct {
		path string
		name string // socket_name for sockets found in the directory
	}
	var cands []candidate
	dir := c.cfg.SocketDir()
	if entries, err := os.ReadDir(dir); err == nil {
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, n := range names {
			cands = append(cands, candidate{path: filepath.Join(dir, n), name: n})
		}
	}
	for _, p := range extra {
		if p != "" {
			cands = append(cands, candidate{path: p})
		}
	}

	// Drop what is not a live socket, and paths that lead to a socket seen
	// before, before spending a tmux process on them.
	seen := map[string]bool{}
	live := cands[:0]
	for _, cd := range cands {
		real := realPath(cd.path)
		if seen[real] || !liveSocket(cd.path) {
			continue
		}
		seen[real] = true
		live = append(live, cd)
	}

	results := make([]*ServerInfo, len(live))
	var wg sync.WaitGroup
	sem := make(chan struct{}, serverProbeParallel)
	for i, cd := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pctx, cancel := context.WithTimeout(ctx, serverProbeTimeout)
			defer cancel()
			info, err := c.serverInfo(pctx, tmux.Socket{Path: cd.path})
			if err != nil {
				// It accepted a connection but does not answer as a tmux
				// server we can talk to (wedged, another tmux version):
				// report it as not alive rather than hide it.
				c.log.Warn("list_servers: probe failed", "socket", cd.path, "error", err)
				info = ServerInfo{SocketPath: new(cd.path), SessionCount: new(int)}
			} else if !info.IsAlive {
				return // it went away between the connect and the probe
			}
			info.SocketName = nil
			if cd.name != "" {
				info.SocketName = new(cd.name)
			}
			results[i] = &info
		}()
	}
	wg.Wait()

	out := []ServerInfo{}
	reported := map[string]bool{}
	for i, r := range results {
		if r == nil {
			continue
		}
		key := realPath(live[i].path)
		if r.SocketPath != nil {
			key = realPath(*r.SocketPath)
		}
		if reported[key] {
			continue
		}
		reported[key] = true
		out = append(out, *r)
	}
	return out
}

// liveSocket reports whether path is a unix socket that accepts a
// connection: a stale socket file left by a dead server refuses it.
func liveSocket(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.Mode()&os.ModeSocket == 0 {
		return false
	}
	conn, err := net.DialTimeout("unix", path, socketProbeTimeout)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// realPath resolves symlinks, falling back to the cleaned path.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
