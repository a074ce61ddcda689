// The machinery agent-logbook/openai-agents takes from agent-logbook/ai at run time: one copy (dist/ai.js), one state per run.

import { __integration } from 'agent-logbook/ai';

// Both integrations share a run's call places, tool-call owners and halts, so both can be used in one run.
export const {
  stateOf,
  isControlError,
  generateAction,
  streamAction,
  journaledCall,
  encode,
  decode,
  callParams,
  GatedAction,
  defaultToolKey,
  runToolCall,
  effectContextFor,
} = __integration;
export type AiRunState = ReturnType<typeof stateOf>;
