#!/usr/bin/env bash
# What plugin isolation costs: the example composite get_chained_info (one
# upstream call, bank:list_accounts over stdio) through two gateways of the
# same build, side by side in one run: one with the plugin in a host
# process (isolation: process, the default), one with it loaded in process
# (isolation: none). For each: throughput at c=1 and c=8 (wrk), CPU per
# call (utime+stime from /proc of the gateway, its host and the bank
# server), and the host's idle RSS next to the RSS of the same host
# program with no plugin work done yet. Runs alternate (none, process,
# none, process) so that drift on a shared machine hits both alike.
#   scripts/bench.d/plugin-isolation.sh [seconds]      (from a built tree: build/)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$here/build}; secs=${1:-5}
command -v wrk > /dev/null || { echo "plugin-isolation: needs wrk (apt-get install wrk)" >&2; exit 2; }
work=$(mktemp -d)
pids=()
# The bare host (below) ignores TERM, as every host does, and waits for its
# first frame: closing the FIFO's only writer ends it; the gateways end on TERM.
cleanup() {
  exec 3>&- 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start() {  # isolation -> sets url_<iso>, sid_<iso>, pid_<iso>
  local iso=$1 url sid
  cat > "$work/$iso.yaml" <<YAML
servers:
  - {name: bank, transport: stdio, command: "$build/examples/bank-server"}
plugins:
  - {path: "$build/plugins/libbanking_composites.so", isolation: $iso, max_concurrency: 64}
welcome: {strategy: none}
listen: {port: 0}
YAML
  "$build/mcpgw" --config "$work/$iso.yaml" --log-level info 2> "$work/$iso.err" &
  pids+=($!); eval "pid_$iso=$!"
  for _ in $(seq 1 100); do url=$(grep -o 'http://[^ ]*' "$work/$iso.err" | head -1 || true); [ -n "$url" ] && break; sleep 0.1; done
  [ -n "$url" ] || { "$build/mcpgw" --version; cat "$work/$iso.err"; exit 1; }
  for _ in $(seq 1 300); do curl -sf "${url%/mcp}/readyz" > /dev/null && break; sleep 0.1; done
  sid=$(curl -s -D - -o /dev/null "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}' | tr -d '\r' | awk 'tolower($1)=="mcp-session-id:"{print $2}')
  eval "url_$iso=$url; sid_$iso=$sid"
}

# The gateway and every process under it (the plugin host, the bank).
tree_ticks() {
  local root=$1 total=0 p
  for p in $root $(pgrep -P "$root" || true); do
    [ -r /proc/$p/stat ] && total=$((total + $(awk '{print $14+$15}' /proc/$p/stat)))
  done
  echo $total
}

measure() {  # iso connections -> "rps us_per_call"
  local iso=$1 c=$2 url sid pid t0 t1 out rps threads=$(( $2 < 2 ? 1 : 2 ))
  eval "url=\$url_$iso; sid=\$sid_$iso; pid=\$pid_$iso"
  t0=$(tree_ticks "$pid")
  out=$(cd "$here" && MCP_SESSION=$sid MCP_EXPECT='bank:list_accounts' \
    MCP_BODY='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_chained_info","arguments":{}}}' \
    wrk -t$threads -c"$c" -d${secs}s -s scripts/bench.d/call.lua "$url" | grep RESULT)
  t1=$(tree_ticks "$pid")
  rps=$(sed -E 's/.*rps=([0-9.]+).*/\1/' <<<"$out")
  # A figure made of failed calls would be meaningless: say so.
  grep -q 'errors=0 .*bad=0' <<<"$out" || echo "plugin-isolation: $iso c=$c: some answers failed: $out" >&2
  awk -v t=$((t1 - t0)) -v r="$rps" -v s="$secs" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f %.1f", r, 1e6 * t / hz / (r * s) }'
}

start none
start process
host=$(pgrep -P "$pid_process" -f mcpgw-plugin-host | head -1)
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
idle_host=$(rss "$host")
# The same host program with no plugin: waiting for the gateway's first
# frame on a FIFO nobody writes, before it loads the library.
mkfifo "$work/fifo"
exec 3<> "$work/fifo"
# Without fd 3: it must not hold a writer of its own FIFO open.
"$build/mcpgw-plugin-host" "$build/plugins/libbanking_composites.so" < "$work/fifo" 3>&- 2> /dev/null & bare=$!
pids+=($bare)
sleep 0.5
bare_rss=$(rss "$bare")

echo "== plugin isolation: get_chained_info (one upstream call), ${secs}s per run, alternating"
echo "load before: $(uptime)"
for c in 1 8; do
  declare -A r=()
  for round in 1 2; do
    for iso in none process; do r[$iso$round]=$(measure "$iso" "$c"); done
  done
  for iso in none process; do
    read -r a ua <<<"${r[${iso}1]}"; read -r b ub <<<"${r[${iso}2]}"
    eval "rps_$iso=$(( (a + b) / 2 )); cpu_$iso=$(awk -v x="$ua" -v y="$ub" 'BEGIN{printf "%.1f", (x+y)/2}')"
  done
  printf 'c=%d  none: %6d calls/s %6.1f us CPU/call   process: %6d calls/s %6.1f us CPU/call   throughput ratio %.2f, +%.1f us CPU/call\n' \
    "$c" "$rps_none" "$cpu_none" "$rps_process" "$cpu_process" \
    "$(awk -v p="$rps_process" -v n="$rps_none" 'BEGIN{print p/n}')" "$(awk -v p="$cpu_process" -v n="$cpu_none" 'BEGIN{print p-n}')"
done
echo "host idle RSS: ${idle_host} kB with the plugin loaded; ${bare_rss} kB before loading it (the program alone)"
echo "host idle RSS above the plugin's own ($((idle_host - bare_rss)) kB): ${bare_rss} kB (goal: at most 5120 kB)"
echo "load after: $(uptime)"
