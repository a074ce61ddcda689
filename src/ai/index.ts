// agent-logbook/ai: durable model calls and tool calls for the Vercel AI SDK and MCP, journaled by Logbook.

import { declareRunTimeActionTypes } from 'agent-logbook';

export { logbookModel, logbookMiddleware, type ModelOptions, type DriftPolicy, type LogbookLanguageModel, type LogbookWrappedModel } from './model';
export {
  logbookTools,
  toolContext,
  UNRECORDED_TOOL_RESULT,
  type ToolEntry,
  type ToolEntryFor,
  type ToolSpec,
  type ActionToolSpec,
  type ToolCallContext,
  type ToolEffectContext,
  type Approval,
} from './tools';
export { logbookMcpTools, effectOf, MCP_KEY_META, type McpClientLike, type McpToolInfo, type McpToolOverride, type McpToolsOptions } from './mcp';
export { modelCallOf, type ModelCallInfo } from './replay';
export { replaySavings, type ReplaySavings, type PriceTable } from './attemptState';
export { generateAction, streamAction } from './calls';

// Tool and MCP actions are made per tool the model may call, inside the run: crash points naming them are checked then.
declareRunTimeActionTypes('tool.');
declareRunTimeActionTypes('mcp.');

import { isControlError as aiIsControlError, stateOf as aiStateOf } from './attemptState';
import { generateAction as aiGenerateAction, journaledCall as aiJournaledCall, streamAction as aiStreamAction } from './calls';
import { decode as aiDecode, encode as aiEncode } from './codec';
import { callParams as aiCallParams } from './fingerprint';
import {
  GatedAction as AiGatedAction,
  defaultToolKey as aiDefaultToolKey,
  effectContextFor as aiEffectContextFor,
  runToolCall as aiRunToolCall,
} from './tools';

/**
 * The machinery agent-logbook/openai-agents shares at run time, so that both integrations keep one state
 * per run (call places, tool-call owners, halts) and one copy of the code. Not an API: it changes without notice.
 */
export const __integration = Object.freeze({
  stateOf: aiStateOf,
  isControlError: aiIsControlError,
  generateAction: aiGenerateAction,
  streamAction: aiStreamAction,
  journaledCall: aiJournaledCall,
  encode: aiEncode,
  decode: aiDecode,
  callParams: aiCallParams,
  GatedAction: AiGatedAction,
  defaultToolKey: aiDefaultToolKey,
  runToolCall: aiRunToolCall,
  effectContextFor: aiEffectContextFor,
});
