// An example MCP server (a helpdesk) with annotated tools, served in-process over the MCP SDK's in-memory transport.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { readState, writeState } from './store';

interface HelpdeskState {
  /** Tickets opened, one per idempotency key the server was given in `_meta`. */
  tickets: Array<{ key: string; ticketId: string; orderId: string; summary: string }>;
  /** Every tools/call the server answered, by tool name. */
  calls: Record<string, number>;
  /** Idempotency keys received in `_meta`, in order (repeats included). */
  keys: string[];
  closed: string[];
}

const FILE = 'helpdesk.json';
const load = (): HelpdeskState => readState<HelpdeskState>(FILE, { tickets: [], calls: {}, keys: [], closed: [] });
const KEY_META = 'agent-logbook/idempotency-key';

const FAQ: Record<string, string> = {
  refund: 'Broken or missing items are refunded in full to the original card within 5 business days.',
  shipping: 'Orders ship within 2 business days.',
};

function served(name: string, meta: Record<string, unknown> | undefined): { state: HelpdeskState; key: string | undefined } {
  const state = load();
  state.calls[name] = (state.calls[name] ?? 0) + 1;
  const key = typeof meta?.[KEY_META] === 'string' ? meta[KEY_META] : undefined;
  if (key) state.keys.push(key);
  return { state, key };
}

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export function helpdeskServer(): McpServer {
  const server = new McpServer({ name: 'helpdesk', version: '1.0.0' });
  server.registerTool(
    'search_faq',
    { description: 'Search the support FAQ.', inputSchema: { query: z.string() }, annotations: { readOnlyHint: true } },
    ({ query }, extra) => {
      const { state } = served('search_faq', extra._meta);
      writeState(FILE, state);
      const hit = Object.entries(FAQ).find(([k]) => query.toLowerCase().includes(k));
      return text(hit ? hit[1] : 'No FAQ entry matches.');
    },
  );
  server.registerTool(
    'open_ticket',
    {
      description: 'Open a support ticket about an order; a repeated idempotency key returns the ticket already opened.',
      inputSchema: { orderId: z.string(), summary: z.string() },
      annotations: { idempotentHint: true, destructiveHint: false },
    },
    ({ orderId, summary }, extra) => {
      const { state, key } = served('open_ticket', extra._meta);
      const existing = key ? state.tickets.find((t) => t.key === key) : undefined;
      if (existing) {
        writeState(FILE, state);
        return text(`ticket ${existing.ticketId}`);
      }
      const ticketId = `T-${state.tickets.length + 1}`;
      state.tickets.push({ key: key ?? '', ticketId, orderId, summary });
      writeState(FILE, state);
      return text(`ticket ${ticketId}`);
    },
  );
  server.registerTool(
    'close_account',
    { description: "Close the customer's account.", inputSchema: { email: z.string() }, annotations: { destructiveHint: true } },
    ({ email }, extra) => {
      const { state } = served('close_account', extra._meta);
      state.closed.push(email);
      writeState(FILE, state);
      return text(`closed ${email}`);
    },
  );
  return server;
}

/** A client connected to a fresh in-process helpdesk server. */
export async function connectHelpdesk(): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await helpdeskServer().connect(serverSide);
  const client = new Client({ name: 'support-agent', version: '1.0.0' });
  await client.connect(clientSide);
  return client;
}

export const helpdesk = { record: load };
