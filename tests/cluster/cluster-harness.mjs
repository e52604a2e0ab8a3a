// A cluster on loopback for the tests, scripts/cluster and scripts/bench:
// a real redis-server and nginx (Debian's packages) started as children of
// this process on free ports, with their files in a temp dir, and mcpgw
// replicas. Nothing is assumed of system services.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MCPGW, Proc, closedPort, httpGet, pollUntil, requireBinaries, writeConfig } from '../integration/harness.mjs';

export const REDIS_SERVER = process.env.MCPGW_REDIS_SERVER || '/usr/bin/redis-server';
export const NGINX = process.env.MCPGW_NGINX || '/usr/sbin/nginx';

/** Fails (never skips) when redis-server or nginx is missing. */
export function requireClusterTools() {
  const missing = [REDIS_SERVER, NGINX].filter((b) => !existsSync(b));
  if (missing.length) throw new Error(`missing ${missing.join(', ')} (scripts/setup installs redis-server and nginx)`);
}

/**
 * Starts redis-server on a free loopback port with its data in `dir`
 * (append-only file fsynced on every write: what Redis acknowledged survives
 * its restart). `port` reuses a port (a restart). Returns {proc, port, url}.
 */
export async function startRedis(dir, { port, label = 'redis' } = {}) {
  const p = port || (await closedPort());
  const data = path.join(dir, 'redis');
  mkdirSync(data, { recursive: true });
  const proc = new Proc(label, REDIS_SERVER, [
    '--port', String(p), '--bind', '127.0.0.1', '--dir', data, '--save', '', '--appendonly', 'yes',
    '--appendfsync', 'always', '--daemonize', 'no', '--protected-mode', 'yes', '--loglevel', 'notice',
  ]);
  await proc.waitForLine('stdout', /Ready to accept connections/);
  return { proc, port: p, url: `redis://127.0.0.1:${p}/0` };
}

/** The nginx.conf of deploy/nginx.conf's shape for `backends` (host:port), serving on `port`, files in `dir`. */
export function nginxConfig(dir, port, backends) {
  const tmp = (n) => path.join(dir, n);
  return `worker_processes 1;
daemon off;
pid ${tmp('nginx.pid')};
error_log ${tmp('nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${tmp('body')};
  proxy_temp_path ${tmp('proxy')};
  fastcgi_temp_path ${tmp('fastcgi')};
  uwsgi_temp_path ${tmp('uwsgi')};
  scgi_temp_path ${tmp('scgi')};
  upstream mcpgw {
${backends.map((b) => `    server ${b} max_fails=1 fail_timeout=10s;`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mcpgw;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_cache off;
      proxy_read_timeout 1h;
      proxy_send_timeout 1h;
      proxy_next_upstream error timeout;
    }
  }
}
`;
}

/** Starts nginx in front of `backends` on a free port. Returns {proc, port, base, url (MCP endpoint)}. */
export async function startNginx(dir, backends, { label = 'nginx', path: mcpPath = '/mcp' } = {}) {
  const port = await closedPort();
  const ndir = path.join(dir, `${label}-${port}`);
  mkdirSync(ndir, { recursive: true });
  const conf = path.join(ndir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(ndir, port, backends));
  const proc = new Proc(label, NGINX, ['-p', ndir, '-c', conf, '-e', path.join(ndir, 'nginx-error.log')]);
  const base = `http://127.0.0.1:${port}`;
  await pollUntil(
    async () => {
      if (!proc.alive) throw new Error(`nginx exited: ${proc.diagnostics()}`);
      try {
        await httpGet(`${base}/healthz`, { timeoutMs: 1000 });
        return true;
      } catch {
        return false;
      }
    },
    { timeoutMs: 10000, what: 'nginx to answer' },
  );
  return { proc, port, base, url: `${base}${mcpPath}` };
}

/**
 * Starts one mcpgw replica with `config` (its listen port forced to 0);
 * resolves once it listens and /readyz is 200 (it has read Redis).
 * Returns {proc, url, base, port, hostPort}.
 */
export async function startReplica(dir, config, { label = 'mcpgw', logLevel = 'info', env } = {}) {
  requireBinaries(MCPGW);
  const cfg = { ...config, listen: { host: '127.0.0.1', path: '/mcp', ...(config.listen || {}), port: 0 } };
  const file = writeConfig(dir, cfg, `${label}.yaml`);
  const proc = new Proc(label, MCPGW, ['--config', file, '--log-level', logLevel], { env });
  const m = await proc.waitForLine('stderr', /listening on (https?:\/\/[^\s"'\],}]+)/);
  const u = new URL(m[1]);
  const base = `${u.protocol}//${u.host}`;
  await pollUntil(async () => (await httpGet(`${base}/readyz`)).status === 200, { timeoutMs: 15000, what: `${label} /readyz 200` });
  return { proc, url: m[1], base, port: Number(u.port), hostPort: u.host, configPath: file };
}

/** Messages of `method` a replica received so far (its /metrics). */
export async function messagesOf(replica, method) {
  const { text } = await httpGet(`${replica.base}/metrics`);
  const line = text.split('\n').find((l) => l.startsWith('mcpgw_messages_total{') && l.includes(`method="${method}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}
