// agent-logbook/ai: durable model calls and tool calls for the Vercel AI SDK and MCP, journaled by Logbook.

export { logbookModel, logbookMiddleware, type ModelOptions, type DriftPolicy } from './model';
export { logbookTools, type ToolEntry, type ToolSpec, type ActionToolSpec, type ToolCallContext, type Approval } from './tools';
export { logbookMcpTools, effectOf, MCP_KEY_META, type McpClientLike, type McpToolInfo, type McpToolOverride, type McpToolsOptions } from './mcp';
export { replaySavings, type ReplaySavings, type PriceTable } from './state';
export { generateAction, streamAction } from './calls';
