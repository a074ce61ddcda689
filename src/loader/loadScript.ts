// Loads a user's agent script (TS or JS) through esbuild with inline source maps; `agent-logbook` resolves to us.

import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import Module from 'node:module';
import * as path from 'node:path';
import * as runtime from '../runtime/public';
import { ErrorCodes, LogbookError, describe } from '../runtime/errors';
import { agentsDefinedSince, definedAgentCount, isAgent, type AgentDefinition } from '../runtime/define';
import { sourceMapsChanged } from '../runtime/location';

const RUNTIME_ID = '\0agent-logbook-runtime';

interface ModuleInternals {
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
  _cache: Record<string, unknown>;
  _nodeModulePaths(dir: string): string[];
}
const internals = Module as unknown as ModuleInternals;

let installed = false;
/** Where the scripts loaded so far live: the AI SDKs agent-logbook/ai needs are the ones the script's project installed. */
const scriptDirs = new Set<string>();

/** agent-logbook/ai next to this bundle (dist/ai.js), or its source when the loader itself runs from source. */
function aiEntry(): string {
  const built = path.join(__dirname, 'ai.js');
  return fs.existsSync(built) ? built : path.join(__dirname, '..', 'ai', 'index.ts');
}

/** agent-logbook/langgraph next to this bundle (dist/langgraph.js), or its source. */
function langgraphEntry(): string {
  const built = path.join(__dirname, 'langgraph.js');
  return fs.existsSync(built) ? built : path.join(__dirname, '..', 'langgraph', 'index.ts');
}

/** agent-logbook/openai-agents next to this bundle (dist/openai-agents.js), or its source when run from source. */
function agentsEntry(): string {
  const built = path.join(__dirname, 'openai-agents.js');
  return fs.existsSync(built) ? built : path.join(__dirname, '..', 'openaiAgents', 'index.ts');
}

const AI_PEERS = /^(ai|@ai-sdk\/[^/]+|@modelcontextprotocol\/sdk|@langchain\/[^/]+|@openai\/agents(?:-core)?)(\/|$)/;

/**
 * Makes `require('agent-logbook')` from any loaded script return this very runtime instance, and
 * `agent-logbook/ai` the integration that ships with it; that integration's SDK imports resolve from the script.
 */
function installRuntimeAlias(): void {
  if (installed) return;
  installed = true;
  const m = new Module(RUNTIME_ID);
  m.exports = runtime;
  m.loaded = true;
  internals._cache[RUNTIME_ID] = m;
  const ai = aiEntry();
  const langgraph = langgraphEntry();
  const aiDir = path.dirname(ai);
  const original = internals._resolveFilename.bind(internals);
  internals._resolveFilename = (request, parent, isMain, options) => {
    if (request === 'agent-logbook') return RUNTIME_ID;
    if (request === 'agent-logbook/ai') return ai;
    if (request === 'agent-logbook/langgraph') return langgraph;
    if (request === 'agent-logbook/openai-agents') return agentsEntry();
    const from = (parent as { filename?: string } | undefined)?.filename;
    if (from && AI_PEERS.test(request) && path.dirname(from) === aiDir) {
      for (const dir of scriptDirs) {
        const beside = new Module(path.join(dir, 'index.js'));
        beside.paths = internals._nodeModulePaths(dir);
        try {
          return original(request, beside, false, options);
        } catch {
          // not installed beside this script: try the next, then where agent-logbook itself is installed
        }
      }
    }
    return original(request, parent, isMain, options);
  };
}

export interface LoadedScript {
  readonly path: string;
  readonly agent: AgentDefinition;
  /**
   * Every agent the script's bundle defines, by name: its default one and those it imports (the agents it starts with
   * run.child), so a child run, which journals its parent's script, is resumed with its own agent.
   */
  readonly agents: ReadonlyMap<string, AgentDefinition>;
  /** A hash of the bundled script (its own code and relative imports; packages are external): a worker only claims runs of versions it has. */
  readonly version: string;
}

/** The source map is left out: it names files by path, and a moved checkout of the same code is the same version. */
export function scriptVersion(bundled: string): string {
  const code = bundled.replace(/\n\/\/# sourceMappingURL=.*$/s, '');
  return createHash('sha256').update(code).digest('hex').slice(0, 16);
}

export async function loadScript(scriptPath: string): Promise<LoadedScript> {
  const abs = path.resolve(scriptPath);
  if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) {
    throw new LogbookError(
      ErrorCodes.SCRIPT_NOT_FOUND,
      `The agent script ${abs} does not exist.`,
      'Check the path (it is resolved from the current directory).',
      { script: abs },
    );
  }
  let code: string;
  try {
    const out = await esbuild.build({
      entryPoints: [abs],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      sourcemap: 'inline',
      sourcesContent: false,
      packages: 'external',
      // Explicit, so a tsconfig `paths` entry for agent-logbook cannot bundle a second copy of the runtime.
      external: ['agent-logbook', 'agent-logbook/*'],
      write: false,
      logLevel: 'silent',
      absWorkingDir: path.dirname(abs),
    });
    code = out.outputFiles[0]?.text ?? '';
  } catch (err) {
    const errors = (err as { errors?: esbuild.Message[] }).errors ?? [];
    const first = errors.map((e) => (e.location ? `${e.location.file}:${e.location.line}:${e.location.column + 1}: ${e.text}` : e.text)).join('; ');
    throw new LogbookError(
      ErrorCodes.SCRIPT_LOAD_FAILED,
      `The agent script ${abs} does not compile: ${first || describe(err)}.`,
      'Fix the error at that location and run again.',
      { script: abs },
    );
  }
  installRuntimeAlias();
  scriptDirs.add(path.dirname(abs));
  process.setSourceMapsEnabled(true);
  const definedBefore = definedAgentCount();
  const m = new Module(abs);
  m.filename = abs;
  m.paths = internals._nodeModulePaths(path.dirname(abs));
  try {
    (m as unknown as { _compile(code: string, file: string): void })._compile(code, abs);
    sourceMapsChanged();
  } catch (err) {
    throw new LogbookError(
      ErrorCodes.SCRIPT_LOAD_FAILED,
      `The agent script ${abs} threw while loading: ${describe(err)}.`,
      'Fix the error (see the stack above) and run again; nothing was journaled.',
      { script: abs, stack: err instanceof Error ? err.stack : undefined },
    );
  }
  const exports = m.exports as { default?: unknown };
  const agent = exports.default ?? exports;
  if (!isAgent(agent)) {
    throw new LogbookError(
      ErrorCodes.NO_DEFAULT_AGENT,
      `The agent script ${abs} has no default export made with defineAgent.`,
      'Add `export default defineAgent({ name, input, run })` to the script.',
      { script: abs },
    );
  }
  const agents = new Map<string, AgentDefinition>(agentsDefinedSince(definedBefore).map((a) => [a.name, a]));
  agents.set(agent.name, agent);
  return { path: abs, agent, agents, version: scriptVersion(code) };
}

/** The agent of a run journaled with this script: its default agent, or one it imports (a child run's). */
export function agentNamed(script: LoadedScript, name: string): AgentDefinition {
  return script.agents.get(name) ?? script.agent;
}
