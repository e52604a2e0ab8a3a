// A minimal MCP Apps host for the browser, built on the official pieces:
// the SDK v2 client over Streamable HTTP to mcpgw and the ext-apps
// AppBridge with its PostMessageTransport. Bundled with esbuild by
// apps-host.test.mjs; the test drives it through window.mcpHost.
//
// Each view renders in a sandboxed iframe (allow-scripts only, so its
// origin is opaque and its parent cross-origin, as in a real host) from the
// HTML the host read with resources/read; the bridge forwards the view's
// tools/call and resources/read to mcpgw through the same client.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';

const HOST_INFO = { name: 'mcpgw-test-host', version: '1.0.0' };
const UI_EXTENSION = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } };

let client;
let tools = [];

window.mcpHost = {
  /** Connects to the gateway: 2025-11-25, or with `modern` the 2026-07-28 revision (server/discover). */
  async connect(url, { modern = false } = {}) {
    const options = modern ? { versionNegotiation: { mode: 'auto' } } : {};
    client = new Client(HOST_INFO, { capabilities: { extensions: UI_EXTENSION }, ...options });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    tools = (await client.listTools()).tools;
    return {
      protocol: client.getNegotiatedProtocolVersion?.() ?? null,
      extensions: client.getServerCapabilities()?.extensions ?? null,
      tools: tools.map((t) => ({ name: t.name, meta: t._meta ?? null })),
    };
  },

  /**
   * Calls UI tool `name` the way a host does: reads its view, renders it,
   * hands it the input and the result. Resolves once the view initialized
   * and got the result; returns the frame's name and the resource URI.
   */
  async open(name, args = {}) {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name} listed`);
    const uri = getToolUiResourceUri(tool);
    const read = await client.readResource({ uri });
    const html = read.contents[0].text;
    const frame = document.createElement('iframe');
    frame.name = `view-${name}`;
    frame.setAttribute('sandbox', 'allow-scripts');
    frame.style.cssText = 'width: 470px; height: 340px; border: 1px solid #ccc; display: block';
    const box = document.createElement('div');
    box.style.cssText = 'display: inline-block; vertical-align: top; margin: 6px; font: 13px sans-serif';
    box.append(`${name} — ${uri} (through mcpgw)`, frame);
    document.body.append(box);
    const bridge = new AppBridge(client, HOST_INFO, { serverTools: {}, serverResources: {}, logging: {} }, {
      hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' },
    });
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = resolve;
    });
    await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
    frame.srcdoc = html;
    await initialized;
    await bridge.sendToolInput({ arguments: args });
    const result = await client.callTool({ name, arguments: args });
    await bridge.sendToolResult(result);
    return { frame: frame.name, uri, injected: html.includes('mcpgw: names this view') };
  },
};
