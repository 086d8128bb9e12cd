package httpserve

// Open connections are capped, so that a flood of them (no token needed:
// the token is read from the request, after the connection is accepted)
// cannot take every file descriptor the process may open. Each accepted
// connection holds one until it closes, for up to readHeaderTimeout when
// it sends nothing; at the process's limit, tmux-mcp could no longer
// start a tmux client or a control connection, and every client's calls
// would fail, not only new connections. At the cap, Accept waits for a
// connection to close: new connections queue in the kernel's backlog
// while those already open, and the calls they carry, go on. That is what
// golang.org/x/net/netutil.LimitListener does, which Serve wraps its
// listener in; this file only chooses the number.

// fdReserve is how many descriptors the cap leaves to everything but HTTP
// connections: tmux clients (three pipes each), control connections, log
// and audit files, the watchers' pipes.
const fdReserve = 512

// minConnCap keeps the cap above what a few clients need however small
// --max-sessions is (tests run with 1 or 2).
const minConnCap = 1024

// connsPerSession is the connections one client is expected to hold at
// most: its GET stream, and POSTs beside each other (the SDK's client
// keeps a connection per call in flight).
const connsPerSession = 8

// connCap is the number of connections the daemon keeps open at once:
// room for maxSessions clients, within the descriptors the process may
// open (nofile, 0 when unknown: see openFileLimit) less fdReserve.
func connCap(maxSessions int, nofile uint64) int {
	n := max(minConnCap, maxSessions*connsPerSession)
	if nofile == 0 || nofile >= 1<<31 { // unknown, or as good as unlimited
		return n
	}
	room := max(int(nofile)-fdReserve, 64)
	return min(n, room)
}
