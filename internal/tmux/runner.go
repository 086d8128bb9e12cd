package tmux

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Socket selects a tmux server. Path (-S) wins over Name (-L); with neither,
// tmux picks its own default, which is the caller's server when TMUX is set.
type Socket struct {
	Name string
	Path string
}

// Args returns the tmux flags that select this server.
func (s Socket) Args() []string {
	switch {
	case s.Path != "":
		return []string{"-S", s.Path}
	case s.Name != "":
		return []string{"-L", s.Name}
	}
	return nil
}

// String names the socket for messages and logs.
func (s Socket) String() string {
	switch {
	case s.Path != "":
		return "path " + s.Path
	case s.Name != "":
		return "name " + s.Name
	}
	return "tmux default"
}

// Command is the argv of one tmux command, without the binary or the socket
// flags, for example {"display-message", "-p", "-t", "%1", "#{pane_id}"}.
type Command []string

// Runner executes a sequence of tmux commands against one server in a
// single round trip and returns each command's standard output in order.
//
// It is the seam between the tools and the way tmux is reached: a runner that
// forks one tmux client per call and one that pipelines over a persistent
// control-mode connection both satisfy it, so no tool changes when the
// transport does. When a command fails, Run returns the outputs of the
// commands before it and a *CommandError for it; later commands do not run.
type Runner interface {
	Run(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error)
}

// DefaultTimeout bounds a tmux call whose context carries no deadline, so a
// wedged tmux server (or a hanging tmux binary) can never hang a tool
// forever. Runners take their own bound (Timeout) for tests.
const DefaultTimeout = 10 * time.Second

// withTimeout bounds ctx by d (DefaultTimeout when 0) unless it already
// has a deadline: a caller's own deadline (a wait that may take minutes,
// the wait-for child) is kept as it is.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// ctxError is the error of a call whose ctx ended: ErrTimeout naming how
// long the call waited and its first command, or the cancellation.
func ctxError(ctx context.Context, cmds []Command, start time.Time) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		name := "?"
		if len(cmds) > 0 && len(cmds[0]) > 0 {
			name = cmds[0][0]
		}
		return fmt.Errorf("%w after %s (%s)", ErrTimeout, roundWait(time.Since(start)), name)
	}
	return ctx.Err()
}

// roundWait renders a waited duration the way a person would say it.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// maxOutput bounds what one round trip may return, so a runaway reply cannot
// exhaust memory. Two hundred full 3000-line histories fit well inside it.
const maxOutput = 256 << 20

// ExecRunner runs each round trip as one tmux client process, chaining the
// commands with tmux's own ";" separator and telling their outputs apart by
// marker lines that carry a per-call random nonce (so pane text cannot forge
// them).
type ExecRunner struct {
	Bin string // tmux binary; "tmux" when empty
	// Env, when non-nil, replaces the child's environment (tests use it to
	// count processes or to drop TMUX).
	Env []string
	// OnSpawn, when set, is called before every tmux process starts; tests
	// and benchmarks count round trips with it.
	OnSpawn func(argv []string)
	// Timeout bounds a call whose context has no deadline; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Via, when set, runs each round trip on another host as one
	// "tmux source-file -" reading the commands from its stdin (see Via
	// and exec_remote.go); Bin is then the remote tmux binary.
	Via Via
}

func (r *ExecRunner) bin() string { return binOrDefault(r.Bin) }

// binOrDefault is the tmux binary to run: the configured one, else "tmux"
// from PATH.
func binOrDefault(bin string) string {
	if bin == "" {
		return "tmux"
	}
	return bin
}

// newNonce is a random marker, unguessable by programs in panes, that
// runners use to frame replies; n random bytes (at most 32), hex-encoded.
//
// The bytes come from a ChaCha8 generator keyed once from crypto/rand
// (math/rand/v2 documents ChaCha8 as cryptographically strong, and it
// erases its key as it goes), not from crypto/rand per nonce: that read
// cost about 10 µs of every control-mode call, most of it growing the
// calling goroutine's stack for the getrandom path.
func newNonce(n int) string {
	var raw [32]byte
	b := raw[:n]
	nonces.Lock()
	if nonces.r == nil {
		var seed [32]byte
		if _, err := rand.Read(seed[:]); err != nil {
			panic("tmux-mcp: no system randomness for nonces: " + err.Error())
		}
		nonces.r = mathrand.NewChaCha8(seed)
	}
	_, _ = nonces.r.Read(b)
	nonces.Unlock()
	const prefix = "tmux-mcp-"
	var out [len(prefix) + 64]byte
	copy(out[:], prefix)
	hex.Encode(out[len(prefix):], b)
	return string(out[:len(prefix)+2*n])
}

// nonces is newNonce's generator, keyed on first use.
var nonces struct {
	sync.Mutex
	r *mathrand.ChaCha8
}

// EscapeArg protects an argv element from tmux's command-sequence parsing:
// tmux treats an argument that ends in ";" as a command separator (and a
// trailing "\;" as an escaped ";"), so a literal trailing ";" gets one more
// backslash in front of it. Nothing else in an argv is interpreted by tmux's
// parser.
func EscapeArg(a string) string {
	if strings.HasSuffix(a, ";") {
		return a[:len(a)-1] + `\;`
	}
	return a
}

// maxPacked is how many argv bytes one tmux client may send: the client
// packs its whole argv into one message of at most 16 KiB (MAX_IMSGSIZE)
// and refuses more with "command too long". The margin covers the message
// header and the socket flags.
const maxPacked = 16384 - 512

// ErrTooLong is returned for a single command too long for tmux to accept.
var ErrTooLong = errors.New("tmux command too long")

func packedSize(c Command) int {
	n := 0
	for _, a := range c {
		n += len(a) + 2 // NUL terminator, and an escape a trailing ';' may need
	}
	return n
}

// Run implements Runner. Commands whose argv would not fit one tmux client
// message are split over several processes, run one after the other, so a
// caller never meets tmux's "command too long" for a long chain.
func (r *ExecRunner) Run(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	// See attachGate: a command that may notify every control client
	// waits while a control client of ours is identifying.
	return gateFor(r.Via, sock).notifying(ctx, cmds, func() ([][]byte, error) { return r.run(ctx, sock, cmds) })
}

func (r *ExecRunner) run(ctx context.Context, sock Socket, cmds []Command) ([][]byte, error) {
	if r.Via != nil {
		outs, err := r.runRemote(ctx, sock, cmds)
		return outs, onHost(r.Via, err)
	}
	var outs [][]byte
	for start := 0; start < len(cmds); {
		end, size := start, 0
		for end < len(cmds) {
			n := packedSize(cmds[end]) + 64 // separators and the output marker command
			if n > maxPacked {
				return outs, fmt.Errorf("%w: %s with %d bytes of arguments (tmux accepts about %d)", ErrTooLong, cmds[end][0], n, maxPacked)
			}
			if end > start && size+n > maxPacked {
				break
			}
			size += n
			end++
		}
		part, err := r.runChain(ctx, sock, cmds[start:end]...)
		outs = append(outs, part...)
		if err != nil {
			return outs, err
		}
		start = end
	}
	return outs, nil
}

// runChain runs commands that fit one tmux client message.
func (r *ExecRunner) runChain(ctx context.Context, sock Socket, cmds ...Command) ([][]byte, error) {
	for _, c := range cmds {
		if len(c) == 0 {
			return nil, errors.New("tmux: empty command")
		}
		for _, a := range c {
			if strings.IndexByte(a, 0) >= 0 {
				return nil, errors.New("tmux: argument contains a NUL byte")
			}
		}
	}
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()

	argv := append([]string{"-u"}, sock.Args()...)
	var marker string
	if len(cmds) > 1 {
		marker = "\x1e" + newNonce(8) + "-"
	}
	for i, c := range cmds {
		if i > 0 {
			argv = append(argv, ";", "display-message", "-p", fmt.Sprintf("%s%d", marker, i-1), ";")
		}
		for _, a := range c {
			argv = append(argv, EscapeArg(a))
		}
	}

	if r.OnSpawn != nil {
		r.OnSpawn(argv)
	}
	cmd := r.command(ctx, append([]string{r.bin()}, argv...))
	var stdout limitedBuffer
	var stderr bytes.Buffer
	stdout.limit = maxOutput
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	runErr := startChild(cmd)
	if runErr == nil {
		runErr = cmd.Wait()
	}

	outs := splitMarked(stdout.Bytes(), marker, len(cmds))
	if runErr == nil && !stdout.overflow {
		return outs, nil
	}
	if ctx.Err() != nil {
		return nil, ctxError(ctx, cmds, start)
	}
	if stdout.overflow {
		return nil, fmt.Errorf("tmux: reply larger than %d bytes", maxOutput)
	}
	var exitErr *exec.ExitError
	if !errors.As(runErr, &exitErr) {
		return nil, startError(r.bin(), runErr)
	}
	// The failing command is the first one whose output is missing.
	failed := len(outs) - 1
	if failed < 0 {
		failed = 0
	}
	return outs[:failed], newCommandError(cmds[failed], stderr.String(), exitErr.ExitCode())
}

// splitMarked cuts chained output at the marker lines. It returns one slice
// per command that completed, plus the (possibly partial) output of the
// command that was running when the chain stopped.
func splitMarked(out []byte, marker string, n int) [][]byte {
	if n == 1 {
		return [][]byte{out}
	}
	res := make([][]byte, 0, n)
	rest := out
	for i := 0; i < n-1; i++ {
		m := []byte(fmt.Sprintf("%s%d\n", marker, i))
		at := bytes.Index(rest, m)
		if at < 0 {
			break
		}
		res = append(res, rest[:at])
		rest = rest[at+len(m):]
	}
	return append(res, rest)
}

// command is one child process of this runner (a tmux client here, or
// ssh carrying one to a host): argv, killed when ctx ends, with half a
// second for its pipes to drain after it exits, run with r.Env when set.
func (r *ExecRunner) command(ctx context.Context, argv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 500 * time.Millisecond
	if r.Env != nil {
		cmd.Env = r.Env
	}
	return cmd
}

// stderrLimit caps what is kept of a child's stderr for an error message.
const stderrLimit = 64 << 10

type limitedBuffer struct {
	bytes.Buffer
	limit    int
	overflow bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		b.overflow = true
		return 0, errors.New("reply too large")
	}
	return b.Buffer.Write(p)
}
