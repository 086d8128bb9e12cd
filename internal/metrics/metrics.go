// Package metrics counts what the daemon does and writes it in the
// Prometheus text exposition format (serve --http --metrics ADDR). It knows
// nothing of MCP: the server, the HTTP daemon and the tmux layer call its
// plain functions at the points where things happen.
//
// Metrics are off unless Enable was called, and then every function returns
// after one atomic load: the stdio server and the CLI pay nothing for them.
// Nothing is built at init; the exposition library's own init (which is
// why go.mod pins the release it does) is the only cost a binary without
// metrics pays at start-up (docs/cold-start.md).
//
// Labels are only ever tool (a name from the registry, given to Enable)
// and outcome (a fixed set below): never a value from a call's arguments,
// a host, session or token name, so a client cannot grow the number of
// series.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// Outcome is how a tool call ended, as the audit log tells them apart.
type Outcome uint8

// The outcomes of a tool call.
const (
	// OK: the call ran and answered without isError.
	OK Outcome = iota
	// ToolError: an isError result (bad input, a tmux error, a missing
	// pane...) other than those below.
	ToolError
	// Refused: the call was not run because policy said no: the tool is
	// hidden by the tier or the toolsets, above the token's tier, outside
	// the caller's scope, or its confirmation was declined, unanswered or
	// could not be asked.
	Refused
	// Cancelled: the client cancelled the call, or its session ended.
	Cancelled
	// Timeout: tmux did not answer in time, or a wait ran out.
	Timeout
	// InputRequired: a question went back to the client (2026-07-28
	// confirmation); the call runs when it is answered.
	InputRequired
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"ok", "tool_error", "refused", "cancelled", "timeout", "input_required"}

func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "unknown"
}

// Answer is what became of a confirmation question (MCP elicitation).
type Answer uint8

// The answers to a confirmation.
const (
	Accept      Answer = iota // the person accepted: the call runs
	Decline                   // the person declined
	Cancel                    // the person dismissed it, or the call was cancelled while it was open
	Unanswered                // no answer within the wait ceiling
	Unsupported               // the client cannot be asked (no elicitation): refused or allowed by --confirm-fallback
	Invalid                   // the question could not be sent, or the answer was not valid (forged, replayed, for other arguments)
	numAnswers
)

var answerNames = [numAnswers]string{"accept", "decline", "cancel", "timeout", "unsupported", "error"}

func (a Answer) String() string {
	if a < numAnswers {
		return answerNames[a]
	}
	return "unknown"
}

// latencyBounds are the upper bounds, in seconds, of the call latency
// histogram: a tmux round trip takes well under a millisecond over control
// mode and about 2 ms exec'd; waits run up to the wait ceiling (at most
// 120 s).
var latencyBounds = [...]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// Names of the metrics (README, Operations).
const (
	NameCalls          = "tmux_mcp_tool_calls_total"
	NameLatency        = "tmux_mcp_tool_call_duration_seconds"
	NameInFlight       = "tmux_mcp_tool_calls_in_flight"
	NameUnknownTool    = "tmux_mcp_unknown_tool_calls_total"
	NameSessions       = "tmux_mcp_http_sessions"
	NameSessionsTotal  = "tmux_mcp_http_sessions_total"
	NameControlConns   = "tmux_mcp_tmux_control_connections"
	NameReconnects     = "tmux_mcp_tmux_control_reconnects_total"
	NameHostsUp        = "tmux_mcp_ssh_hosts_up"
	NameHostsDown      = "tmux_mcp_ssh_hosts_down"
	NameHostsIdle      = "tmux_mcp_ssh_hosts_idle"
	NameConfirmations  = "tmux_mcp_confirmations_total"
	NameTokensRevoked  = "tmux_mcp_tokens_revoked_total"
	contentTypeVersion = "text/plain; version=0.0.4; charset=utf-8"
)

// family is one metric family: its HELP and TYPE lines and its series,
// kept in a set of their own so each family is written under its own
// metadata (the library writes HELP lines without text), or written by
// write.
type family struct {
	name, help, typ string
	set             *vm.Set
	write           func(io.Writer)
}

// toolStats are the series of one tool. calls[OK] and latency exist from
// the start, so every tool of the registry is listed; the other outcomes
// appear with their first call.
type toolStats struct {
	name    string
	calls   [numOutcomes]atomic.Pointer[vm.Counter]
	names   [numOutcomes]string
	latency histogram
}

// histogram is a Prometheus histogram over latencyBounds. The library
// release this package pins (see go.mod) has none with le buckets; its
// own histograms use vmrange buckets, which Prometheus cannot aggregate.
// A lock keeps a scrape from seeing a count without its bucket.
type histogram struct {
	mu      sync.Mutex
	buckets [len(latencyBounds) + 1]uint64 // per bucket, not cumulative; the last is +Inf
	sum     float64
	count   uint64
}

func (h *histogram) observe(v float64) {
	i := sort.SearchFloat64s(latencyBounds[:], v) // the first bound >= v
	h.mu.Lock()
	h.buckets[i]++
	h.sum += v
	h.count++
	h.mu.Unlock()
}

// write writes the series of one labelled histogram, buckets in
// increasing le and cumulative, with the library's line writers.
func (h *histogram) write(w io.Writer, name, label string) {
	h.mu.Lock()
	b, sum, count := h.buckets, h.sum, h.count
	h.mu.Unlock()
	var cum uint64
	for i, n := range b {
		cum += n
		le := "+Inf"
		if i < len(latencyBounds) {
			le = strconv.FormatFloat(latencyBounds[i], 'g', -1, 64)
		}
		vm.WriteCounterUint64(w, name+"_bucket{"+label+`,le="`+le+`"}`, cum)
	}
	vm.WriteCounterFloat64(w, name+"_sum{"+label+"}", sum)
	vm.WriteCounterUint64(w, name+"_count{"+label+"}", count)
}

// Registry holds the series of one daemon.
type Registry struct {
	families []*family
	calls    *family
	tools    map[string]*toolStats

	inFlight      *vm.Gauge
	unknownTool   *vm.Counter
	sessions      *vm.Gauge
	sessionsTotal *vm.Counter
	reconnects    *vm.Counter
	answers       [numAnswers]*vm.Counter
	revoked       *vm.Counter
	hosts         atomic.Pointer[func() (up, down, idle int)]
}

// controlConns counts the live tmux control-mode clients. It is kept
// whether or not metrics are on (an atomic add per client started or
// ended), since clients may start before Enable and the gauge must not go
// negative when they end.
var controlConns atomic.Int64

// on is the enabled registry; nil: metrics are off.
var on atomic.Pointer[Registry]

// New builds the series for the given tools (every tool of the registry:
// only these names ever become a tool label). Enable makes it the one
// the package functions count into.
func New(tools []string) *Registry {
	r := &Registry{tools: make(map[string]*toolStats, len(tools))}
	fam := func(name, typ, help string) *family {
		f := &family{name: name, help: help, typ: typ, set: vm.NewSet()}
		r.families = append(r.families, f)
		return f
	}
	r.calls = fam(NameCalls, "counter", "Tool calls (tools/call requests; the rows of a batch are counted in the batch's call), by tool and outcome.")
	lat := fam(NameLatency, "histogram", "Time from a tool call's arrival to its answer, by tool.")
	var order []*toolStats
	lat.write = func(w io.Writer) {
		for _, ts := range order {
			ts.latency.write(w, NameLatency, `tool="`+ts.name+`"`)
		}
	}
	for _, t := range tools {
		if !plainName(t) || r.tools[t] != nil {
			continue
		}
		ts := &toolStats{name: t}
		order = append(order, ts)
		for o := range numOutcomes {
			ts.names[o] = NameCalls + `{tool="` + t + `",outcome="` + o.String() + `"}`
		}
		ts.calls[OK].Store(r.calls.set.NewCounter(ts.names[OK]))
		r.tools[t] = ts
	}
	sort.Slice(order, func(i, j int) bool { return order[i].name < order[j].name })
	r.inFlight = fam(NameInFlight, "gauge", "Tool calls running now.").set.NewGauge(NameInFlight, nil)
	r.unknownTool = fam(NameUnknownTool, "counter", "Calls naming a tool that does not exist (the name is not recorded).").set.NewCounter(NameUnknownTool)
	r.sessions = fam(NameSessions, "gauge", "Stateful HTTP sessions open now.").set.NewGauge(NameSessions, nil)
	r.sessionsTotal = fam(NameSessionsTotal, "counter", "Stateful HTTP sessions opened.").set.NewCounter(NameSessionsTotal)
	fam(NameControlConns, "gauge", "tmux control-mode clients running now (the engine's and the output watchers', local and remote).").
		set.NewGauge(NameControlConns, func() float64 { return float64(controlConns.Load()) })
	r.reconnects = fam(NameReconnects, "counter", "Engine connections to a tmux server made again after the previous one was lost or the server behind the socket changed.").
		set.NewCounter(NameReconnects)
	hosts := func(pick func(up, down, idle int) int) func() float64 {
		return func() float64 {
			f := r.hosts.Load()
			if f == nil {
				return 0
			}
			return float64(pick((*f)()))
		}
	}
	fam(NameHostsUp, "gauge", "Configured SSH hosts with a live connection.").set.NewGauge(NameHostsUp, hosts(func(u, _, _ int) int { return u }))
	fam(NameHostsDown, "gauge", "Configured SSH hosts whose connection failed or was lost (the next call reconnects).").set.NewGauge(NameHostsDown, hosts(func(_, d, _ int) int { return d }))
	fam(NameHostsIdle, "gauge", "Configured SSH hosts not connected yet.").set.NewGauge(NameHostsIdle, hosts(func(_, _, i int) int { return i }))
	conf := fam(NameConfirmations, "counter", "Confirmations (MCP elicitation before a call runs), by outcome: the answer.")
	for a := range numAnswers {
		r.answers[a] = conf.set.NewCounter(NameConfirmations + `{outcome="` + a.String() + `"}`)
	}
	r.revoked = fam(NameTokensRevoked, "counter", "Tokens revoked (removed or replaced) by reloading the tokens file.").set.NewCounter(NameTokensRevoked)
	return r
}

// Write writes every family in the text exposition format.
func (r *Registry) Write(w io.Writer) {
	for _, f := range r.families {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		if f.write != nil {
			f.write(w)
			continue
		}
		f.set.WritePrometheus(w)
	}
}

// ServeHTTP answers GET /metrics.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", contentTypeVersion)
	w.Header().Set("Cache-Control", "no-store")
	r.Write(w)
}

// Enable turns metrics on, counting into r from now on.
func Enable(r *Registry) { on.Store(r) }

// Enabled reports whether metrics are on.
func Enabled() bool { return on.Load() != nil }

// CallStarted counts a tool call as running.
func CallStarted() {
	if r := on.Load(); r != nil {
		r.inFlight.Inc()
	}
}

// CallEnded counts a call that CallStarted counted: no longer running,
// then as Call does.
func CallEnded(tool string, o Outcome, d time.Duration) {
	if r := on.Load(); r != nil {
		r.inFlight.Dec()
		r.call(tool, o, d)
	}
}

// Call counts a tool call that was answered without running (a refusal
// at the gate): by tool and outcome, and its latency.
func Call(tool string, o Outcome, d time.Duration) {
	if r := on.Load(); r != nil {
		r.call(tool, o, d)
	}
}

func (r *Registry) call(tool string, o Outcome, d time.Duration) {
	ts := r.tools[tool]
	if ts == nil || o >= numOutcomes {
		r.unknownTool.Inc() // not in the registry given to New: never a label
		return
	}
	c := ts.calls[o].Load()
	if c == nil {
		c = r.calls.set.GetOrCreateCounter(ts.names[o])
		ts.calls[o].Store(c)
	}
	c.Inc()
	ts.latency.observe(d.Seconds())
}

// UnknownTool counts a call naming no tool of the registry.
func UnknownTool() {
	if r := on.Load(); r != nil {
		r.unknownTool.Inc()
	}
}

// SessionOpened counts a stateful HTTP session that started.
func SessionOpened() {
	if r := on.Load(); r != nil {
		r.sessions.Inc()
		r.sessionsTotal.Inc()
	}
}

// SessionClosed counts a session SessionOpened counted as ended.
func SessionClosed() {
	if r := on.Load(); r != nil {
		r.sessions.Dec()
	}
}

// ControlStarted and ControlEnded count a tmux control-mode client
// process: started, and exited (reaped).
func ControlStarted() { controlConns.Add(1) }

// ControlEnded: see ControlStarted.
func ControlEnded() { controlConns.Add(-1) }

// ControlReconnected counts an engine connection made again to a socket
// whose previous connection was lost.
func ControlReconnected() {
	if r := on.Load(); r != nil {
		r.reconnects.Inc()
	}
}

// HostStates sets how the SSH host gauges are read: f is called at each
// scrape and returns how many configured hosts are up, down and idle.
func HostStates(f func() (up, down, idle int)) {
	if r := on.Load(); r != nil {
		r.hosts.Store(&f)
	}
}

// Confirmation counts an answered (or unanswerable) confirmation.
func Confirmation(a Answer) {
	if r := on.Load(); r != nil && a < numAnswers {
		r.answers[a].Inc()
	}
}

// TokensRevoked counts n tokens revoked by a reload of the tokens file.
func TokensRevoked(n int) {
	if r := on.Load(); r != nil && n > 0 {
		r.revoked.Add(n)
	}
}

// String is the registry's exposition, for tests and debugging.
func (r *Registry) String() string {
	var b strings.Builder
	r.Write(&b)
	return b.String()
}

// plainName reports whether a tool name can be a label value as is: the
// registry's names are identifiers, and anything else (which would need
// escaping) is never made a label.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}
