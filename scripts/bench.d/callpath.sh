#!/usr/bin/env bash
# scripts/bench's callpath section: what one proxied tools/call echo costs
# the gateway, against the same upstreams in one run, side by side:
#  - the gateway's CPU per call (user and system time from /proc/PID/stat
#    over a wrk run, divided by its calls; steady on a loaded machine), and
#    the upstream's, at c=1 and c=8;
#  - throughput, p50 and p99 through the gateway and directly (HTTP
#    upstreams), at c=1 and c=8, and their ratios;
#  - system calls per call, by name, in shorter runs: strace -c -f attached
#    to the gateway (as issue 12 measured; strace slows what it traces, and
#    so changes how often the gateway's threads contend), and, where perf
#    can count the kernel's syscall tracepoints, perf stat (which does not);
#  - --threads 1 against --threads N (default: the cores) at c=64, and at
#    c=1 (where the hand-offs between threads cost most);
#  - a peer proxy in front of the same HTTP upstreams: nginx with as many
#    workers as the gateway has threads, keep-alive upstream connections
#    and deploy/nginx.conf's proxy settings. It relays bytes without
#    reading them, so its CPU per call, system calls per call and ratio to
#    direct are what forwarding an HTTP exchange costs on this machine: the
#    floor under any proxy's figures, shown beside the gateway's.
# Upstreams: echo_upstream (tests/bench: Beast, one thread) and the example
# toolbox, each over HTTP and over stdio.
#   scripts/bench.d/callpath.sh BUILD [seconds]    # or BENCH_ONLY=callpath scripts/bench [seconds]
# Environment:
#   BASE_BUILD=DIR             also measure the gateway of build DIR (before a
#                              change), alternately with BUILD, same upstreams
#   CALLPATH_REPEAT=N          the whole set N times; the table shows medians
#   CALLPATH_STRACE_SECONDS=S  length of the strace runs (default 3)
#   CALLPATH_THREADS=N         the N of --threads N (default: nproc)
# Prints a line per measurement (CALLPATH ..., SYSCALLS ...), then the table
# (scripts/bench.d/callpath-table.awk, which also reads saved lines:
# `cat a b | awk -f scripts/bench.d/callpath-table.awk`).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILD [seconds]" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
secs=${2:-10}
strace_secs=${CALLPATH_STRACE_SECONDS:-3}
repeat=${CALLPATH_REPEAT:-1}
threads=${CALLPATH_THREADS:-$(nproc)}
command -v strace >/dev/null || apt-get install -y -qq strace >/dev/null
# shellcheck source=scripts/bench.d/common.sh
source "$here/scripts/bench.d/common.sh"
cpu() {  # pids -> their utime stime summed (ticks)
  local p; for p in "$@"; do cat "/proc/$p/stat"; done | awk '{ u += $14; s += $15 } END { print u, s }'
}

"$build/tests/echo_upstream" --http 0 > "$work/echo.out" &
pids+=($!)
declare -A up_pid=([echo-http]=$!)
declare -A direct=([echo-http]=$(url_in "$work/echo.out"))
"$build/examples/toolbox-server" --http 0 > "$work/toolbox.out" &
pids+=($!)
up_pid[toolbox-http]=$!
direct[toolbox-http]=$(url_in "$work/toolbox.out")
declare -A tool=([echo-http]=eh:echo [toolbox-http]=th:echo [echo-stdio]=es:echo [toolbox-stdio]=ts:echo)
upstreams=(echo-http toolbox-http echo-stdio toolbox-stdio)
cat > "$work/gw.yaml" <<YAML
servers:
  - {name: eh, transport: http, url: "${direct[echo-http]}"}
  - {name: th, transport: http, url: "${direct[toolbox-http]}"}
  - {name: es, transport: stdio, command: "$build/tests/echo_upstream"}
  - {name: ts, transport: stdio, command: "$build/examples/toolbox-server"}
welcome: {strategy: none}
listen: {port: 0}
YAML

declare -A gw_url gw_pid sid
start_gateway() {  # key build-dir threads
  "$2/mcpgw" --config "$work/gw.yaml" --threads "$3" 2> "$work/${1//\//-}.err" &
  pids+=($!)
  gw_pid[$1]=$!
  gw_url[$1]=$(url_in "$work/${1//\//-}.err")
  # Measured once every upstream is connected and listed.
  for _ in $(seq 1 300); do curl -sf "${gw_url[$1]%/mcp}/readyz" > /dev/null && break; sleep 0.1; done
  sid[$1]=$(session "${gw_url[$1]}")
}
for b in "${builds[@]}"; do
  start_gateway "$b" "${dir[$b]}" "$threads"
  start_gateway "$b/t1" "${dir[$b]}" 1
done
for u in echo-http toolbox-http; do sid[direct/$u]=$(session "${direct[$u]}"); done

# The peer: one nginx, a server per HTTP upstream. Its CPU is its master's
# and workers' (gw_pid holds them all).
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
peer=""
if [ -x "$nginx_bin" ]; then
  peer=nginx
  mkdir -p "$work/nginx"
  declare -A peer_port
  {
    echo "worker_processes $threads; daemon off; pid $work/nginx/nginx.pid; error_log $work/nginx/error.log warn;"
    echo "events { worker_connections 1024; }"
    echo "http { access_log off;"
    for t in client_body proxy fastcgi uwsgi scgi; do echo "  ${t}_temp_path $work/nginx/$t;"; done
    for u in echo-http toolbox-http; do
      peer_port[$u]=$(free_port)
      hostport=${direct[$u]#http://}
      echo "  upstream $u { server ${hostport%%/*}; keepalive 64; }"
      echo "  server { listen 127.0.0.1:${peer_port[$u]};"
      sed -n '/location \/ {/,/^    }/p' "$here/deploy/nginx.conf" | sed "s#http://mcpgw#http://$u#"
      echo "  }"
    done
    echo "}"
  } > "$work/nginx/nginx.conf"
  "$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
  pids+=($!)
  master=$!
  for u in echo-http toolbox-http; do
    gw_url[nginx/$u]=http://127.0.0.1:${peer_port[$u]}/${direct[$u]#http://*/}
    for _ in $(seq 1 100); do curl -s -o /dev/null "${gw_url[nginx/$u]}" && break; sleep 0.1; done
    sid[nginx/$u]=$(session "${gw_url[nginx/$u]}")
  done
  # Its workers are up once it answered.
  gw_pid[nginx]="$master $(pgrep -P "$master" | tr '\n' ' ')"
  for u in echo-http toolbox-http; do gw_pid[nginx/$u]=${gw_pid[nginx]}; done
else
  echo "nginx missing (scripts/setup installs it): no peer proxy measured" >&2
fi

upstream_pid() {  # gateway key, upstream -> the upstream's pid
  case $2 in
    *-http) echo "${up_pid[$2]}" ;;
    echo-stdio) pgrep -P "${gw_pid[$1]}" -x echo_upstream ;;
    toolbox-stdio) pgrep -P "${gw_pid[$1]}" -x toolbox-server ;;
  esac
}

# One wrk run with the CPU of the gateway (none when direct) and of the
# upstream over it: a CALLPATH line.
measure() {  # kind build upstream c gateway-key|direct threads|-
  local url sess body gw=${gw_pid[$5]:-} up out g0="0 0" g1="0 0" u0 u1
  if [ "$5" = direct ]; then url=${direct[$3]}; sess=${sid[direct/$3]}; body=$(call echo)
  elif [ "$1" = peer ]; then url=${gw_url[$5]}; sess=${sid[$5]}; body=$(call echo)
  else url=${gw_url[$5]}; sess=${sid[$5]}; body=$(call "${tool[$3]}"); fi
  up=$(upstream_pid "$5" "$3")
  # shellcheck disable=SC2086 # gw: the pids of the proxy's processes
  [ -n "$gw" ] && g0=$(cpu $gw)
  u0=$(cpu "$up")
  out=$(wrk_run "$url" "$sess" "$body" "$4" "$secs")
  # shellcheck disable=SC2086
  [ -n "$gw" ] && g1=$(cpu $gw)
  u1=$(cpu "$up")
  awk -v kind="$1" -v b="$2" -v u="$3" -v c="$4" -v t="$6" -v gw="$gw" -v hz="$hz" \
    -v n="$(field requests "$out")" -v rps="$(field rps "$out")" -v p50="$(field p50_us "$out")" \
    -v p99="$(field p99_us "$out")" -v err="$(field errors "$out")" -v bad="$(field bad "$out")" \
    -v g0="$g0" -v g1="$g1" -v u0="$u0" -v u1="$u1" 'BEGIN {
      split(g0, a); split(g1, z); split(u0, ua); split(u1, uz)
      us = 1e6 / hz / (n > 0 ? n : 1)
      printf "CALLPATH kind=%s build=%s upstream=%s c=%d threads=%s requests=%d rps=%.1f p50_us=%d p99_us=%d errors=%d bad=%d", kind, b, u, c, t, n, rps, p50, p99, err, bad
      if (gw != "") printf " gw_user_us=%.1f gw_sys_us=%.1f gw_cpu_us=%.1f", (z[1]-a[1])*us, (z[2]-a[2])*us, (z[1]+z[2]-a[1]-a[2])*us
      printf " up_cpu_us=%.1f\n", (uz[1]+uz[2]-ua[1]-ua[2])*us
    }'
}

# System calls of every thread of the gateway over a shorter wrk run, by
# name, divided by the calls: a SYSCALLS line. tool=strace: strace -c -f
# (slows the gateway, which changes how often its threads contend);
# tool=perf: the kernel's syscall tracepoints counted by perf stat, which
# leaves the timing alone (when perf and the tracepoints are there).
syscalls() {  # strace|perf build upstream c
  local pid=${gw_pid[$2]} sp out key=$2 body
  body=$(call "${tool[$3]}")
  if [ "$2" = nginx ]; then key=nginx/$3; body=$(call echo); fi
  if [ "$1" = strace ]; then
    strace -c -f -q -p "$pid" -o "$work/sc.txt" 2> /dev/null &
    sp=$!
    for _ in $(seq 1 100); do  # attached = every thread has a tracer
      grep -q 'TracerPid:[[:space:]]*0$' /proc/"$pid"/task/*/status || break
      sleep 0.05
    done
  else
    rm -f "$work/sc.txt"
    perf stat -x, -e "$perf_events" -p "$(tr ' ' ',' <<<"${pid% }")" -o "$work/sc.txt" 2> /dev/null &
    sp=$!
    for _ in $(seq 1 100); do [ -s "$work/sc.txt" ] && break; sleep 0.05; done  # its header: counting
  fi
  out=$(wrk_run "${gw_url[$key]}" "${sid[$key]}" "$body" "$4" "$strace_secs")
  kill -INT "$sp"
  wait "$sp" || true
  # "name count" lines, the total first, then one line of counts per call.
  if [ "$1" = strace ]; then
    awk '/^-+ / { part++; next } part == 1 && NF >= 5 { print $NF, $4; total += $4 } END { print "total", total }' "$work/sc.txt"
  else
    awk -F, '$3 ~ /^raw_syscalls/ { total = $1 } $3 ~ /^syscalls:/ { sub(/.*sys_enter_/, "", $3); print $3, $1; named += $1 }
      END { print "total", total; if (total > named) print "other", total - named }' "$work/sc.txt"
  fi | sort -k2 -g -r | awk -v t="$1" -v b="$2" -v u="$3" -v c="$4" -v n="$(field requests "$out")" '
    $2 > 0 { line = line sprintf(" %s=%.2f", $1, $2 / n) }
    END { printf "SYSCALLS tool=%s build=%s upstream=%s c=%d requests=%d%s\n", t, b, u, c, n, line }'
}
syscall_tools=(strace)
perf_events=raw_syscalls:sys_enter
for s in futex epoll_wait epoll_pwait epoll_ctl timerfd_settime sendmsg sendto recvfrom recvmsg read write writev readv accept4 close; do
  perf_events+=,syscalls:sys_enter_$s
done
if command -v perf > /dev/null && perf stat -e "$perf_events" -o /dev/null true 2> /dev/null; then syscall_tools=(perf strace); fi

ordered() {  # round -> the builds, in turn reversed, so neither always goes first
  if (($1 % 2 == 0)); then printf '%s\n' "${builds[@]}" | tac; else printf '%s\n' "${builds[@]}"; fi
}

# Warm-up (connections, caches, the first slow seconds), not reported.
for b in "${builds[@]}"; do
  for u in "${upstreams[@]}"; do wrk_run "${gw_url[$b]}" "${sid[$b]}" "$(call "${tool[$u]}")" 8 1 > /dev/null; done
  wrk_run "${gw_url[$b/t1]}" "${sid[$b/t1]}" "$(call eh:echo)" 8 1 > /dev/null
done
for u in echo-http toolbox-http; do
  wrk_run "${direct[$u]}" "${sid[direct/$u]}" "$(call echo)" 8 1 > /dev/null
  if [ -n "$peer" ]; then wrk_run "${gw_url[nginx/$u]}" "${sid[nginx/$u]}" "$(call echo)" 8 1 > /dev/null; fi
done

lines=$work/lines
for round in $(seq 1 "$repeat"); do
  for u in "${upstreams[@]}"; do
    for c in 1 8; do
      if [[ $u == *-http ]]; then
        measure direct direct "$u" "$c" direct - | tee -a "$lines"
        if [ -n "$peer" ]; then measure peer nginx "$u" "$c" "nginx/$u" "$threads" | tee -a "$lines"; fi
      fi
      for b in $(ordered "$round"); do measure gateway "$b" "$u" "$c" "$b" "$threads" | tee -a "$lines"; done
    done
  done
  for u in "${upstreams[@]}"; do
    for c in 1 8; do
      for t in "${syscall_tools[@]}"; do
        for b in $(ordered "$round"); do syscalls "$t" "$b" "$u" "$c" | tee -a "$lines"; done
        # strace -p follows only the threads there are: nginx's workers are processes.
        if [ -n "$peer" ] && [ "$t" = perf ] && [[ $u == *-http ]]; then syscalls perf nginx "$u" "$c" | tee -a "$lines"; fi
      done
    done
  done
  for c in 1 64; do
    for b in $(ordered "$round"); do
      measure threads "$b" echo-http "$c" "$b/t1" 1 | tee -a "$lines"
      measure threads "$b" echo-http "$c" "$b" "$threads" | tee -a "$lines"
    done
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $secs s runs (strace $strace_secs s), $repeat round(s)"
awk -f "$here/scripts/bench.d/callpath-table.awk" "$lines"
