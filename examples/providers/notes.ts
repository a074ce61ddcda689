// An example notes service: saving a report under a key twice keeps one copy.

import { readState, writeState } from './store';

interface NotesState {
  reports: Array<{ key: string; title: string; words: number }>;
}

const FILE = 'research-notes.json';
const load = (): NotesState => readState<NotesState>(FILE, { reports: [] });

export const notes = {
  save(req: { title: string; text: string; idempotencyKey: string }): { noteId: string } {
    const state = load();
    const i = state.reports.findIndex((r) => r.key === req.idempotencyKey);
    if (i >= 0) return { noteId: `note-${i + 1}` };
    state.reports.push({ key: req.idempotencyKey, title: req.title, words: req.text.split(/\s+/).length });
    writeState(FILE, state);
    return { noteId: `note-${state.reports.length}` };
  },

  record(): NotesState {
    return load();
  },
};
