#!/bin/sh
# bench-peers.sh: tmux-mcp side by side with Kcrong/tmux-mcp (the fastest
# peer: Go, one tmux exec per call) through the same TypeScript SDK client,
# as in issue 14. Not run in CI.
#
#   scripts/bench-peers.sh
#
# Builds tmux-mcp from this tree and Kcrong from a clone of its public
# source (KCRONG_REPO, default /work/.mirror/Kcrong+tmux-mcp/repo, a git
# repository or URL; without it only our column is printed). Installs the
# TS SDK client under scripts/bench-peers (npm). Each server gets its own
# tmux server on a socket in a temporary directory, created and killed
# here: the default socket is never touched.
#
# Settings (environment): CALLS (300 per op), RUNS (3), COLD (20 cold
# starts per run and client), RSS_CALLS (2000), TMUX_BIN (tmux),
# BENCH_SHELL (the panes' shell, the same for both servers; default a bash
# without rc files, so a slow ~/.bashrc cannot stall either).
#
# COLD_ONLY=1 measures only cold start (bench-peers/cold.mjs): spawns
# alternated between the servers over ROUNDS rounds (30), through the TS
# SDK client and a raw client, and the client's validator compilation for
# each server's tools/list timed inside Node; BASE_BIN names another build
# of ours (say main's) to measure in the same rounds.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
kcrong_repo=${KCRONG_REPO:-/work/.mirror/Kcrong+tmux-mcp/repo}
tmux_bin=$(command -v "${TMUX_BIN:-tmux}")
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-peers.XXXXXX")
ours_sock=$work/ours.sock
kcrong_sock=$work/kcrong.sock

cleanup() {
	for s in "$ours_sock" "$kcrong_sock"; do
		if [ -S "$s" ]; then "$tmux_bin" -S "$s" kill-server 2>/dev/null || true; fi
	done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# Both servers are built as tmux-mcp's releases are: static, without libc
# mapped in (about 1.7 MB of resident memory for tmux-mcp).
export CGO_ENABLED=0
echo "building tmux-mcp" >&2
(cd "$root" && go build -o "$work/tmux-mcp" ./cmd/tmux-mcp)

kcrong_bin=
if git -C "$kcrong_repo" rev-parse --git-dir >/dev/null 2>&1 || case $kcrong_repo in http*) true ;; *) false ;; esac; then
	echo "building Kcrong/tmux-mcp from $kcrong_repo" >&2
	git clone -q "$kcrong_repo" "$work/kcrong-src"
	(cd "$work/kcrong-src" && go build -o "$work/kcrong" ./cmd/tmux-mcp)
	kcrong_bin=$work/kcrong
	echo "Kcrong at $(git -C "$work/kcrong-src" rev-parse --short HEAD)" >&2
else
	echo "Kcrong/tmux-mcp source not found at $kcrong_repo (set KCRONG_REPO): measuring tmux-mcp alone" >&2
fi

echo "installing the TypeScript SDK client" >&2
(cd "$root/scripts/bench-peers" && npm install --no-audit --no-fund --silent >&2)

# Our server reaches a tmux server made here, with one session; Kcrong
# starts its own on its private socket (session_create in bench.mjs).
bench_shell=${BENCH_SHELL:-bash --norc --noprofile}
env -u TMUX -u TMUX_PANE "$tmux_bin" -S "$ours_sock" -f /dev/null new-session -d -s bench -x 120 -y 40 "$bench_shell"
ours_pane=$("$tmux_bin" -S "$ours_sock" display-message -p -t bench '#{pane_id}')

echo "go $(go env GOVERSION), $("$tmux_bin" -V), node $(node --version), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
OURS_BIN=$work/tmux-mcp OURS_SOCKET=$ours_sock OURS_PANE=$ours_pane \
	KCRONG_BIN=$kcrong_bin KCRONG_SOCKET=$kcrong_sock TMUX_BIN=$tmux_bin BENCH_SHELL=$bench_shell \
	node "$root/scripts/bench-peers/$(if [ "${COLD_ONLY:-}" = 1 ]; then echo cold.mjs; else echo bench.mjs; fi)"
