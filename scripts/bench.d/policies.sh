#!/usr/bin/env bash
# What policies cost per call, side by side: the CPU of the mcpgw process
# per tools/call echo (utime+stime from /proc/PID/stat over a wrk run, as
# cpu-per-call.sh) through two gateways of the same build in front of the
# same kind of stdio toolbox, one without policies and one with 20 rules of
# which 5 match the tool called (the first of them decides, reading the
# call's arguments with size(), matches() and `in`). The runs alternate,
# ROUNDS times each, and the medians are compared. Then the decision alone,
# in process (tests/bench/policy_bench.cpp: the subject, the 20 rules'
# matches and the deciding expression), without the gateway around it.
#   scripts/bench.d/policies.sh BUILD [seconds] [rounds]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [seconds] [rounds]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd); secs=${2:-5}; rounds=${3:-3}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

common() {
  cat <<YAML
servers:
  - {name: tbs, transport: stdio, command: "$build/examples/toolbox-server"}
welcome: {strategy: none}
listen: {port: 0}
YAML
}
common > "$work/plain.yaml"
{
  common
  echo "policies:"
  # 15 rules whose tool globs miss tbs:echo.
  for i in $(seq 1 15); do
    cat <<YAML
  - name: other-$i
    match: { tools: ["other$i:*", "tbs:never_$i"] }
    deny: 'args.x == $i'
YAML
  done
  # 5 that match it (globs, a mode, a principal glob); the first decides.
  for i in $(seq 1 5); do
    cat <<YAML
  - name: echo-$i
    match: { tools: ["tbs:*", "tbs:ec*"], modes: [all], principals: ["*"] }
    allow: 'size(args.text) < 1000 && !args.text.matches("(?i)secret") && !("x" in args) && mode == "all"'
YAML
  done
} > "$work/policies.yaml"

start() {  # name -> pid and url in globals
  "$build/mcpgw" --config "$work/$1.yaml" 2> "$work/$1.err" &
  local pid=$! url=""
  for _ in $(seq 1 100); do url=$(grep -o 'http://[^ ]*' "$work/$1.err" | head -1 || true); [ -n "$url" ] && break; sleep 0.1; done
  for _ in $(seq 1 300); do curl -sf "${url%/mcp}/readyz" > /dev/null && break; sleep 0.1; done
  local sid
  sid=$(curl -s -D - -o /dev/null "$url" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}' | tr -d '\r' | awk 'tolower($1)=="mcp-session-id:"{print $2}')
  echo "$pid $url $sid"
}
# start runs in a subshell here: its pids reach cleanup from this shell.
read -r plain_pid plain_url plain_sid < <(start plain)
pids+=("$plain_pid")
read -r pol_pid pol_url pol_sid < <(start policies)
pids+=("$pol_pid")

body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tbs:echo","arguments":{"text":"hello"}}}'
# A refusal would not say "hello": the policies let the call through.
measure() {  # pid url sid -> us of CPU per call
  local t0 t1 out rps
  t0=$(awk '{print $14+$15}' "/proc/$1/stat")
  out=$(cd "$here" && MCP_SESSION=$3 MCP_BODY=$body MCP_EXPECT='"hello"' wrk -t2 -c8 -d${secs}s -s scripts/bench.d/call.lua "$2" | grep RESULT)
  t1=$(awk '{print $14+$15}' "/proc/$1/stat")
  rps=$(sed -E 's/.*rps=([0-9.]+).*/\1/' <<<"$out")
  grep -q 'errors=0 .*bad=0' <<<"$out" || { echo "calls failed: $out" >&2; exit 1; }
  awk -v t=$((t1 - t0)) -v r="$rps" -v s="$secs" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f\n", 1e6 * t / hz / (r * s) }'
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
plain=() pol=()
for r in $(seq 1 "$rounds"); do
  plain+=("$(measure "$plain_pid" "$plain_url" "$plain_sid")")
  pol+=("$(measure "$pol_pid" "$pol_url" "$pol_sid")")
done
p=$(printf '%s\n' "${plain[@]}" | median); q=$(printf '%s\n' "${pol[@]}" | median)
echo "no policies:            ${plain[*]} us CPU per call (median $p)"
echo "20 rules, 5 matching:   ${pol[*]} us CPU per call (median $q)"
awk -v p="$p" -v q="$q" 'BEGIN { printf "policies cost:          %+.2f us CPU per call (target <= 2)\n", q - p }'
[ -x "$build/tests/policy_bench" ] && "$build/tests/policy_bench"
