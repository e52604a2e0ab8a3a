// The gateway configuration of the servers[].tools tests (integration and
// interop): the contract's example override on overrides-fixture.mjs's
// create_issue, an override of a tool the server does not have, tasks made
// by the gateway, and a tool search mode.
import path from 'node:path';
import { REPO } from './harness.mjs';

export const FIXTURE = path.join(REPO, 'tests', 'integration', 'overrides-fixture.mjs');
export const CONTRACT_TEXT = "Open a ticket in the web team's tracker";

export const TRACKER = {
  name: 'tracker',
  transport: 'stdio',
  command: process.execPath,
  args: [FIXTURE],
  tools: {
    create_issue: {
      name: 'open_ticket',
      description: CONTRACT_TEXT,
      title: 'Open ticket',
      annotations: { destructiveHint: false },
      arguments: {
        repo: { value: 'acme/web' },
        labels: { default: ['triage'] },
        body: { name: 'details', description: 'What is wrong, in full sentences' },
      },
    },
    ghost: { description: 'a tool the server does not have' },
  },
};

export const CONFIG = {
  tasks: { gateway: true },
  modes: { find: { description: 'tool search', discovery: 'search' } },
  servers: [TRACKER],
};

/** What the fixture answers once the contract's override mapped a call: `extra` are the other arguments. */
export const MAPPED = (extra) => ({ tool: 'create_issue', arguments: { repo: 'acme/web', labels: ['triage'], ...extra } });
