// Terminal presentation every command shares: colour only on a TTY (and never with NO_COLOR), aligned tables, and the
// shape of a command module (its output lines and how it runs), so that no folder but cli/ depends on the CLI.

const useColor = (): boolean => process.stdout.isTTY === true && !process.env.NO_COLOR;

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1 } as const;
export type Color = keyof typeof CODES;

export function paint(color: Color, text: string): string {
  return useColor() ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text;
}

// eslint-disable-next-line no-control-regex -- stripping ANSI colour codes is the point
const visible = (s: string): number => s.replace(/\u001b\[[0-9;]*m/g, '').length;

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ''))));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat((widths[i] ?? 0) - visible(c))))
      .join('  ')
      .trimEnd();
  return [paint('bold', line(headers)), ...rows.map(line)].join('\n');
}

export interface Io {
  out(line: string): void;
  err(line: string): void;
}

/** A command that lives in its own module (plan, rehearse, delete, fork, worker); cli/commandModules.ts lists them. */
export interface CommandModule {
  readonly name: string;
  readonly usage: string;
  run(args: string[], io: Io): Promise<number>;
}
