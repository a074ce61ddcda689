// agent-logbook/openai-agents: the OpenAI Agents SDK on the Logbook journal: journaled model responses, tools, and paused runs.

import { declareRunTimeActionTypes } from 'agent-logbook';

export { logbookModelProvider, logbookAgentsModel, type AgentsModelOptions } from './model';
export { logbookRunAgent, type RunAgentOptions, type AgentRunOutcome } from './runAgent';
export { logbookAgentsTool, type AgentsApproval, type AgentsToolContext, type AgentsActionToolSpec, type AgentsToolSpec } from './tools';

// Inline tools are made per run, inside it: crash points naming them are checked then.
declareRunTimeActionTypes('tool.');
