// agent-logbook/langgraph: a LangGraph.js checkpointer on the Logbook journal (SQLite or PostgreSQL).

export { LogbookSaver, type LogbookSaverOptions } from './saver';
export { runGraph, invokeInStep, logbookDo, type RunGraphOptions, type DrivableGraph, type GraphInterrupt } from './run';
