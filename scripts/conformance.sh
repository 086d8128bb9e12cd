#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# from npm) natively against `tmux-mcp serve --http` on an isolated tmux
# server, and prints every server scenario as PASS, FAIL or SKIP (with why).
#
#   scripts/conformance.sh                  # all server scenarios
#   scripts/conformance.sh ping tools-list  # just these
#
# Scenarios that call the suite's own fixtures (its test_* tools and prompts,
# its test:// resources) are skipped: tmux-mcp serves tmux, not the suite's
# reference server; so are extensions tmux-mcp does not offer. Within a
# scenario, checks the suite itself reports as untestable (they need one of
# its diagnostic tools) are listed, not counted as failures. Every other
# check must pass; the exit status is 1 if one does not.
#
# The pinned 0.1.16 covers protocol 2025-06-18/2025-11-25;
# CONFORMANCE_VERSION=0.2.0-alpha.12 adds the 2026-07-28 scenarios
# (server-stateless, caching, http-header-validation, ...).
#
# The token: the script generates one, gives it to the server as
# TMUX_MCP_HTTP_TOKEN, and to the suite through scripts/conformance/auth-header.mjs
# (a node --import preload reading CONFORMANCE_BEARER_TOKEN), because the
# suite's CLI has no option for credentials. It never appears on a command line.
#
# Settings (environment):
#   CONFORMANCE_VERSION  suite version from npm (default 0.1.16, the latest stable)
#   CONFORMANCE_CACHE    where the suite (and node 22, if needed) is installed
#                        (default scripts/.cache, git-ignored)
#   TMUX_MCP_BIN         a built tmux-mcp to test (default: go build ./cmd/tmux-mcp)
#   TMUX_BIN             tmux binary (default: tmux on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

version=${CONFORMANCE_VERSION:-0.1.16}
cache=${CONFORMANCE_CACHE:-$root/scripts/.cache}
tmux_bin=${TMUX_BIN:-tmux}

for tool in node npm "$tmux_bin" go curl; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "conformance: $tool is required" >&2
    exit 2
  fi
done

# The suite (0.1.14 and later) imports fs.globSync, which Node gained in
# 22; on an older system node, install Node 22 from npm beside the suite.
node_bin=$(command -v node)
if [ "$("$node_bin" -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  if [ ! -x "$cache/node22/node_modules/.bin/node" ]; then
    echo "conformance: system node $("$node_bin" --version) is older than 22; installing node@22 from npm into $cache/node22"
    mkdir -p "$cache/node22"
    npm install --prefix "$cache/node22" --no-audit --no-fund --loglevel=error node@22 >/dev/null
  fi
  node_bin=$cache/node22/node_modules/.bin/node
fi

suite=$cache/conformance-$version
cli=$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$cli" ]; then
  echo "conformance: installing @modelcontextprotocol/conformance@$version into $suite"
  mkdir -p "$suite"
  npm install --prefix "$suite" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/conformance@$version" >/dev/null
fi
# The preload imports undici, so it lives beside the suite's node_modules.
cp "$root/scripts/conformance/auth-header.mjs" "$suite/auth-header.mjs"

work=$(mktemp -d "${TMPDIR:-/tmp}/tmux-mcp-conformance.XXXXXX")
socket="tmuxmcp-conformance-$$-$RANDOM"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  env -u TMUX -u TMUX_PANE "$tmux_bin" -L "$socket" kill-server 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

bin=${TMUX_MCP_BIN:-}
if [ -z "$bin" ]; then
  bin=$work/tmux-mcp
  go build -o "$bin" ./cmd/tmux-mcp
fi

# An isolated tmux server: its own socket name, no configuration; never the
# user's server (TMUX and TMUX_PANE are removed everywhere below).
env -u TMUX -u TMUX_PANE "$tmux_bin" -L "$socket" -f /dev/null new-session -d -s main -x 80 -y 24

token=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
port=$("$node_bin" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
base="http://127.0.0.1:$port"
url="$base/mcp"
env -u TMUX -u TMUX_PANE TMUX_MCP_SOCKET="$socket" TMUX_MCP_TMUX_BIN="$(command -v "$tmux_bin")" \
  TMUX_MCP_HTTP_TOKEN="$token" "$bin" serve --http "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 150); do
  if curl -fsS -o /dev/null "$base/healthz" 2>/dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "conformance: serve --http exited:" >&2
    cat "$work/server.log" >&2
    exit 2
  fi
  sleep 0.1
done
curl -fsS -o /dev/null "$base/healthz" || { echo "conformance: no /healthz at $base" >&2; exit 2; }

# skip_reason names the suite fixture a scenario needs, or prints nothing.
skip_reason() {
  case $1 in
    tools-call-simple-text) echo "calls the suite's test tool test_simple_text" ;;
    tools-call-image) echo "calls the suite's test tool test_image_content" ;;
    tools-call-audio) echo "calls the suite's test tool test_audio_content" ;;
    tools-call-embedded-resource) echo "calls the suite's test tool test_embedded_resource" ;;
    tools-call-mixed-content) echo "calls the suite's test tool test_multiple_content_types" ;;
    tools-call-with-logging) echo "calls the suite's test tool test_tool_with_logging" ;;
    tools-call-error) echo "calls the suite's test tool test_error_handling" ;;
    tools-call-with-progress) echo "calls the suite's test tool test_tool_with_progress" ;;
    tools-call-sampling) echo "calls the suite's test tool test_sampling" ;;
    tools-call-elicitation) echo "calls the suite's test tool test_elicitation" ;;
    elicitation-sep1034-defaults) echo "calls the suite's test tool test_elicitation_sep1034_defaults" ;;
    elicitation-sep1330-enums) echo "calls the suite's test tool test_elicitation_sep1330_enums" ;;
    json-schema-2020-12) echo "looks for the suite's test tool json_schema_2020_12_tool" ;;
    server-sse-polling) echo "calls the suite's test tool test_reconnection" ;;
    resources-read-text) echo "reads the suite's resource test://static-text" ;;
    resources-read-binary) echo "reads the suite's resource test://static-binary" ;;
    resources-templates-read) echo "reads the suite's template test://template/{id}/data" ;;
    resources-subscribe) echo "subscribes to the suite's resource test://watched-resource" ;;
    resources-unsubscribe) echo "unsubscribes from the suite's resource test://watched-resource" ;;
    prompts-get-simple) echo "gets the suite's test prompt test_simple_prompt" ;;
    prompts-get-with-args) echo "gets the suite's test prompt test_prompt_with_arguments" ;;
    prompts-get-embedded-resource) echo "gets the suite's test prompt test_prompt_with_embedded_resource" ;;
    prompts-get-with-image) echo "gets the suite's test prompt test_prompt_with_image" ;;
    # Suite 0.2 (CONFORMANCE_VERSION=0.2.0-alpha.*): 2026-07-28 scenarios.
    input-required-result-unsupported-methods) ;;
    input-required-result-*) echo "calls the suite's test_input_required_result_* tools" ;;
    tasks-*) echo "the tasks extension (io.modelcontextprotocol/tasks), which tmux-mcp does not offer" ;;
    sep-2640-*) echo "the skills extension (SEP-2640), which tmux-mcp does not offer" ;;
  esac
}

if [ $# -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <("$node_bin" "$cli" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi

results=${CONFORMANCE_RESULTS:-$cache/results}
rm -rf "$results"
mkdir -p "$results"
echo "conformance: @modelcontextprotocol/conformance@$version (node $("$node_bin" --version)) against $url"
echo "conformance: tmux socket -L $socket; token generated for this run, given to the server as TMUX_MCP_HTTP_TOKEN and to the suite as Authorization: Bearer via $(basename "$suite")/auth-header.mjs"
echo

summary=()
failed=0
for s in "${scenarios[@]}"; do
  reason=$(skip_reason "$s")
  if [ -n "$reason" ]; then
    summary+=("$(printf '%-44s SKIP  %s' "$s" "$reason")")
    continue
  fi
  out=$results/$s
  mkdir -p "$out"
  # Its exit status is not the verdict (untestable checks fail it too):
  # the checks below are.
  CONFORMANCE_BEARER_TOKEN="$token" CONFORMANCE_TARGET_ORIGIN="$base" \
    "$node_bin" --import "$suite/auth-header.mjs" "$cli" server --url "$url" --scenario "$s" -o "$out" >"$out/output.txt" 2>&1 || true
  # The verdict from the scenario's checks: FAIL when a check failed (shown
  # with what was expected and what came back), SKIP when the suite itself
  # marked every check it could not pass "untestable" (a check that needs
  # its own fixture, e.g. a diagnostic tool), else PASS; untestable checks
  # and WARNINGs are listed either way.
  verdict=$("$node_bin" -e '
    const fs = require("fs"), path = require("path");
    const find = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? find(path.join(d, e.name)) : e.name === "checks.json" ? [path.join(d, e.name)] : []);
    const checks = find(process.argv[1]).flatMap((f) => JSON.parse(fs.readFileSync(f, "utf8")));
    const untestable = (c) => c.status === "FAILURE" && c.details && c.details.untestable === true;
    const ok = checks.filter((c) => c.status === "SUCCESS").length;
    const failed = checks.filter((c) => c.status === "FAILURE" && !untestable(c));
    const notTestable = checks.filter(untestable);
    const warnings = checks.filter((c) => c.status === "WARNING");
    const verdict = failed.length > 0 || checks.length === 0 ? "FAIL" : ok === 0 && notTestable.length > 0 ? "SKIP" : "PASS";
    const lines = [`${verdict}  ${ok} checks passed, ${failed.length} failed, ${notTestable.length} not testable without fixtures of the suite, ${warnings.length} warnings`];
    for (const c of [...failed, ...notTestable, ...warnings]) {
      const st = untestable(c) ? "UNTESTABLE" : c.status;
      lines.push(`    ${st} ${c.id}: ${c.errorMessage || c.description}` +
        (c.details && !untestable(c) ? `\n      details: ${JSON.stringify(c.details).slice(0, 600)}` : ""));
    }
    console.log(lines.join("\n"));
  ' "$out" 2>/dev/null || echo "FAIL  no checks.json (see $out/output.txt)")
  case $verdict in
    PASS*|SKIP*) ;;
    *) failed=1 ;;
  esac
  summary+=("$(printf '%-44s %s' "$s" "$verdict")")
done

printf '%s\n' "${summary[@]}"
echo
echo "conformance: results in $results (checks.json and output per scenario)"
if [ "$failed" -ne 0 ]; then
  cp "$work/server.log" "$results/server.log"
  echo "conformance: FAILED; server log in $results/server.log"
  exit 1
fi
echo "conformance: every scenario that does not need the suite's own fixtures passed"
