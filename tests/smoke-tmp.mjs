import { startGateway, TOOLBOX, BANK } from './integration/harness.mjs';
import { statelessRequest, openPost } from './integration/stateless.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
const gw = await startGateway({ tasks: { gateway: true }, servers: [{ name: 'toolbox', transport: 'stdio', command: TOOLBOX }, { name: 'bank', transport: 'stdio', command: BANK, args: ['--transfer-tool', 'transfer_money'] }] });
try {
  const client = new Client({ name: 't', version: '1' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (req) => { console.log('ELICIT', JSON.stringify(req.params).slice(0,300)); return { action: 'accept', content: { confirm: true } }; });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const { tools } = await client.listTools();
  console.log(JSON.stringify(tools.find(t => t.name === 'toolbox:sleep').execution));
  for await (const m of client.experimental.tasks.callToolStream({ name: 'toolbox:sleep', arguments: { ms: 1500 } }, CallToolResultSchema)) console.log(m.type, JSON.stringify(m.task ?? m.result ?? m.error?.message).slice(0, 200));
  const tt = tools.find(t => t.name === 'bank:transfer_money'); console.log(JSON.stringify(tt.inputSchema));
  for await (const m of client.experimental.tasks.callToolStream({ name: 'bank:transfer_money', arguments: { fromAccountId: 'acc_savings_001', toAccountId: "acc_credit_001", amount: 5 } }, CallToolResultSchema)) console.log(m.type, JSON.stringify(m.task ?? m.result ?? m.error?.message).slice(0, 300));
  await client.close();
  // 2026
  const caps = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
  let rq = statelessRequest('tools/call', { name: 'toolbox:sleep', arguments: { ms: 500 } }, { caps });
  let res = await openPost(gw.url, rq.body, rq.headers, { id: rq.id }); await res.done; console.log('2026 create', JSON.stringify(res.final).slice(0, 400));
  const id = res.final.result.taskId;
  for (let i = 0; i < 5; i++) {
    rq = statelessRequest('tasks/get', { taskId: id }, { caps, headers: { 'mcp-name': id } });
    res = await openPost(gw.url, rq.body, rq.headers, { id: rq.id }); await res.done; console.log('2026 get', res.status, JSON.stringify(res.final).slice(0, 300));
    if (res.final.result?.status === 'completed') break;
    await new Promise(r => setTimeout(r, 300));
  }
  rq = statelessRequest('tools/call', { name: 'bank:transfer_money', arguments: { fromAccountId: 'acc_savings_001', toAccountId: "acc_credit_001", amount: 5 } }, { caps });
  res = await openPost(gw.url, rq.body, rq.headers, { id: rq.id }); await res.done; const id2 = res.final.result.taskId;
  for (let i = 0; i < 10; i++) {
    rq = statelessRequest('tasks/get', { taskId: id2 }, { caps, headers: { 'mcp-name': id2 } });
    res = await openPost(gw.url, rq.body, rq.headers, { id: rq.id }); await res.done; console.log('2026 get2', res.status, JSON.stringify(res.final).slice(0, 500));
    const st = res.final.result?.status;
    if (st === 'completed' || st === 'failed') break;
    if (st === 'input_required') {
      const keys = Object.keys(res.final.result.inputRequests);
      rq = statelessRequest('tasks/update', { taskId: id2, inputResponses: Object.fromEntries(keys.map(k => [k, { action: 'accept', content: { confirm: true } }])) }, { caps, headers: { 'mcp-name': id2 } });
      res = await openPost(gw.url, rq.body, rq.headers, { id: rq.id }); await res.done; console.log('2026 update', JSON.stringify(res.final));
    }
    await new Promise(r => setTimeout(r, 300));
  }
} finally { await gw.proc.stop?.(); }
