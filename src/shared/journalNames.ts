// The one name of the journal's location in every surface (flag, variable, setting, launch attribute), and the old
// names that still work as deprecated aliases, each warning once per process.

/** The journal's location is called `journal` everywhere a person writes it. */
export const JOURNAL = {
  flag: '--journal',
  option: 'journal',
  env: 'LOGBOOK_JOURNAL',
  setting: 'journal',
  launch: 'journal',
} as const;

/** The names of 0.x, still read, each with a warning the first time a process meets it. */
export const LEGACY_JOURNAL = {
  flag: '--db',
  env: 'LOGBOOK_DB',
  setting: 'databasePath',
  launch: 'database',
} as const;

export type Warn = (line: string) => void;

const warned = new Set<string>();

/** Says `line` once per process under `key`: a deprecated name in a loop (a worker, a watch) must not flood the log. */
export function warnOnce(key: string, line: string, warn: Warn): void {
  if (warned.has(key)) return;
  warned.add(key);
  warn(line);
}

/** The sentence that says an old name was used and what to write instead (it ends with the remedy). */
export function deprecationLine(old: string, current: string): string {
  return `warning: ${old} is deprecated and will be removed in 1.0; it means the same as ${current}. Write ${current} instead.`;
}

/** The journal the environment names, and whether under the deprecated $LOGBOOK_DB; says nothing. */
export function journalEnvEntry(env: NodeJS.ProcessEnv): { readonly value: string; readonly deprecated: boolean } | undefined {
  const current = env[JOURNAL.env];
  if (current !== undefined && current !== '') return { value: current, deprecated: false };
  const old = env[LEGACY_JOURNAL.env];
  return old === undefined || old === '' ? undefined : { value: old, deprecated: true };
}

/** The journal named by the environment: $LOGBOOK_JOURNAL, else the deprecated $LOGBOOK_DB (warned once). */
export function journalFromEnv(env: NodeJS.ProcessEnv, warn: Warn): string | undefined {
  const entry = journalEnvEntry(env);
  if (entry?.deprecated) warnOnce('env', deprecationLine(`$${LEGACY_JOURNAL.env}`, `$${JOURNAL.env}`), warn);
  return entry?.value;
}

/** Both variables a child must not inherit when it is given a journal of its own. */
export const JOURNAL_ENV_NAMES: readonly string[] = [JOURNAL.env, LEGACY_JOURNAL.env];

/**
 * `argv` with the deprecated `--db F` / `--db=F` spelled `--journal` (warned once), so every command's parser knows
 * one option. Only flags before a `--` are rewritten: what follows belongs to the script.
 */
export function currentJournalFlag(argv: readonly string[], warn: Warn): string[] {
  const end = argv.indexOf('--');
  const out = argv.map((a, i) => {
    if (end >= 0 && i > end) return a;
    if (a === LEGACY_JOURNAL.flag) return JOURNAL.flag;
    if (a.startsWith(`${LEGACY_JOURNAL.flag}=`)) return `${JOURNAL.flag}=${a.slice(LEGACY_JOURNAL.flag.length + 1)}`;
    return a;
  });
  if (out.some((a, i) => a !== argv[i])) warnOnce('flag', deprecationLine(LEGACY_JOURNAL.flag, JOURNAL.flag), warn);
  return out;
}

/**
 * How many times `argv` (after currentJournalFlag) names the journal before a `--`: more than once is ambiguous
 * (`--journal a --db b` would quietly take b), so the CLI refuses it.
 */
export function journalFlagCount(argv: readonly string[]): number {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).filter((a) => a === JOURNAL.flag || a.startsWith(`${JOURNAL.flag}=`)).length;
}

/** The value of `--journal F` / `--journal=F` (or the deprecated `--db`) in `argv`, for masking before parsing. */
export function journalFlagValue(argv: readonly string[]): string | undefined {
  for (const flag of [JOURNAL.flag, LEGACY_JOURNAL.flag]) {
    const i = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
    if (i >= 0) return argv[i] === flag ? argv[i + 1] : argv[i]?.slice(flag.length + 1);
  }
  return undefined;
}
