// The API reference's entry for `agent-logbook/openai-agents`: TypeDoc names the module by the tag, as consumers import it.
/**
 * The OpenAI Agents SDK on the Logbook journal: a journaled model provider, tools made from Logbook actions, and runs
 * that pause at the SDK's interruptions with its RunState kept in the journal.
 * @module agent-logbook/openai-agents
 */
export * from '../../src/openaiAgents/index';
