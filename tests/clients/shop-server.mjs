// A typed checkout over stdio (official SDK v1 low-level Server): three tools,
// each with an outputSchema and a conforming structuredContent, chained by
// _meta.nextTool:
//
//   checkout {cartId}                  -> order placed   -> nextTool charge_payment
//   charge_payment {orderId, amount}   -> card charged   -> nextTool issue_receipt
//   issue_receipt {orderId, paymentId} -> the receipt
//
// so a client calling shop:checkout through the gateway gets one merged
// result of three hops, every one of them typed. checkout's outputSchema is
// open (JSON Schema's default: other properties allowed); checkout_strict
// is the same tool with a closed one (additionalProperties: false), which
// leaves the gateway no room to add the later hops' text to the
// structuredContent (docs/protocol.md, "nextTool chains"). Ids are fixed (the tests
// assert on them): order ORD-7, payment PAY-7, receipt RCPT-7.
//
//   node tests/clients/shop-server.mjs
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const obj = (properties, required) => ({ type: 'object', properties, required, additionalProperties: false });
const open = (properties, required) => ({ type: 'object', properties, required });

const ORDER = { orderId: { type: 'string' }, cartId: { type: 'string' }, total: { type: 'number' }, currency: { type: 'string' } };

export const TOOLS = [
  {
    name: 'checkout',
    title: 'Checkout',
    description: 'Places the order for a cart, then charges the card and issues the receipt.',
    inputSchema: obj({ cartId: { type: 'string' } }, ['cartId']),
    outputSchema: open(ORDER, Object.keys(ORDER)),
  },
  {
    name: 'checkout_strict',
    title: 'Checkout (closed output schema)',
    description: 'Places the order for a cart, then charges the card and issues the receipt.',
    inputSchema: obj({ cartId: { type: 'string' } }, ['cartId']),
    outputSchema: obj(ORDER, Object.keys(ORDER)),
  },
  {
    name: 'charge_payment',
    title: 'Charge Payment',
    description: "Charges the customer's card for an order.",
    inputSchema: obj({ orderId: { type: 'string' }, amount: { type: 'number' } }, ['orderId', 'amount']),
    outputSchema: obj(
      { paymentId: { type: 'string' }, orderId: { type: 'string' }, amount: { type: 'number' }, status: { type: 'string' } },
      ['paymentId', 'orderId', 'amount', 'status'],
    ),
  },
  {
    name: 'issue_receipt',
    title: 'Issue Receipt',
    description: 'Issues the receipt of a paid order.',
    inputSchema: obj({ orderId: { type: 'string' }, paymentId: { type: 'string' } }, ['orderId', 'paymentId']),
    outputSchema: obj(
      {
        receipt: obj(
          { receiptId: { type: 'string' }, orderId: { type: 'string' }, paymentId: { type: 'string' } },
          ['receiptId', 'orderId', 'paymentId'],
        ),
      },
      ['receipt'],
    ),
  },
];

function handle(name, args) {
  switch (name) {
    case 'checkout':
    case 'checkout_strict':
      return {
        content: [{ type: 'text', text: `Order ORD-7 placed for cart ${args.cartId}: 42.50 EUR.` }],
        structuredContent: { orderId: 'ORD-7', cartId: String(args.cartId), total: 42.5, currency: 'EUR' },
        _meta: { nextTool: { tool: 'charge_payment', arguments: { orderId: 'ORD-7', amount: 42.5 } } },
      };
    case 'charge_payment':
      return {
        content: [{ type: 'text', text: `Payment PAY-7 of ${args.amount.toFixed(2)} EUR captured for order ${args.orderId}.` }],
        structuredContent: { paymentId: 'PAY-7', orderId: args.orderId, amount: args.amount, status: 'captured' },
        _meta: { nextTool: { tool: 'issue_receipt', arguments: { orderId: args.orderId, paymentId: 'PAY-7' } } },
      };
    case 'issue_receipt':
      return {
        content: [{ type: 'text', text: `Receipt RCPT-7 issued for order ${args.orderId} (payment ${args.paymentId}).` }],
        structuredContent: { receipt: { receiptId: 'RCPT-7', orderId: args.orderId, paymentId: args.paymentId } },
      };
    default:
      return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
  }
}

const server = new Server({ name: 'shop-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, async (req) => handle(req.params.name, req.params.arguments || {}));
await server.connect(new StdioServerTransport());
