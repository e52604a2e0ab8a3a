// Reading the Prometheus text format of /metrics in tests.

/** Samples of a /metrics text: [{name, labels, value}]. */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/);
    if (!m) continue;
    const labels = {};
    for (const l of (m[2] || '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples of `name` whose labels include `want`. */
export function sample(metrics, name, want = {}) {
  const hits = metrics.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
  return hits.reduce((a, s) => a + s.value, 0);
}
