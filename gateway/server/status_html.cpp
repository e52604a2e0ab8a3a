// The status page: one HTML document with its style and script inline,
// compiled into the binary (no build step, nothing fetched from elsewhere:
// the Content-Security-Policy it is served with allows only this origin).
// It polls /status.json every two seconds and /status/catalog.json when the
// catalog's generation changes; every value from the gateway is put in the
// page as text (textContent), never as markup, since tool names and
// descriptions come from upstreams.
#include "server/status.hpp"

namespace mcpgw::server {
namespace {

constexpr std::string_view kPage = R"PAGE(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcpgw status</title>
<style>
:root { --bg:#f6f7f9; --card:#fff; --ink:#1d2330; --dim:#69707d; --line:#e2e5ea; --ok:#1f8a4c; --bad:#c62828; --warn:#b26a00; --accent:#2f5fd0; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--ink); }
header { display:flex; gap:16px; align-items:baseline; padding:12px 20px; background:#1d2330; color:#fff; }
header h1 { font-size:18px; margin:0; }
header .dim { color:#aab2c0; }
#live { margin-left:auto; font-size:13px; }
#live.down { color:#ff8a80; font-weight:600; }
main { display:grid; grid-template-columns:repeat(auto-fit, minmax(440px, 1fr)); gap:16px; padding:16px 20px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; min-width:0; }
section.wide { grid-column:1 / -1; }
h2 { font-size:15px; margin:0 0 8px; }
table { width:100%; border-collapse:collapse; font-size:13px; }
th, td { text-align:left; padding:4px 6px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--dim); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
td.nowrap { white-space:nowrap; }
.dot { display:inline-block; width:9px; height:9px; border-radius:50%; margin-right:6px; }
.up { background:var(--ok); } .down { background:var(--bad); }
.state-open, .outcome-error, .outcome-timeout, .outcome-refused { color:var(--bad); font-weight:600; }
.state-half_open, .outcome-cancelled { color:var(--warn); font-weight:600; }
.dim { color:var(--dim); }
.err { color:var(--bad); }
.mono { font-family:ui-monospace, SFMono-Regular, Menlo, monospace; font-size:12px; word-break:break-all; }
.charts { display:grid; grid-template-columns:repeat(auto-fill, minmax(260px, 1fr)); gap:12px; }
.chart { border:1px solid var(--line); border-radius:6px; padding:6px 8px; }
.chart h3 { font-size:13px; margin:0 0 2px; }
.chart svg { width:100%; height:54px; display:block; }
.legend { font-size:12px; color:var(--dim); }
.toolbar { display:flex; gap:8px; align-items:center; flex-wrap:wrap; margin-bottom:8px; }
input[type=search], select, input[type=password] { font:inherit; padding:4px 8px; border:1px solid var(--line); border-radius:6px; }
input[type=search] { min-width:260px; }
.pill { display:inline-block; padding:0 6px; margin:0 3px 2px 0; border-radius:9px; background:#eef1f6; font-size:12px; }
#auth { display:none; padding:16px 20px; }
#auth.show { display:block; }
button { font:inherit; padding:4px 12px; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; }
</style>
</head>
<body>
<header>
  <h1>mcpgw</h1><span class="dim" id="version"></span><span class="dim" id="uptime"></span>
  <span id="live">connecting…</span>
</header>
<div id="auth">
  <form id="auth-form">
    <p>This gateway asks for a bearer token (any token its MCP endpoint accepts) to show its status.</p>
    <input type="password" id="token" autocomplete="off" placeholder="token" aria-label="token">
    <button type="submit">Show status</button> <span class="err" id="auth-error"></span>
  </form>
</div>
<main id="main">
  <section class="wide"><h2>Upstreams</h2>
    <table><thead><tr><th>server</th><th>state</th><th>protocol</th><th class="num">tools</th><th>breaker</th><th class="num">queued</th><th>last error</th></tr></thead>
    <tbody id="upstreams"></tbody></table>
    <p class="dim" id="plugins"></p>
  </section>
  <section class="wide"><h2>Calls, last 15 minutes</h2>
    <div class="legend">per origin: calls per second (bars, failed in red), p50 and p99 latency (lines), in 10-second steps</div>
    <div class="charts" id="charts"></div>
  </section>
  <section><h2>Sessions</h2>
    <p id="session-summary"></p>
    <table><thead><tr><th>principal</th><th class="num">sessions</th></tr></thead><tbody id="principals"></tbody></table>
  </section>
  <section class="wide"><h2>Tool integrity</h2>
    <p id="integrity-summary"></p>
    <table><thead><tr><th>tool</th><th>server</th><th>state</th><th>what changed</th><th>served</th></tr></thead>
    <tbody id="integrity"></tbody></table>
  </section>
  <section><h2>Recent refusals and failed calls</h2>
    <table><thead><tr><th>when</th><th>what</th><th>principal</th><th>tool / server</th><th>why</th></tr></thead>
    <tbody id="recent"></tbody></table>
  </section>
  <section class="wide"><h2>Catalog</h2>
    <div class="toolbar">
      <label>mode <select id="mode"></select></label>
      <input type="search" id="filter" placeholder="filter by name, server, slice or description" aria-label="filter tools">
      <span class="dim" id="shown"></span>
    </div>
    <table><thead><tr><th>tool</th><th>origin</th><th>slices</th><th>description</th></tr></thead><tbody id="tools"></tbody></table>
  </section>
</main>
<script>
"use strict";
const ROWS = 200;
let token = sessionStorage.getItem("mcpgw-token") || "";
let status = null, catalog = null, generation = -1, failures = 0;

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) tr.appendChild(c instanceof Node ? c : el("td", c));
  return tr;
}
function td(child, cls) { const t = el("td", undefined, cls); if (child instanceof Node) t.appendChild(child); else t.textContent = child ?? ""; return t; }
function fill(id, rows) { const body = document.getElementById(id); body.replaceChildren(...rows); }
function ago(ms) {
  const s = Math.max(0, Math.round((status.now_ms - ms) / 1000));
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  return Math.round(s / 3600) + " h ago";
}
function duration(s) { return s < 3600 ? Math.round(s / 60) + " min" : (s / 3600).toFixed(1) + " h"; }

async function get(path) {
  const headers = token ? { Authorization: "Bearer " + token } : {};
  const r = await fetch(path, { headers, cache: "no-store" });
  if (r.status === 401 || r.status === 403) throw Object.assign(new Error("unauthorized"), { auth: true, status: r.status });
  if (!r.ok) throw new Error("HTTP " + r.status);
  return r.json();
}

function renderUpstreams() {
  fill("upstreams", status.upstreams.map((u) => {
    const state = td(null);
    state.appendChild(el("span", undefined, "dot " + (u.ready ? "up" : "down")));
    state.appendChild(document.createTextNode(u.ready ? "up" : u.status));
    const last = td(null);
    if (u.last_error) { last.appendChild(el("span", u.last_error.what, "err")); last.appendChild(el("div", ago(u.last_error.unix_ms), "dim")); }
    const name = td(null); name.appendChild(el("strong", u.name)); name.appendChild(el("div", u.transport + " " + u.target, "dim mono"));
    state.classList.add("nowrap");
    return row([name, state, td(u.protocol || "–", "nowrap"), td(u.tools, "num"), td(u.circuit.replace("_", " "), "state-" + u.circuit), td(u.waiting, "num"), last]);
  }));
  const p = status.plugins.map((x) => x.name + " " + x.version + " (" + x.tools + " tools, " + x.status + ")");
  document.getElementById("plugins").textContent = (p.length ? "plugins: " + p.join(", ") : "") +
    (status.plugin_errors.length ? "  plugin errors: " + status.plugin_errors.join("; ") : "");
}

function sparkline(series) {
  const ns = "http://www.w3.org/2000/svg", w = 270, h = 54, n = series.calls.length, step = w / n;
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  svg.setAttribute("preserveAspectRatio", "none");
  const maxCalls = Math.max(1, ...series.calls);
  const maxMs = Math.max(1, ...series.p99_ms);
  series.calls.forEach((c, i) => {
    if (!c) return;
    const bh = (c / maxCalls) * (h - 2), eh = (series.errors[i] / maxCalls) * (h - 2);
    const bar = document.createElementNS(ns, "rect");
    bar.setAttribute("x", i * step); bar.setAttribute("y", h - bh); bar.setAttribute("width", Math.max(1, step - 1)); bar.setAttribute("height", bh);
    bar.setAttribute("fill", "#c9d6f2"); svg.appendChild(bar);
    if (eh > 0) {
      const e = document.createElementNS(ns, "rect");
      e.setAttribute("x", i * step); e.setAttribute("y", h - eh); e.setAttribute("width", Math.max(1, step - 1)); e.setAttribute("height", eh);
      e.setAttribute("fill", "#e57373"); svg.appendChild(e);
    }
  });
  for (const [key, color] of [["p50_ms", "#2f5fd0"], ["p99_ms", "#b26a00"]]) {
    const pts = series[key].map((v, i) => v ? (i * step + step / 2).toFixed(1) + "," + (h - 1 - (v / maxMs) * (h - 4)).toFixed(1) : null).filter(Boolean);
    if (!pts.length) continue;
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.join(" ")); line.setAttribute("fill", "none"); line.setAttribute("stroke", color); line.setAttribute("stroke-width", "1.5");
    svg.appendChild(line);
  }
  return svg;
}

function renderCharts() {
  const bucket = status.series.bucket_s;
  const cards = status.series.origins.map((s) => {
    const card = el("div", undefined, "chart");
    const last = s.calls.length - 2;  // the last whole bucket
    const rate = last >= 0 ? (s.calls[last] / bucket).toFixed(1) : "0";
    const calls = s.calls.reduce((a, b) => a + b, 0), errors = s.errors.reduce((a, b) => a + b, 0);
    card.appendChild(el("h3", s.origin));
    card.appendChild(sparkline(s));
    card.appendChild(el("div", rate + " calls/s now · " + calls + " calls, " + errors + " failed · p50 " +
      (s.p50_ms[last] || 0) + " ms, p99 " + (s.p99_ms[last] || 0) + " ms", "legend"));
    card.dataset.origin = s.origin;
    return card;
  });
  const box = document.getElementById("charts");
  box.replaceChildren(...cards);
  if (!cards.length) box.appendChild(el("p", "no calls in the last 15 minutes", "dim"));
}

function renderSessions() {
  const s = status.sessions;
  document.getElementById("session-summary").textContent = s.total + " sessions · " + s.open_streams +
    " open streams · " + s.suspended_calls + " calls waiting for their client";
  const rows = s.by_principal.map((p) => row([td(p.principal || "(anonymous)"), td(p.sessions, "num")]));
  if (s.other_principals) rows.push(row([td(s.other_principals + " more principals", "dim"), td(s.other_sessions, "num")]));
  fill("principals", rows);
}

function renderRecent() {
  const rows = status.recent.slice(0, 50).map((r) => {
    const what = td(null); what.appendChild(el("span", r.event === r.outcome ? r.event : r.event + " " + r.outcome, "outcome-" + r.outcome));
    // Where the call went, when the exposed name does not say it already.
    const went = r.server ? r.server + (r.upstream_tool ? " / " + r.upstream_tool : "") : "";
    const plain = r.tool && r.server && r.upstream_tool && r.tool.endsWith(r.upstream_tool) && r.tool.startsWith(r.server);
    const target = [r.tool, went && !plain ? "→ " + went : ""].filter(Boolean).join(" ");
    const why = td(null); why.appendChild(el("span", r.reason || (r.ms !== undefined ? r.ms.toFixed(1) + " ms" : "")));
    if (r.trace_id) why.appendChild(el("div", "trace " + r.trace_id, "dim mono"));
    return row([td(ago(r.unix_ms), "dim"), what, td(r.principal || "(anonymous)"), td(target), why]);
  });
  fill("recent", rows.length ? rows : [row([td("none", "dim")])]);
}

// What waits for `mcpgw pins approve` (integrity.pins).
function renderIntegrity() {
  const i = status.integrity;
  document.getElementById("integrity-summary").textContent = "pins: " + i.pins + (i.pins === "off" ? "" :
    " · " + i.pinned + " tools pinned · " + i.waiting.length + " waiting for approval" + (i.store_error ? " · store: " + i.store_error : ""));
  const rows = i.waiting.map((w) => {
    const what = [w.changes.join(", "), w.findings.length ? "hidden instructions: " + w.findings.join("; ") : ""].filter(Boolean).join(" · ");
    return row([td(w.tool, "mono"), td(w.server), td(w.state), td(what), td(w.withheld ? "withheld (mcpgw pins approve " + w.tool + ")" : "served (warn)")]);
  });
  fill("integrity", rows.length ? rows : [row([td("nothing waits", "dim")])]);
}

let modesShown = "";
function renderModes() {
  const select = document.getElementById("mode");
  const key = JSON.stringify(status.catalog.modes);
  if (key === modesShown) return;
  modesShown = key;
  const chosen = select.value || "all";
  select.replaceChildren(...status.catalog.modes.map((m) => {
    const o = el("option", m.name + " (" + m.tools + (m.discovery === "search" ? ", search" : "") + ")");
    o.value = m.name; return o;
  }));
  select.value = status.catalog.modes.some((m) => m.name === chosen) ? chosen : "all";
}

function renderTools() {
  if (!catalog) return;
  const mode = catalog.modes.indexOf(document.getElementById("mode").value);
  const words = document.getElementById("filter").value.toLowerCase().split(/\s+/).filter(Boolean);
  const hits = [];
  let total = 0;
  for (const t of catalog.tools) {
    if (mode >= 0 && !t.modes.includes(mode)) continue;
    total++;
    const hay = (t.name + " " + t.origin + " " + t.slices.join(" ") + " " + (t.description || "")).toLowerCase();
    if (words.every((w) => hay.includes(w))) hits.push(t);
  }
  fill("tools", hits.slice(0, ROWS).map((t) => {
    const slices = td(null);
    for (const s of t.slices) slices.appendChild(el("span", s, "pill"));
    const name = td(null); name.appendChild(el("span", t.name, "mono"));
    if (t.welcome) name.appendChild(el("span", "welcome", "pill"));
    return row([name, td(t.origin + (t.composite ? " (plugin)" : "")), slices, td(t.description || "", "dim")]);
  }));
  document.getElementById("shown").textContent = "showing " + Math.min(ROWS, hits.length) + " of " + hits.length +
    " matching, " + total + " in this mode";
}

async function refresh() {
  try {
    status = await get("/status.json");
    failures = 0;
    document.getElementById("auth").classList.remove("show");
    document.getElementById("main").style.display = "";
    const live = document.getElementById("live");
    live.textContent = "live · updated " + new Date(status.now_ms).toLocaleTimeString();
    live.className = "";
    document.getElementById("version").textContent = "v" + status.version;
    document.getElementById("uptime").textContent = "up " + duration((status.now_ms - status.started_ms) / 1000);
    renderUpstreams(); renderCharts(); renderSessions(); renderRecent(); renderIntegrity(); renderModes();
    // The catalog view is drawn again only when the catalog, the mode or
    // the filter changed: thousands of tools are not redrawn every refresh.
    if (status.catalog.generation !== generation) {
      catalog = await get("/status/catalog.json");
      generation = catalog.generation;
      renderTools();
    }
  } catch (e) {
    if (e.auth) {
      document.getElementById("main").style.display = "none";
      document.getElementById("auth").classList.add("show");
      document.getElementById("auth-error").textContent = token ? "that token was refused (HTTP " + e.status + ")" : "";
      document.getElementById("live").textContent = "token needed";
      return;  // resumes when a token is given
    }
    failures++;
    const live = document.getElementById("live");
    live.textContent = "not reachable (" + e.message + "), retrying";
    live.className = "down";
  }
  setTimeout(refresh, failures ? Math.min(10000, 2000 * failures) : 2000);
}

document.getElementById("filter").addEventListener("input", renderTools);
document.getElementById("mode").addEventListener("change", renderTools);
document.getElementById("auth-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = document.getElementById("token").value.trim();
  sessionStorage.setItem("mcpgw-token", token);
  refresh();
});
refresh();
</script>
</body>
</html>
)PAGE";

}  // namespace

std::string_view status_html() { return kPage; }

}  // namespace mcpgw::server
