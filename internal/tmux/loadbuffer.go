package tmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/tmux-mcp/tmux-mcp/internal/errarg"
)

// BufferLoader is a Runner that fills a paste buffer by streaming the
// content to the standard input of "tmux load-buffer -b NAME -". The bytes
// meet no tmux parser, no command line and no file, so any content (a NUL,
// invalid UTF-8, a CR, a line that looks like control-mode framing) lands
// in the buffer exactly as given, at the speed of a pipe. On a remote host
// it is the only way large content arrives in time: set in argument pieces
// over the control connection, 3 MB took longer than a call's bound.
type BufferLoader interface {
	LoadBuffer(ctx context.Context, sock Socket, name, content string) error
}

// ErrNoBufferLoader: the Runner cannot stream content into a buffer.
var ErrNoBufferLoader = errors.New("tmux: this runner cannot stream buffer content")

// LoadBuffer fills buffer name with content through the Runner's
// BufferLoader (see there).
func (c *Client) LoadBuffer(ctx context.Context, sock Socket, name, content string) error {
	l, ok := c.Runner.(BufferLoader)
	if !ok {
		return ErrNoBufferLoader
	}
	return l.LoadBuffer(ctx, sock, name, content)
}

// LoadBuffer implements BufferLoader with the exec runner, which runs the
// command either way: it reads the tmux client's standard input.
func (r *ControlRunner) LoadBuffer(ctx context.Context, sock Socket, name, content string) error {
	return r.execRunner().LoadBuffer(ctx, sock, name, content)
}

// LoadBuffer implements BufferLoader: one tmux client, here or on the
// remote host (loadBufferRemote), runs "load-buffer -b name -" and reads
// content on its standard input.
func (r *ExecRunner) LoadBuffer(ctx context.Context, sock Socket, name, content string) error {
	cmds := []Command{{"load-buffer", "-b", name, "-"}}
	if name == "" || strings.HasPrefix(name, "-") || strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("tmux: unusable buffer name %s", errarg.Quoted(name))
	}
	_, err := gateFor(r.Via, sock).notifying(ctx, cmds, func() ([][]byte, error) {
		if r.Via != nil {
			return nil, onHost(r.Via, r.loadBufferRemote(ctx, sock, name, content, cmds))
		}
		return nil, r.loadBufferLocal(ctx, sock, content, cmds)
	})
	return err
}

func (r *ExecRunner) loadBufferLocal(ctx context.Context, sock Socket, content string, cmds []Command) error {
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	argv := append(append([]string{"-u"}, sock.Args()...), cmds[0]...)
	if r.OnSpawn != nil {
		r.OnSpawn(argv)
	}
	cmd := r.command(ctx, append([]string{r.bin()}, argv...))
	cmd.Stdin = strings.NewReader(content)
	stderr := &limitedBuffer{limit: stderrLimit}
	cmd.Stderr = stderr
	runErr := startChild(cmd)
	if runErr == nil {
		runErr = cmd.Wait()
	}
	var exitErr *exec.ExitError
	switch {
	case runErr == nil:
		return nil
	case ctx.Err() != nil:
		return ctxError(ctx, cmds, start)
	case !errors.As(runErr, &exitErr):
		return startError(r.bin(), runErr)
	}
	return newCommandError(cmds[0], stderr.String(), exitErr.ExitCode())
}

// loadBufferRemote runs, on the host, the fixed command line
//
//	echo <nonce> ; exec <bin> -u <socket flags> load-buffer -b <name> -
//
// whose only chosen word is the buffer name, a checked plain word; the
// content goes on the ssh channel's standard input, never on the command
// line. It is written only once the start line has come back: the login
// shell has then run its dotfiles and is about to exec tmux, so a dotfile
// that reads its input (a question) cannot swallow part of the content,
// and one that hangs is killed after Via.StartTimeout, as for a call.
// load-buffer runs alone in its client, so tmux 3.3a's file quirk (see
// writesStdoutFile) cannot meet it; the shell's echo is not tmux output.
func (r *ExecRunner) loadBufferRemote(ctx context.Context, sock Socket, name, content string, cmds []Command) error {
	if err := CheckRemoteWord("a buffer name", name); err != nil {
		return err
	}
	start := time.Now()
	ctx, cancel := withTimeout(ctx, r.Timeout)
	defer cancel()
	words, err := remoteWords(r.bin(), sock)
	if err != nil {
		return err
	}
	startLine := newNonce(12)
	words = append(append([]string{"echo", startLine, ";"}, words...), cmds[0]...)
	argv, release, err := r.Via.Start(ctx, words)
	if err != nil {
		return err
	}
	defer release()
	if r.OnSpawn != nil {
		r.OnSpawn(argv)
	}
	cmd := r.command(ctx, argv)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("tmux: %w", err)
	}
	stdout := &startWriter{mark: []byte(startLine + "\n"), started: make(chan struct{})}
	stdout.buf.limit = maxOutput
	stderr := &limitedBuffer{limit: stderrLimit}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	if err := startChild(cmd); err != nil {
		_ = stdin.Close()
		return startError(argv[0], err)
	}
	var (
		mu       sync.Mutex
		timedOut bool
	)
	exited := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		t := time.NewTimer(r.Via.StartTimeout())
		defer t.Stop()
		select {
		case <-stdout.started:
			// Wait closes the pipe once the process exits, which ends a
			// write that tmux stopped reading.
			_, err := io.WriteString(stdin, content)
			if cerr := stdin.Close(); err == nil {
				err = cerr
			}
			wrote <- err
		case <-exited:
			wrote <- errors.New("the remote command ended before it started tmux")
		case <-t.C:
			mu.Lock()
			timedOut = true
			mu.Unlock()
			_ = cmd.Process.Kill()
			wrote <- errors.New("tmux did not start")
		}
	}()
	runErr := cmd.Wait()
	close(exited)
	writeErr := <-wrote

	stdout.mu.Lock()
	started := stdout.seen
	stdout.mu.Unlock()
	mu.Lock()
	killed := timedOut
	mu.Unlock()
	host := r.Via.Host()
	msg := strings.TrimPrefix(lastLine(stderr.String()), "-:1: ")
	code := exitCode(runErr)
	var exitErr *exec.ExitError
	switch {
	case killed && !started:
		return startTimeoutError(host, r.Via.StartTimeout())
	case ctx.Err() != nil:
		return ctxError(ctx, cmds, start)
	case runErr != nil && !errors.As(runErr, &exitErr):
		return startError(argv[0], runErr)
	case !started:
		return hostError(host, stderr.String())
	case code == 255 || code == -1: // ssh failed, or was killed by a signal
		why := msg
		if why == "" {
			why = "ssh " + runErr.Error()
		}
		return fmt.Errorf("%w: host %s: the connection ended during the call, which may or may not have run (%s)",
			ErrHostUnreachable, host, why)
	case code == 126 || code == 127: // the shell could not exec the tmux binary
		return fmt.Errorf("%w: %s on host %s (%s)", ErrTmuxMissing, r.bin(), host, msg)
	case code != 0:
		return newCommandError(cmds[0], msg, code)
	case writeErr != nil:
		// tmux ended well without reading it all: never a buffer that
		// holds part of the content without saying so.
		return fmt.Errorf("tmux: %s: the content was not all sent: %w", cmds[0][0], writeErr)
	}
	return nil
}
