// logbookMcpTools: an MCP server's tools as journaled tools; annotations choose the effect; keys go in `_meta`.

import { AsyncLocalStorage } from 'node:async_hooks';
import { jsonSchema, type Tool, type ToolExecutionOptions, type ToolSet } from 'ai';
import * as z from 'zod/mini';
import { ErrorCodes, LogbookError, callSite, defineAction, type Effect, type EffectContext, type RunApi, type SourceLocation } from 'agent-logbook';
import { decode, encode } from './codec';
import { stateOf, type AiRunState } from './attemptState';
import { GatedAction, defaultToolKey, runToolCall, type Approval, type ToolCallContext } from './tools';

/** The `_meta` field that carries the idempotency key of a tool call to the MCP server. */
export const MCP_KEY_META = 'agent-logbook/idempotency-key';

/** What this integration needs of an MCP client (`Client` of @modelcontextprotocol/sdk has it). */
export interface McpClientLike {
  listTools(params?: { cursor?: string }): Promise<{ tools: McpToolInfo[]; nextCursor?: string | undefined }>;
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }): Promise<unknown>;
  getServerVersion?(): { name: string } | undefined;
}

export interface McpToolInfo {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?:
    { readOnlyHint?: boolean | undefined; idempotentHint?: boolean | undefined; destructiveHint?: boolean | undefined; title?: string | undefined } | undefined;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- overrides are written for each tool's own input type */
/** Per tool, what overrides the annotations' defaults. */
export interface McpToolOverride {
  readonly effect?: Effect;
  readonly approval?: Approval<any>;
  readonly key?: (input: any, ctx: ToolCallContext) => string;
  readonly verify?: (input: any, ctx: EffectContext) => unknown;
  readonly compensate?: (input: any, result: unknown, ctx: EffectContext) => unknown;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface McpToolsOptions {
  /** The server's name in action types (`mcp.<server>.<tool>`); default: the name the server reports. */
  readonly server?: string;
  readonly tools?: Readonly<Record<string, McpToolOverride>>;
  /** Only these tools are offered to the model. */
  readonly only?: readonly string[];
}

/** The effect an MCP tool's annotations imply: readOnlyHint → read-only, idempotentHint → idempotent, else non-idempotent. */
export function effectOf(info: McpToolInfo): Effect {
  if (info.annotations?.readOnlyHint === true) return 'read-only';
  if (info.annotations?.idempotentHint === true) return 'idempotent';
  return 'non-idempotent';
}

const listing = new AsyncLocalStorage<() => Promise<McpToolInfo[]>>();

/** `tools/list`, journaled (read-only) so that a resumed run offers the model the tool set it saw. */
const listTools = defineAction({
  type: 'mcp.tools/list',
  version: 1,
  effect: 'read-only',
  args: z.object({ server: z.string(), step: z.number() }),
  key: (a) => `mcp:${a.server}:tools/list@${a.step + 1}`,
  execute: async () => {
    const list = listing.getStore();
    if (!list)
      throw new LogbookError(
        ErrorCodes.INVALID_DEFINITION,
        'mcp.tools/list ran outside logbookMcpTools.',
        'Call logbookMcpTools(run, client) instead of run.do.',
      );
    return encode(await list());
  },
  description: "An MCP server's tools/list, journaled so a resume sees the same tools.",
});

async function listAll(client: McpClientLike): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    for (const t of page.tools) {
      tools.push({
        name: t.name,
        ...(t.title ? { title: t.title } : {}),
        ...(t.description ? { description: t.description } : {}),
        inputSchema: t.inputSchema,
        ...(t.annotations ? { annotations: t.annotations } : {}),
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function mcpTool(state: AiRunState, client: McpClientLike, server: string, info: McpToolInfo, o: McpToolOverride, at: SourceLocation | undefined): Tool {
  const effect = o.effect ?? effectOf(info);
  const approval = o.approval ?? info.annotations?.destructiveHint === true;
  const actions = new GatedAction(
    {
      type: `mcp.${server}.${info.name}`,
      version: 1,
      effect,
      ...(o.verify ? { verify: o.verify } : {}),
      ...(o.compensate ? { compensate: o.compensate } : {}),
      ...(info.description ? { description: info.description } : {}),
    },
    approval,
  );
  return {
    ...(info.description ? { description: info.description } : {}),
    ...(info.title ? { title: info.title } : {}),
    inputSchema: jsonSchema(info.inputSchema),
    execute: (input: unknown, options: ToolExecutionOptions) => {
      const ctx: ToolCallContext = { run: state.run, toolName: info.name, toolCallId: options.toolCallId, modelCall: state.ownerOf(options.toolCallId) };
      const key = o.key ? o.key(input, ctx) : defaultToolKey(ctx);
      return runToolCall(state, actions.for(input), input, {
        key,
        execute: (effectCtx) =>
          client.callTool({ name: info.name, arguments: (input ?? {}) as Record<string, unknown>, _meta: { [MCP_KEY_META]: effectCtx.idempotencyKey } }),
        at,
      });
    },
  };
}

/**
 * An MCP client's tools as durable AI SDK tools. Call it inside a step: `tools/list` is journaled there. Each tool's
 * effect comes from its annotations (readOnlyHint, idempotentHint, else non-idempotent; destructiveHint gates it for
 * approval), every default overridable per tool; the idempotency key is sent to the server in `_meta`.
 */
export async function logbookMcpTools(run: RunApi, client: McpClientLike, options: McpToolsOptions = {}): Promise<ToolSet> {
  const state = stateOf(run);
  // The server's tools are declared by this call in the user's code: their calls are shown here.
  const at = callSite();
  const step = run.currentStep();
  if (!step) {
    throw new LogbookError(
      ErrorCodes.ACTION_OUTSIDE_STEP,
      'logbookMcpTools was called outside a step: its tools/list is journaled in the step that asks.',
      'Call it inside a step: const tools = await run.step("…", async () => …) or in the step that calls the model.',
    );
  }
  const server = (options.server ?? client.getServerVersion?.()?.name ?? 'mcp').replace(/[^\w-]+/g, '-');
  const infos = decode(
    await listing.run(
      () => listAll(client),
      () => run.do(listTools, { server, step: step.index }, { at }),
    ),
  ) as McpToolInfo[];
  for (const name of Object.keys(options.tools ?? {})) {
    if (!infos.some((t) => t.name === name)) {
      throw new LogbookError(
        ErrorCodes.INVALID_DEFINITION,
        `logbookMcpTools: an override names the tool ${JSON.stringify(name)}, which server ${server} does not list (it lists ${infos.map((t) => t.name).join(', ') || 'nothing'}).`,
        'Fix the name in the tools option.',
      );
    }
  }
  const out: ToolSet = {};
  for (const info of infos) {
    if (options.only && !options.only.includes(info.name)) continue;
    out[info.name] = mcpTool(state, client, server, info, options.tools?.[info.name] ?? {}, at);
    state.journals(info.name);
  }
  return out;
}
