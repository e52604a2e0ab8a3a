import { startGateway, EVERYTHING } from './integration/harness.mjs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
const kind = process.argv[2] || 'stdio';
let upstream, gw;
if (kind === 'stdio') gw = await startGateway({ servers: [{ name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], timeout_ms: 30000 }] });
try {
  const taskStore = new InMemoryTaskStore();
  const client = new Client({ name: 't', version: '1' }, { capabilities: { elicitation: {}, tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } }, taskStore });
  client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
    console.log('ELICIT', JSON.stringify(req.params).slice(0, 200));
    if (req.params.task) {
      const task = await extra.taskStore.createTask({ ttl: req.params.task.ttl });
      setTimeout(() => extra.taskStore.storeTaskResult(task.taskId, 'completed', { action: 'accept', content: { name: 'Ada', favoriteColor: 'Blue' } }), 1500);
      console.log('client task', task.taskId);
      return { task };
    }
    return { action: 'accept', content: { name: 'Sync' } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(gw.url)));
  const { tools } = await client.listTools();
  console.log(tools.map(t => t.name).filter(n => n.includes('async')));
  const r = await client.callTool({ name: 'everything:trigger-elicitation-request-async', arguments: {} }, undefined, { timeout: 60000 });
  console.log(JSON.stringify(r).slice(0, 1500));
  await client.close();
} finally { await gw.proc.stop?.(); }
