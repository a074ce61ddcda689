// The API reference's entry for `agent-logbook/ai`: TypeDoc names the module by the tag, as consumers import it.
/**
 * Durable model calls and tool calls for the Vercel AI SDK and MCP.
 * @module agent-logbook/ai
 */
export * from '../../src/ai/index';
