// Client input asked by a plugin and by an upstream, through the real binary,
// with raw clients of MCP 2026-07-28 (stateless HTTP, no session):
//   - deploy_flow's `deploy` (seed 004): round 1 input_required with the
//     elicitation under key `target`, round 2 with the sampling under key
//     `safety`, round 3 the complete result; each requestState "mcpgw1.…";
//     a decline or an UNSAFE verdict ends it with an isError result and no
//     action; a tampered requestState is refused (-32602) with no action;
//   - restart survival: gateway A (sagas.secret S) hands out the state, is
//     stopped (SIGTERM); gateway B with the same config completes the retry
//     by replaying the call; a gateway with another secret refuses it and
//     acts on nothing;
//   - bank-server --transfer-tool transfer_money, in both eras of the
//     example kit (legacy: the question comes mid-call; 2026: as its own
//     input_required): confirmed → money moved; declined or not confirmed →
//     refused, balances unchanged.
// "The act" is deploy's call of the toolbox's `echo`: the toolbox serves
// Streamable HTTP behind a tap, which sees every tools/call reaching it.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { BANK, BUILD, TOOLBOX, requireBinaries, startGateway, startTap, startUpstreamHttp, withDiagnostics } from './harness.mjs';
import { srpc } from './stateless.mjs';

const DEPLOY_FLOW = path.join(BUILD, 'plugins', 'libdeploy_flow.so');
const SECRET = 'plugin-input-secret-0123456789';
const CAPS = { elicitation: {}, sampling: {} };

let tap; // in front of the toolbox every gateway here deploys through
let gw; // the main gateway: secret SECRET, deploy_flow, bank (legacy era) and bank26 (2026 era)

/** A gateway config: deploy_flow over the tapped toolbox, plus `servers`. */
function config(servers = [], extra = {}) {
  return {
    welcome: { strategy: 'none' },
    sagas: { secret: SECRET },
    servers: [{ name: 'toolbox', transport: 'http', url: tap.url, timeout_ms: 20000 }, ...servers],
    plugins: [{ path: DEPLOY_FLOW, config: { server: 'toolbox' } }],
    ...extra,
  };
}
const bank = (name, era) => ({ name, transport: 'stdio', command: BANK, args: ['--transfer-tool', 'transfer_money', '--era', era], timeout_ms: 30000 });

before(async () => {
  requireBinaries(BANK, TOOLBOX, DEPLOY_FLOW);
  const toolbox = await startUpstreamHttp(TOOLBOX, [], { label: 'toolbox-http' });
  tap = await startTap(toolbox.url);
  gw = await startGateway(config([bank('bank', 'legacy'), bank('bank26', '2026')]), { label: 'mcpgw-main' });
});

// ---------------------------------------------------------------------------
// helpers

/** A stateless tools/call on `g`; `extra` goes into params (inputResponses, requestState). */
function call(g, name, args, extra = {}, caps = CAPS) {
  return srpc(g.url, 'tools/call', { name, arguments: args, ...extra }, { caps, timeoutMs: 30000 });
}

const detail = (r, what) => `${what}: HTTP ${r.status} ${r.text.slice(0, 3000)}`;

/** The input_required result of `r`: exactly inputRequests and a requestState "mcpgw1.…". */
function inputRequired(r, what) {
  assert.equal(r.status, 200, detail(r, what));
  assert.equal(r.message?.error, undefined, detail(r, what));
  const res = r.message.result;
  assert.equal(res.resultType, 'input_required', detail(r, what));
  assert.deepEqual(Object.keys(res).sort(), ['inputRequests', 'requestState', 'resultType'], detail(r, what));
  assert.ok(res.requestState.startsWith('mcpgw1.'), detail(r, what));
  assert.match(res.requestState, /^mcpgw1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, detail(r, what));
  return res;
}

/** The complete result of `r`. */
function complete(r, what) {
  assert.equal(r.status, 200, detail(r, what));
  assert.equal(r.message?.error, undefined, detail(r, what));
  assert.equal(r.message.result.resultType, 'complete', detail(r, what));
  return r.message.result;
}

/** The in-band JSON-RPC error of `r`. */
function rpcError(r, code, what) {
  assert.equal(r.status, 200, detail(r, what));
  assert.equal(r.message?.result, undefined, detail(r, what));
  assert.equal(r.message?.error?.code, code, detail(r, what));
  return r.message.error;
}

/** How many times the act (toolbox echo of this deployment) has reached the toolbox. */
const acts = (service, version, target) =>
  tap.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'echo' && b.params?.arguments?.text === `deploy ${service} ${version} to ${target}`).length;
/** Every echo of `service`, whatever the version or target. */
const anyAct = (service) => tap.seen.filter((b) => b?.method === 'tools/call' && b.params?.name === 'echo' && String(b.params?.arguments?.text).startsWith(`deploy ${service} `)).length;

const TARGET_REQUEST = (service, version) => ({
  method: 'elicitation/create',
  params: {
    message: `Where should ${service} ${version} be deployed?`,
    requestedSchema: {
      type: 'object',
      properties: { target: { type: 'string', title: 'Deployment target', enum: ['staging', 'production'] } },
      required: ['target'],
    },
  },
});
const SAFETY_REQUEST = (service, version, target) => ({
  method: 'sampling/createMessage',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: `Is it safe to deploy ${service} ${version} to ${target}? Answer SAFE or UNSAFE and why.` } }],
    maxTokens: 200,
  },
});
const pick = (target) => ({ action: 'accept', content: { target } });
const says = (text) => ({ role: 'assistant', content: { type: 'text', text }, model: 'test-model', stopReason: 'endTurn' });

/** Rounds 1 and 2 of deploy on `g`: returns both input_required results. */
async function firstRounds(g, service, version, target) {
  const args = { service, version };
  const r1 = inputRequired(await call(g, 'deploy', args), 'round 1');
  assert.deepEqual(r1.inputRequests, { target: TARGET_REQUEST(service, version) });
  const r2 = inputRequired(await call(g, 'deploy', args, { inputResponses: { target: pick(target) }, requestState: r1.requestState }), 'round 2');
  assert.deepEqual(r2.inputRequests, { safety: SAFETY_REQUEST(service, version, target) });
  assert.notEqual(r2.requestState, r1.requestState);
  return { r1, r2 };
}

// ---------------------------------------------------------------------------
// deploy_flow, stateless client

test(
  'deploy, stateless client: round 1 asks `target`, round 2 asks `safety`, round 3 completes with the structured result; the act runs once',
  withDiagnostics(async () => {
    const args = { service: 'billing', version: '1.4.2' };
    const { r2 } = await firstRounds(gw, 'billing', '1.4.2', 'production');
    assert.equal(anyAct('billing'), 0, 'acted before the last answer');

    const done = complete(
      await call(gw, 'deploy', args, { inputResponses: { safety: says('SAFE: all checks are green.') }, requestState: r2.requestState }),
      'round 3',
    );
    assert.deepEqual(done.structuredContent, { service: 'billing', version: '1.4.2', target: 'production', safety: 'SAFE: all checks are green.', deployed: true });
    assert.deepEqual(done.content, [{ type: 'text', text: 'Deployed billing 1.4.2 to production.' }]);
    assert.equal(done.isError, undefined);
    assert.equal(acts('billing', '1.4.2', 'production'), 1);
    assert.equal(anyAct('billing'), 1);
  }),
);

test(
  'deploy, stateless client: a declined elicitation ends with an isError result saying so, and nothing is deployed',
  withDiagnostics(async () => {
    const args = { service: 'search', version: '2.0.0' };
    const r1 = inputRequired(await call(gw, 'deploy', args), 'round 1');
    const done = complete(await call(gw, 'deploy', args, { inputResponses: { target: { action: 'decline' } }, requestState: r1.requestState }), 'declined');
    assert.equal(done.isError, true);
    assert.deepEqual(done.content, [{ type: 'text', text: 'Not deployed: no deployment target (the user declined).' }]);
    assert.equal(done.structuredContent, undefined);
    // A cancel is refused the same way.
    const cancelled = complete(await call(gw, 'deploy', args, { inputResponses: { target: { action: 'cancel' } }, requestState: r1.requestState }), 'cancelled');
    assert.equal(cancelled.isError, true);
    assert.deepEqual(cancelled.content, [{ type: 'text', text: 'Not deployed: no deployment target (the user cancelled).' }]);
    assert.equal(anyAct('search'), 0);
  }),
);

test(
  'deploy, stateless client: an UNSAFE verdict (or none) ends with an isError refusal, and nothing is deployed',
  withDiagnostics(async () => {
    const args = { service: 'ledger', version: '3.1.0' };
    const { r2 } = await firstRounds(gw, 'ledger', '3.1.0', 'production');
    const unsafe = complete(
      await call(gw, 'deploy', args, { inputResponses: { safety: says('UNSAFE: the error budget is spent.') }, requestState: r2.requestState }),
      'UNSAFE',
    );
    assert.equal(unsafe.isError, true);
    assert.deepEqual(unsafe.content, [{ type: 'text', text: 'Not deployed: the safety check did not say SAFE: UNSAFE: the error budget is spent.' }]);
    // Fail closed: an answer that is neither SAFE nor UNSAFE is a refusal too.
    const unclear = complete(await call(gw, 'deploy', args, { inputResponses: { safety: says('Probably fine?') }, requestState: r2.requestState }), 'unclear');
    assert.equal(unclear.isError, true);
    assert.deepEqual(unclear.content, [{ type: 'text', text: 'Not deployed: the safety check did not say SAFE: Probably fine?' }]);
    assert.equal(anyAct('ledger'), 0);
  }),
);

test(
  'deploy, stateless client: a tampered requestState is refused with -32602 and nothing is deployed; the genuine one completes',
  withDiagnostics(async () => {
    const args = { service: 'tamper', version: '0.0.1' };
    const { r2 } = await firstRounds(gw, 'tamper', '0.0.1', 'staging');
    const [prefix, payload, signature] = r2.requestState.split('.');
    const flip = (s, i) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const safe = { safety: says('SAFE') };
    for (const [what, bad] of Object.entries({
      'a payload byte flipped': `${prefix}.${flip(payload, Math.floor(payload.length / 2))}.${signature}`,
      'a signature byte flipped': `${prefix}.${payload}.${flip(signature, 3)}`,
      'text appended': `${r2.requestState}-TAMPERED`,
    })) {
      const err = rpcError(await call(gw, 'deploy', args, { inputResponses: safe, requestState: bad }), -32602, what);
      assert.match(err.message, /^Invalid requestState/, `${what}: ${err.message}`);
    }
    assert.equal(anyAct('tamper'), 0, 'a refused retry acted');
    const done = complete(await call(gw, 'deploy', args, { inputResponses: safe, requestState: r2.requestState }), 'genuine');
    assert.deepEqual(done.structuredContent, { service: 'tamper', version: '0.0.1', target: 'staging', safety: 'SAFE', deployed: true });
    assert.equal(acts('tamper', '0.0.1', 'staging'), 1);
  }),
);

test(
  'restart survival: gateway A hands out the state and is stopped; gateway B with the same config and secret completes the retry; another secret → -32602, nothing acted',
  withDiagnostics(async () => {
    const cfg = config([]);
    const a = await startGateway(cfg, { label: 'mcpgw-A' });
    const args = { service: 'survivor', version: '9.9.9' };
    const { r1, r2 } = await firstRounds(a, 'survivor', '9.9.9', 'production');
    const exit = await a.proc.stop({ signal: 'SIGTERM' });
    assert.equal(exit.killed, false, `A did not exit on SIGTERM: ${JSON.stringify(exit)}`);
    assert.equal(a.proc.alive, false);

    const other = await startGateway({ ...cfg, sagas: { secret: 'another-secret-9876543210' } }, { label: 'mcpgw-other-secret' });
    const safe = { safety: says('SAFE: canary is healthy.') };
    let err = rpcError(await call(other, 'deploy', args, { inputResponses: safe, requestState: r2.requestState }), -32602, 'another secret, round 3');
    assert.match(err.message, /^Invalid requestState/, err.message);
    err = rpcError(await call(other, 'deploy', args, { inputResponses: { target: pick('production') }, requestState: r1.requestState }), -32602, 'another secret, round 2');
    assert.match(err.message, /^Invalid requestState/, err.message);
    assert.equal(anyAct('survivor'), 0, 'the gateway with another secret acted');

    const b = await startGateway(cfg, { label: 'mcpgw-B' });
    // B never saw the call: it replays it from round 1, answering `target`
    // from the state and `safety` from inputResponses.
    const done = complete(await call(b, 'deploy', args, { inputResponses: safe, requestState: r2.requestState }), 'round 3 on B');
    assert.deepEqual(done.structuredContent, { service: 'survivor', version: '9.9.9', target: 'production', safety: 'SAFE: canary is healthy.', deployed: true });
    assert.deepEqual(done.content, [{ type: 'text', text: 'Deployed survivor 9.9.9 to production.' }]);
    assert.equal(acts('survivor', '9.9.9', 'production'), 1);
    assert.equal(anyAct('survivor'), 1);
    await Promise.all([b.proc.stop(), other.proc.stop()]);
  }),
);

// ---------------------------------------------------------------------------
// bank-server --transfer-tool transfer_money, stateless client, both kit eras

const SAVINGS = 'acc_savings_001';
const CREDIT = 'acc_credit_001';
const CONFIRM_REQUEST = (amount) => ({
  method: 'elicitation/create',
  params: {
    message: `Transfer ${amount} USD from High Yield Savings (${SAVINGS}) to Rewards Credit Card (${CREDIT})?`,
    requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean', title: 'Confirm the transfer' } }, required: ['confirm'] },
  },
});

async function balances(server) {
  const out = [];
  for (const accountId of [SAVINGS, CREDIT]) {
    const r = complete(await call(gw, `${server}:get_account_balance`, { accountId }, {}, {}), `${server} balance of ${accountId}`);
    out.push(r.structuredContent.balance);
  }
  return out;
}

for (const [server, era] of [
  ['bank', 'legacy'],
  ['bank26', '2026'],
]) {
  test(
    `bank transfer_money (kit era ${era}), stateless client: input_required asks \`confirm\`; declined or unconfirmed → refused, nothing moves; confirmed → money moved`,
    withDiagnostics(async () => {
      const tool = `${server}:transfer_money`;
      const args = { fromAccountId: SAVINGS, toAccountId: CREDIT, amount: 250 };
      assert.deepEqual(await balances(server), [15020.5, -432.1]);

      const r1 = inputRequired(await call(gw, tool, args), 'round 1');
      assert.deepEqual(r1.inputRequests, { confirm: CONFIRM_REQUEST('250.00') });

      const refusal = `Not transferred: you did not confirm the transfer of 250.00 USD from High Yield Savings (${SAVINGS}) to Rewards Credit Card (${CREDIT}). No money has moved.`;
      for (const [what, answer] of Object.entries({ declined: { action: 'decline' }, 'accepted with confirm: false': { action: 'accept', content: { confirm: false } } })) {
        const first = inputRequired(await call(gw, tool, args), `${what}: round 1`);
        const r = complete(await call(gw, tool, args, { inputResponses: { confirm: answer }, requestState: first.requestState }), what);
        assert.equal(r.isError, true, what);
        assert.deepEqual(r.content, [{ type: 'text', text: refusal }], what);
        assert.deepEqual(await balances(server), [15020.5, -432.1], `${what}: money moved`);
      }

      const done = complete(await call(gw, tool, args, { inputResponses: { confirm: { action: 'accept', content: { confirm: true } } }, requestState: r1.requestState }), 'confirmed');
      assert.equal(done.isError, undefined, JSON.stringify(done));
      const { transferId, ...rest } = done.structuredContent;
      assert.match(transferId, /^trf_\d{6}$/);
      assert.deepEqual(rest, { status: 'completed', fromAccountId: SAVINGS, toAccountId: CREDIT, amount: 250, currency: 'USD', fromBalance: 14770.5, toBalance: -182.1 });
      assert.deepEqual(done.content, [
        { type: 'text', text: `Transfer ${transferId} completed: 250.00 USD from High Yield Savings (${SAVINGS}) to Rewards Credit Card (${CREDIT}). New balances: 14770.50 USD and -182.10 USD.` },
      ]);
      assert.deepEqual(await balances(server), [14770.5, -182.1]);
    }),
  );
}
