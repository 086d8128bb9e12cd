package foreground

import (
	"strconv"
	"strings"
)

// A listing of many panes spends most of tmux's time on two fields per
// pane, #{pane_current_command} and #{pane_current_path}: for each, tmux
// 3.3a asks the pane's terminal for its foreground process group
// (tcgetpgrp on the pty master) and reads /proc/PGRP/cmdline or the
// /proc/PGRP/cwd link (osdep-linux.c). The same facts can be read here for
// many panes at once, on a core tmux is not using, when this process sees
// the same processes as the tmux server: the pane's first process (a child
// of the server, the session leader of the pane's terminal) gives the
// terminal's foreground group in its stat (tpgid), the group's leader its
// command line and working directory. PaneProc holds what was read;
// Current says whether it may stand for tmux's answer.

// PaneProc is what the operating system says about one pane's first
// process and its terminal's foreground process group.
type PaneProc struct {
	PID, PPID int
	// TTYNr is the process's controlling terminal (stat's tty_nr, glibc's
	// dev_t encoding); TPGID that terminal's foreground process group.
	TTYNr uint64
	TPGID int
	// Command and Path are tmux's #{pane_current_command} (the group
	// leader's argv[0] as TmuxCommandName names it) and
	// #{pane_current_path} (the leader's working directory); Read is set
	// only when both were read the way tmux reads them.
	Command, Path string
	Read          bool
}

// Current returns the pane's current command and path as tmux computes
// them, when p may stand for tmux's answer: both were read, the process is
// a child of the tmux server serverPID (as tmux numbers it: this process
// and the server see the same pids) and its controlling terminal is the
// pane's tty (as tmux names it: the pid is the pane's and not one reused).
// Otherwise ok is false and the caller asks tmux.
func (p PaneProc) Current(serverPID int, tty string) (command, path string, ok bool) {
	if !p.Read || serverPID <= 0 || p.PPID != serverPID || !ttyIs(tty, p.TTYNr) {
		return "", "", false
	}
	return p.Command, p.Path, true
}

// ttyIs reports whether the terminal named path is the device nr (glibc's
// dev_t encoding, as in /proc/PID/stat). A Unix98 pty slave /dev/pts/N is
// device 136:N (the kernel numbers every pts on major 136 with 20-bit
// minors); any other name is compared with the device the path names here.
func ttyIs(path string, nr uint64) bool {
	if n, ok := strings.CutPrefix(path, "/dev/pts/"); ok {
		if v, err := strconv.ParseUint(n, 10, 32); err == nil && strconv.FormatUint(v, 10) == n {
			if linuxMajor(nr) == 136 && uint64(linuxMinor(nr)) == v {
				return true
			}
		}
	}
	return deviceIs(path, nr)
}

// TmuxCommandName is the name tmux 3.3a gives a command line's first
// argument (names.c, parse_window_name): after one leading '"', cut at the
// next '"'; drop one leading "exec "; skip leading spaces and '-' (a login
// shell's "-bash"); cut at the first space; strip trailing bytes that are
// neither alphanumeric nor punctuation in tmux's UTF-8 locale (every byte
// above 0x7f among them), keeping the first; and a name starting with '/'
// becomes its POSIX basename.
func TmuxCommandName(arg string) string {
	name := strings.TrimPrefix(arg, `"`)
	if i := strings.IndexByte(name, '"'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimPrefix(name, "exec ")
	name = strings.TrimLeft(name, " -")
	if i := strings.IndexByte(name, ' '); i >= 0 {
		name = name[:i]
	}
	for len(name) > 1 && !alnumOrPunct(name[len(name)-1]) {
		name = name[:len(name)-1]
	}
	if strings.HasPrefix(name, "/") {
		name = posixBasename(name)
	}
	return name
}

// alnumOrPunct is C's isalnum || ispunct for one byte in a glibc UTF-8
// locale: printable ASCII other than space; no byte above 0x7f.
func alnumOrPunct(c byte) bool { return c > ' ' && c < 0x7f }

// posixBasename is POSIX basename(3) (glibc's __xpg_basename, which
// <libgen.h> selects) of a path that starts with '/': trailing slashes are
// ignored, and a path of slashes only is "/".
func posixBasename(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" {
		return "/"
	}
	return t[strings.LastIndexByte(t, '/')+1:]
}
