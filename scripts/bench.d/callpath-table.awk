# The readable table of scripts/bench.d/callpath.sh, from its CALLPATH and
# SYSCALLS lines (any other line is skipped, so a saved bench log will do).
# Lines of the same measurement (CALLPATH_REPEAT rounds, or the logs of
# several runs) are shown by their median, each figure on its own.
#   awk -f scripts/bench.d/callpath-table.awk LOG...

function kv(    i, p) {  # the key=value fields of the current line into f[]
  delete f
  for (i = 2; i <= NF; i++) { p = index($i, "="); f[substr($i, 1, p - 1)] = substr($i, p + 1) }
}
function seen(list, x) {  # appends x to the space-separated list unless there
  return index(" " list " ", " " x " ") ? list : (list == "" ? x : list " " x)
}
function median(k,    n, i, j, t, v) {  # of the values vals[k, 1..count[k]]
  n = count[k]
  if (n == 0) return ""
  for (i = 1; i <= n; i++) v[i] = vals[k, i] + 0  # numbers, not strings, when compared
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function add(k, x) { vals[k, ++count[k]] = x + 0 }
function m(row, name) { return median(row SUBSEP name) }
function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "-" : sprintf("%.2f", a / b) }

$1 == "CALLPATH" {
  kv()
  row = f["kind"] SUBSEP f["build"] SUBSEP f["upstream"] SUBSEP f["c"] SUBSEP f["threads"]
  if (f["kind"] == "peer") { peers = seen(peers, f["build"]); pthreads[f["build"]] = f["threads"] }
  else if (f["kind"] != "direct") builds = seen(builds, f["build"])
  if (f["kind"] == "gateway") gwthreads[f["build"]] = f["threads"]
  if (f["kind"] != "threads") { upstreams = seen(upstreams, f["upstream"]); conc = seen(conc, f["c"]) }
  else { tcounts = seen(tcounts, f["threads"]); tconc = seen(tconc, f["c"]) }
  for (x in f) if (x !~ /^(kind|build|upstream|c|threads)$/) add(row SUBSEP x, f[x])
  wrong[row] += f["errors"] + f["bad"]
  next
}
$1 == "SYSCALLS" {
  kv()
  if (!("tool" in f)) f["tool"] = "strace"
  tools = seen(tools, f["tool"])
  row = f["tool"] SUBSEP f["build"] SUBSEP f["upstream"] SUBSEP f["c"]
  rounds[row]++
  for (x in f) if (x !~ /^(tool|build|upstream|c|requests)$/) {
    if (x != "total") names[row] = seen(names[row], x)
    # A name missing from a round counted 0 there: pad before adding.
    while (count[row SUBSEP x] < rounds[row] - 1) add(row SUBSEP x, 0)
    add(row SUBSEP x, f[x])
  }
}

function callrow(kind, b, u, c, t, dk,    r, gw, note) {
  r = kind SUBSEP b SUBSEP u SUBSEP c SUBSEP t
  if (!((r SUBSEP "rps") in count)) return
  gw = m(r, "gw_cpu_us") == "" ? "-" : sprintf("%.1f (%.1f+%.1f)", m(r, "gw_cpu_us"), m(r, "gw_user_us"), m(r, "gw_sys_us"))
  note = wrong[r] ? sprintf("  %d errors or wrong answers!", wrong[r]) : ""
  printf "%-14s %3s %-8s %9.0f %7d %7d %6.1f  %-22s %8.1f %9s%s\n", u, c, (kind == "threads" || kind == "peer" ? b " t" t : b),
    m(r, "rps"), m(r, "p50_us"), m(r, "p99_us"), m(r, "p99_us") / (m(r, "p50_us") ? m(r, "p50_us") : 1), gw,
    m(r, "up_cpu_us"), dk == "" ? "-" : ratio(m(r, "rps"), m(dk, "rps")), note
}

function syscallrow(tool, b, u, c,    r, k, n, i, j, t, med, out) {
  r = tool SUBSEP b SUBSEP u SUBSEP c
  if (!rounds[r]) return
  n = split(names[r], k, " ")
  for (i = 1; i <= n; i++) {  # pad the rounds that lacked a name, then order by count
    while (count[r SUBSEP k[i]] < rounds[r]) add(r SUBSEP k[i], 0)
    med[k[i]] = m(r, k[i]) + 0
  }
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && med[k[j - 1]] < med[k[j]]; j--) { t = k[j]; k[j] = k[j - 1]; k[j - 1] = t }
  out = ""
  for (i = 1; i <= n && i <= 12; i++)
    if (med[k[i]] >= 0.01) out = out sprintf("%s%s %.2f", out == "" ? "" : ", ", k[i], med[k[i]])
  printf "%-14s %3s %-8s %6.2f  %s\n", u, c, b, m(r, "total"), out
}

END {
  if (index(" " builds " ", " base ")) {  # the build compared against goes first
    sub(/(^| )base( |$)/, " ", builds); builds = "base " builds
  }
  np = split(peers, P, " "); nb = split(builds, B, " "); nu = split(upstreams, U, " "); nc = split(conc, C, " "); nt = split(tcounts, T, " "); ntc = split(tconc, TC, " ")
  print ""
  print "== callpath: one proxied tools/call echo (medians of the rounds)"
  print "gateway CPU per call = user+system of the mcpgw process over the run (/proc/PID/stat) / calls;"
  print "upstream CPU the same for the upstream process; rps/p50/p99 from wrk; vs direct = rps / direct rps"
  if (np) print "nginx tN: nginx with N workers in front of the same upstream (its CPU in the gw column: master and workers)"
  printf "%-14s %3s %-8s %9s %7s %7s %6s  %-22s %8s %9s\n", "upstream", "c", "via", "rps", "p50 us", "p99 us",
    "p99/50", "gw CPU us (user+sys)", "up CPU", "vs direct"
  for (i = 1; i <= nu; i++)
    for (j = 1; j <= nc; j++) {
      dk = "direct" SUBSEP "direct" SUBSEP U[i] SUBSEP C[j] SUBSEP "-"
      callrow("direct", "direct", U[i], C[j], "-", "")
      if (!((dk SUBSEP "rps") in count)) dk = ""
      for (p = 1; p <= np; p++) callrow("peer", P[p], U[i], C[j], pthreads[P[p]], dk)
      for (b = 1; b <= nb; b++) callrow("gateway", B[b], U[i], C[j], gwthreads[B[b]], dk)
    }
  ntools = split(tools, TL, " ")
  for (x = 1; x <= ntools; x++) {
    print ""
    if (TL[x] == "perf") print "system calls per proxied call, perf stat on the syscall tracepoints (timing undisturbed; each figure the median of its own):"
    else print "system calls per proxied call, strace -c -f attached to the gateway (slows it; each figure the median of its own):"
    printf "%-14s %3s %-8s %6s  %s\n", "upstream", "c", "via", "total", "by name"
    for (i = 1; i <= nu; i++)
      for (j = 1; j <= nc; j++)
        for (b = 1; b <= np + nb; b++) syscallrow(TL[x], b <= np ? P[b] : B[b - np], U[i], C[j])
  }
  if (nt) {
    print ""
    print "--threads 1 against --threads N, echo-http:"
    printf "%-14s %3s %-8s %9s %7s %7s %6s  %-22s %8s %9s\n", "upstream", "c", "via", "rps", "p50 us", "p99 us",
      "p99/50", "gw CPU us (user+sys)", "up CPU", "vs t1"
    for (j = 1; j <= ntc; j++)
      for (b = 1; b <= nb; b++)
        for (x = 1; x <= nt; x++)
          callrow("threads", B[b], "echo-http", TC[j], T[x], "threads" SUBSEP B[b] SUBSEP "echo-http" SUBSEP TC[j] SUBSEP 1)
  }
  if (np) {
    print ""
    printf "%s against %s in front of the same upstream, ratios of the medians (CPU: below 1 is better; rps: above 1):\n", B[nb], P[1]
    printf "%-14s %3s %8s %8s %8s   %s\n", "upstream", "c", "CPU", "syscalls", "rps", "(p99/p50: mcpgw, nginx)"
    for (i = 1; i <= nu; i++)
      for (j = 1; j <= nc; j++) {
        a = "peer" SUBSEP P[1] SUBSEP U[i] SUBSEP C[j] SUBSEP pthreads[P[1]]
        z = "gateway" SUBSEP B[nb] SUBSEP U[i] SUBSEP C[j] SUBSEP gwthreads[B[nb]]
        if (!((a SUBSEP "rps") in count)) continue
        printf "%-14s %3s %8s %8s %8s   %s, %s\n", U[i], C[j], ratio(m(z, "gw_cpu_us"), m(a, "gw_cpu_us")),
          ratio(m(TL[1] SUBSEP B[nb] SUBSEP U[i] SUBSEP C[j], "total"), m(TL[1] SUBSEP P[1] SUBSEP U[i] SUBSEP C[j], "total")),
          ratio(m(z, "rps"), m(a, "rps")), ratio(m(z, "p99_us"), m(z, "p50_us")), ratio(m(a, "p99_us"), m(a, "p50_us"))
      }
  }
  if (nb > 1) {
    print ""
    printf "%s against %s, ratios of the medians (CPU, syscalls, p50, p99: below 1 is better; rps: above 1):\n", B[nb], B[1]
    printf "%-14s %3s %8s %8s %8s %8s %8s   (syscalls: %s)\n", "upstream", "c", "gw CPU", "syscalls", "rps", "p50", "p99", TL[1]
    for (i = 1; i <= nu; i++)
      for (j = 1; j <= nc; j++) {
        a = "gateway" SUBSEP B[1] SUBSEP U[i] SUBSEP C[j] SUBSEP gwthreads[B[1]]
        z = "gateway" SUBSEP B[nb] SUBSEP U[i] SUBSEP C[j] SUBSEP gwthreads[B[nb]]
        printf "%-14s %3s %8s %8s %8s %8s %8s\n", U[i], C[j], ratio(m(z, "gw_cpu_us"), m(a, "gw_cpu_us")),
          ratio(m(TL[1] SUBSEP B[nb] SUBSEP U[i] SUBSEP C[j], "total"), m(TL[1] SUBSEP B[1] SUBSEP U[i] SUBSEP C[j], "total")),
          ratio(m(z, "rps"), m(a, "rps")), ratio(m(z, "p50_us"), m(a, "p50_us")), ratio(m(z, "p99_us"), m(a, "p99_us"))
      }
  }
}
