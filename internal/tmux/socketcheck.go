package tmux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A tmux server that starts on a socket path first unlinks whatever is
// there, so a socket selection taken from outside (a tool argument, the
// environment, a flag) must be checked before any tmux process sees it:
// otherwise one create_session replaces a regular file with a socket. The
// checks here are what tmux itself does not do for -S paths, and what it
// does for its own socket directory (tmux.c, expand_paths: the directory
// must be the user's own and closed to others).

// ErrUnsafeSocket marks a socket name or path refused before tmux saw it.
var ErrUnsafeSocket = errors.New("socket refused")

// SocketError is the rule a socket name or path broke. Its message states
// the rule, never the value, so the caller can prefix the name of the field,
// variable or flag the value came from.
type SocketError struct {
	Rule string
}

func (e *SocketError) Error() string { return e.Rule }

// Unwrap lets callers branch with errors.Is(err, ErrUnsafeSocket).
func (e *SocketError) Unwrap() error { return ErrUnsafeSocket }

func refuse(format string, args ...any) error {
	return &SocketError{Rule: fmt.Sprintf(format, args...)}
}

// MaxSocketName bounds a socket name (-L). tmux joins it to its socket
// directory, and the whole must fit a unix socket address (MaxSocketPath).
const MaxSocketName = 100

// CheckSocketName checks a socket name (-L) as a plain file name: tmux
// resolves it as <socket directory>/<name>, so a '/' or a '..' would reach
// any file the user can write.
func CheckSocketName(name string) error {
	switch {
	case name == "":
		return refuse("must not be empty")
	case len(name) > MaxSocketName:
		return refuse("must be at most %d bytes", MaxSocketName)
	case strings.IndexByte(name, 0) >= 0:
		return refuse("must not contain a NUL byte")
	case strings.ContainsRune(name, '/'):
		return refuse("must be a plain name without '/' (use socket_path for a socket elsewhere)")
	case name == "." || name == "..":
		return refuse("must not be '.' or '..'")
	}
	return nil
}

// CheckSocketInDir checks the socket a valid name selects in tmux's socket
// directory dir: the path must fit a socket address and, if something is
// there already, it must be a socket. tmux checks the directory itself.
func CheckSocketInDir(dir, name string) error {
	p := filepath.Join(dir, name)
	if len(p) > MaxSocketPath {
		return refuse("makes a socket path longer than the %d bytes a unix socket address holds (in %s)", MaxSocketPath, dir)
	}
	if err := checkExisting(p); err != nil && !errors.Is(err, errNoFile) {
		return err
	}
	return checkLock(p)
}

// ExpandHome expands a leading "~" or "~/" to the home directory. Other
// paths, including "~user", come back unchanged.
func ExpandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", refuse("cannot expand '~': %v", err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// CheckSocketPath checks a socket path (-S), after ExpandHome, and returns
// the expanded path. It must be absolute (tmux would resolve a relative one
// against the working directory of whoever runs it) and fit a socket
// address. If something exists there it must be a socket (or a symlink to
// one); if nothing does, its directory must exist and be safe to create a
// socket in (see checkSocketDir). The lock file tmux uses beside it must
// hold nothing worth keeping (checkLock).
func CheckSocketPath(p string) (string, error) {
	switch {
	case p == "":
		return "", refuse("must not be empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", refuse("must not contain a NUL byte")
	}
	p, err := ExpandHome(p)
	if err != nil {
		return "", err
	}
	if len(p) > MaxSocketPath {
		return "", refuse("must be at most %d bytes (the size of a unix socket address)", MaxSocketPath)
	}
	if !filepath.IsAbs(p) {
		return "", refuse("must be an absolute path (or start with ~/): a relative path would resolve against the server's working directory")
	}
	err = checkExisting(p)
	if err != nil && !errors.Is(err, errNoFile) {
		return p, err
	}
	if lerr := checkLock(p); lerr != nil {
		return p, lerr
	}
	if err == nil {
		return p, nil
	}
	return p, checkSocketDir(filepath.Dir(p))
}

// checkLock refuses a socket path whose lock file tmux would delete: to
// start a server, tmux creates <path>.lock, and the new server unlinks it
// (client.c, server.c), whatever it was. Only an empty regular file, the
// leftover of a tmux that died while starting, may be there.
func checkLock(p string) error {
	fi, err := os.Lstat(p + ".lock")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return statRefusal(err)
	}
	if fi.Mode().IsRegular() && fi.Size() == 0 {
		return nil
	}
	return refuse("%s exists at the path plus \".lock\", which tmux deletes when it starts a server there; choose another path", kind(fi.Mode()))
}

// errNoFile: nothing exists at the path (its directory may still be
// missing; checkSocketDir tells).
var errNoFile = errors.New("no file")

// checkExisting returns nil when p is a socket (or a symlink to one),
// errNoFile when nothing is there, and a refusal for anything else.
func checkExisting(p string) error {
	li, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return errNoFile
	}
	if err != nil {
		return statRefusal(err)
	}
	fi := li
	if li.Mode()&fs.ModeSymlink != 0 {
		if fi, err = os.Stat(p); err != nil {
			return refuse("is a symlink whose target cannot be used (%s); refusing to replace it", reason(err))
		}
	}
	if fi.Mode()&fs.ModeSocket != 0 {
		return nil
	}
	return refuse("%s exists there and is not a socket; refusing to replace it", kind(fi.Mode()))
}

// checkSocketDir is the directory rule for a socket tmux would create: the
// directory must exist and no other user may be able to swap entries in
// it, else the socket (or the file tmux unlinks before binding it) could be
// replaced under us. That means owned by the effective user and not
// writable by group or others, or sticky (like /tmp) and owned by the user
// or root. tmux applies the stricter rule of its own directory
// (tmux-UID, mode 0700) to -L sockets itself.
func checkSocketDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return refuse("its directory does not exist; create it first (tmux does not)")
	}
	if err != nil {
		return statRefusal(err)
	}
	if !fi.IsDir() {
		return refuse("its parent is not a directory")
	}
	owner, known := fileOwner(fi)
	if !known {
		return nil
	}
	euid := os.Geteuid()
	sticky := fi.Mode()&fs.ModeSticky != 0
	switch {
	case sticky && (owner == euid || owner == 0):
		return nil
	case owner != euid:
		return refuse("its directory is owned by another user (uid %d, not %d); use a directory of your own", owner, euid)
	case fi.Mode().Perm()&0o022 != 0:
		return refuse("its directory is writable by group or others and not sticky (mode %04o); use a directory only you can write", fi.Mode().Perm())
	}
	return nil
}

func statRefusal(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return refuse("cannot be checked: permission denied")
	}
	return refuse("cannot be checked: %s", reason(err))
}

// reason is an error without the path it names (the caller names the
// field instead).
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a file"
}
