// The API reference's entry for `agent-logbook/langgraph`: TypeDoc names the module by the tag, as consumers import it.
/**
 * A LangGraph.js checkpointer on the Logbook journal (SQLite or PostgreSQL).
 * @module agent-logbook/langgraph
 */
export * from '../../src/langgraph/index';
