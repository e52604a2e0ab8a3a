#!/usr/bin/env bash
# CPU of the mcpgw process per call (utime+stime from /proc/PID/stat, which
# other work on a shared machine disturbs far less than throughput): echo
# through a stdio toolbox and tools/list of 5,000 tools, for the checkout at
# ROOT (its build/). To compare two builds, run it for each, alternating:
#   scripts/bench.d/cpu-per-call.sh /path/to/before 5; scripts/bench.d/cpu-per-call.sh "$PWD" 5
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 ROOT [seconds]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
root=$(cd "$1" && pwd); build=$root/build; secs=${2:-5}
work=$(mktemp -d)
cat > "$work/gw.yaml" <<YAML
servers:
  - {name: tbs, transport: stdio, command: "$build/examples/toolbox-server"}
  - {name: big, transport: stdio, command: "$build/examples/toolbox-server", args: [--tools, "5000"]}
welcome: {strategy: none}
listen: {port: 0, page_size: 10000}
YAML
"$build/mcpgw" --config "$work/gw.yaml" 2> "$work/gw.err" & gw=$!
for _ in $(seq 1 100); do url=$(grep -o 'http://[^ ]*' "$work/gw.err" | head -1 || true); [ -n "$url" ] && break; sleep 0.1; done
# Ready = both upstreams listed (/readyz), not a fixed wait.
for _ in $(seq 1 300); do curl -sf "${url%/mcp}/readyz" > /dev/null && break; sleep 0.1; done
sid=$(curl -s -D - -o /dev/null "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}' | tr -d '\r' | awk 'tolower($1)=="mcp-session-id:"{print $2}')
ticks() { awk '{print $14+$15}' /proc/$gw/stat; }
measure() {  # label body expect
  local t0 t1 out rps
  t0=$(ticks)
  out=$(cd "$here" && MCP_SESSION=$sid MCP_BODY=$2 MCP_EXPECT=$3 wrk -t2 -c16 -d${secs}s -s scripts/bench.d/call.lua "$url" | grep RESULT)
  t1=$(ticks)
  rps=$(sed -E 's/.*rps=([0-9.]+).*/\1/' <<<"$out")
  awk -v l="$1" -v t=$((t1 - t0)) -v r="$rps" -v s="$secs" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%s: %.1f us CPU per call (%d calls)\n", l, 1e6 * t / hz / (r * s), r * s }'
}
measure echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tbs:echo","arguments":{"text":"hello"}}}' '"hello"'
measure list5000 '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' 'big:gen_4999'
kill $gw; wait $gw 2>/dev/null || true; rm -rf "$work"
