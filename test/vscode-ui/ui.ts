// The extension host's side of the UI tests: asks scripts/test-ui.mjs to press keys and click on the real workbench.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { until } from '../vscode/helpers';

const DIR = process.env.LOGBOOK_UI_DIR ?? '';
let seq = 0;

export interface Target {
  readonly selector?: string;
  readonly role?: string;
  /** A regex source matched against the accessible name. */
  readonly name?: string;
  readonly hasText?: string;
  /** How long a click or hover waits for its target to be visible (20 s unless told). */
  readonly timeout?: number;
}

async function ask<T>(q: Record<string, unknown>): Promise<T> {
  if (!DIR) throw new Error('LOGBOOK_UI_DIR is not set: run the UI suites with `node scripts/test-ui.mjs`.');
  const id = `${process.pid}-${++seq}`;
  const req = path.join(DIR, `req-${id}.json`);
  fs.writeFileSync(`${req}.tmp`, JSON.stringify(q));
  fs.renameSync(`${req}.tmp`, req);
  const res = path.join(DIR, `res-${id}.json`);
  await until(`the UI driver to do ${JSON.stringify(q)}`, () => fs.existsSync(res), 60_000);
  const a = JSON.parse(fs.readFileSync(res, 'utf8')) as { ok: boolean; value: T; error?: string };
  fs.rmSync(res);
  if (!a.ok) throw new Error(`UI request ${JSON.stringify(q)} failed: ${a.error ?? ''}`);
  return a.value;
}

export const ui = {
  press: (...keys: string[]): Promise<null> => ask({ op: 'press', keys }),
  type: (text: string): Promise<null> => ask({ op: 'type', text }),
  click: (t: Target, button: 'left' | 'right' = 'left'): Promise<null> => ask({ op: 'click', ...t, button }),
  hover: (t: Target): Promise<null> => ask({ op: 'hover', ...t }),
  /** Visible matches' text and aria-label, now. */
  texts: (t: Target): Promise<Array<{ text: string; label: string }>> => ask({ op: 'texts', ...t }),
  screenshot: (file: string): Promise<null> => ask({ op: 'screenshot', path: file }),
  /** Waits until some visible match's text or label matches `re`. */
  async waitFor(t: Target, re: RegExp, what: string, ms = 30_000): Promise<{ text: string; label: string }> {
    return until(what, async () => (await ui.texts(t)).find((x) => re.test(x.text) || re.test(x.label)), ms);
  },
  /**
   * Presses an action of a list row (its Run or Debug button, say), which shows only while the row is hovered. The list
   * can move under the mouse (a row added above it), so the hover is checked to have landed on the row that holds
   * `text` before the action inside that row is clicked, and tried again if it did not.
   */
  async rowAction(list: string, text: string, action: string): Promise<void> {
    const row = `${list} .monaco-list-row:has-text(${JSON.stringify(text)})`;
    for (let tries = 1; ; tries++) {
      await ui.hover({ selector: row });
      const hovered = await ui.texts({ selector: `${list} .monaco-list-row:hover` });
      if (hovered.some((h) => h.text.includes(text))) {
        const pressed = await ui.click({ selector: `${row}:hover .action-label[aria-label^=${JSON.stringify(action)}]`, timeout: 3_000 }).then(
          () => true,
          (err: Error) => (tries >= 5 ? Promise.reject(err) : false),
        );
        if (pressed) return;
      } else if (tries >= 5) {
        throw new Error(`the mouse never stayed on the row "${text}" (it hovered ${JSON.stringify(hovered.map((h) => h.text))})`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  },
  /** Runs a command the way a person does: F1, its title, Enter. */
  async palette(title: string): Promise<void> {
    await ui.press('F1');
    await ui.waitFor({ selector: '.quick-input-widget input' }, /.*/, 'the command palette');
    await ui.type(title);
    await ui.waitFor({ selector: '.quick-input-list .monaco-list-row' }, new RegExp(title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), `"${title}" in the palette`);
    await ui.press('Enter');
  },
};
