// The API reference's entry for `agent-logbook`: TypeDoc names the module by the tag, as consumers import it.
/**
 * Declarations for agent scripts and the host API.
 * @module agent-logbook
 */
export * from '../../src/runtime/public';
