#!/usr/bin/env bash
# scripts/bench's large-answer section: one tools/call whose result is an
# image of LARGE_MIB MiB of base64 in content[].data (tests/bench/
# echo_upstream's `blob`), over Streamable HTTP, directly and through the
# gateway, alternately in one run, same upstream, same client (curl):
#  - wall time per call (median of the rounds), and its ratio to direct;
#  - the gateway's CPU per MiB of answer (user+system, from the scheduler's
#    /proc/PID/task/*/schedstat);
#  - the gateway's peak RSS growth per MiB of answer (VmHWM after the calls
#    against VmRSS after a small warm-up call).
#   scripts/bench.d/large-answer.sh BUILD [rounds]   # or BENCH_ONLY=large scripts/bench [rounds]
# Prints one LARGE line per round and a summary line.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [rounds]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
rounds=${2:-5}
mib=${LARGE_MIB:-16}
# shellcheck source=scripts/bench.d/common.sh
source "$here/scripts/bench.d/common.sh"

"$build/tests/echo_upstream" --http 0 > "$work/echo.out" &
pids+=($!)
direct=$(url_in "$work/echo.out")
cat > "$work/gw.yaml" <<YAML
servers:
  - {name: eh, transport: http, url: "$direct"}
welcome: {strategy: none}
listen: {port: 0}
YAML
"$build/mcpgw" --config "$work/gw.yaml" 2> "$work/gw.err" &
pids+=($!)
gw=$!
gw_url=$(url_in "$work/gw.err")
for _ in $(seq 1 300); do curl -sf "${gw_url%/mcp}/readyz" > /dev/null && break; sleep 0.1; done
sid_direct=$(session "$direct")
sid_gw=$(session "$gw_url")

blob() { printf '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"%s","arguments":{"bytes":%d}}}' "$1" "$2"; }
post() {  # url session body -> curl's time_total; fails unless the answer is as long as asked
  local out
  out=$(curl -s -o "$work/answer" -w '%{time_total}' "$1" -H "Mcp-Session-Id: $2" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d "$3")
  [ "$(stat -c %s "$work/answer")" -gt $((mib * 1048576)) ] || { echo "short answer: $(head -c 300 "$work/answer")" >&2; return 1; }
  echo "$out"
}
kib() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }

# Warm-up: both paths once with a small answer, then the gateway's resident
# set is the base its peak is measured against.
curl -s -o /dev/null "$gw_url" -H "Mcp-Session-Id: $sid_gw" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -d "$(blob eh:blob 1024)"
base_rss=$(kib "$gw" VmRSS)
bytes=$((mib * 1048576))
walls_direct=() walls_gw=()
cpu_ns_total=0
for r in $(seq 1 "$rounds"); do
  d=$(post "$direct" "$sid_direct" "$(blob blob "$bytes")")
  t0=$(cpu_ns "$gw")
  g=$(post "$gw_url" "$sid_gw" "$(blob eh:blob "$bytes")")
  t1=$(cpu_ns "$gw")
  cpu_ns_total=$((cpu_ns_total + t1 - t0))
  walls_direct+=("$d") walls_gw+=("$g")
  echo "LARGE round=$r mib=$mib direct_s=$d gateway_s=$g gateway_cpu_ms=$(( (t1 - t0) / 1000000 ))"
done
peak_rss=$(kib "$gw" VmHWM)
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
md=$(median "${walls_direct[@]}")
mg=$(median "${walls_gw[@]}")
awk -v md="$md" -v mg="$mg" -v t="$cpu_ns_total" -v n="$rounds" -v mib="$mib" -v base="$base_rss" -v peak="$peak_rss" 'BEGIN {
  printf "LARGE-SUMMARY mib=%d rounds=%d wall_direct_ms=%.1f wall_gateway_ms=%.1f wall_ratio=%.2f gateway_cpu_ms_per_mib=%.2f peak_rss_growth_mib_per_mib=%.2f\n",
    mib, n, md * 1000, mg * 1000, mg / md, t / 1e6 / n / mib, (peak - base) / 1024 / mib }'
