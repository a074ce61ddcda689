// Run timeline webview: draws one lane group per attempt (steps, actions, marks) from the data the extension posts.
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const chart = /** @type {HTMLElement} */ (document.getElementById('chart'));
  const title = /** @type {HTMLElement} */ (document.getElementById('title'));
  const foot = /** @type {HTMLElement} */ (document.getElementById('foot'));
  const legend = /** @type {HTMLElement} */ (document.getElementById('legend'));

  const STATUS_CLASS = {
    completed: 'ok', committed: 'ok', verified: 'ok', 're-executed': 'ok', 'decided happened': 'ok',
    replayed: 'muted', 'in-progress': 'live', 'in-flight': 'live', interrupted: 'crash', 'in-doubt': 'doubt',
    'compensation in doubt': 'doubt', failed: 'bad', rejected: 'bad', 'awaiting-approval': 'wait',
    compensating: 'undo', compensated: 'undo', 'compensation-failed': 'bad',
  };
  const LEGEND = [['ok', 'done'], ['live', 'in progress'], ['doubt', 'in doubt'], ['crash', 'interrupted'], ['bad', 'failed'], ['wait', 'awaiting approval'], ['undo', 'compensation']];

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmt(ms) {
    if (ms < 1000) return `${ms} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
  }

  for (const [cls, word] of LEGEND) {
    const l = el('span', 'legend-item');
    l.append(el('span', `swatch ${cls}`), el('span', '', word));
    legend.append(l);
  }

  /** Greedy lanes so overlapping actions (Promise.all) do not hide each other. */
  function lanes(items, max) {
    const ends = [];
    return items.map((it) => {
      const end = it.end ?? it.start;
      let lane = ends.findIndex((e) => e <= it.start);
      if (lane < 0) lane = ends.length < max ? ends.length : ends.indexOf(Math.min(...ends));
      ends[lane] = end;
      return lane;
    });
  }

  function render(data) {
    const run = data.run;
    title.textContent = `${run.agent} · ${run.id} · ${run.status} · ${data.attempts.length} attempt${data.attempts.length === 1 ? '' : 's'}`;
    chart.replaceChildren();
    for (const a of data.attempts) {
      const items = data.items.filter((i) => i.attempt === a.attempt);
      const marks = data.marks.filter((m) => m.attempt === a.attempt);
      const end = Math.max(a.end, ...items.map((i) => i.end ?? i.start));
      // Positions come laid out by the reader: quiet stretches (a debugger pause) are compressed to marked gaps.
      const pct = (v) => `${(v ?? 0).toFixed(3)}%`;
      const group = el('section', `attempt outcome-${a.outcome}`);
      const head = el('div', 'attempt-head');
      head.append(el('strong', '', `Attempt ${a.attempt}`), el('span', 'muted-text', ` ${new Date(a.start).toLocaleTimeString()} · ${fmt(end - a.start)} · ${a.outcome}`));
      group.append(head);
      const steps = items.filter((i) => i.kind === 'step');
      const actions = items.filter((i) => i.kind === 'action');
      const actionLanes = lanes(actions, 6);
      const nActionLanes = Math.max(1, ...actionLanes.map((l) => l + 1));
      const track = el('div', 'track');
      track.style.height = `${24 + nActionLanes * 20 + 24}px`;
      const add = (it, top) => {
        const bar = el('button', `bar ${it.kind} ${STATUS_CLASS[it.status] ?? 'ok'}`);
        bar.style.left = pct(it.x0);
        bar.style.width = `max(12px, ${pct((it.x1 ?? 0) - (it.x0 ?? 0))})`;
        bar.style.top = `${top}px`;
        bar.title = `${it.kind === 'step' ? 'step' : 'action'} ${it.label} — ${it.status}${it.end !== null ? ` (${fmt(it.end - it.start)})` : ''}`;
        if (it.detail) bar.title += `\n${it.detail}`;
        bar.textContent = it.label;
        bar.addEventListener('click', () => {
          const isUndo = it.kind === 'action' && it.id.startsWith('undo ');
          vscode.postMessage({ type: 'reveal', runId: run.id, stepIdx: it.stepIdx, ...(it.kind === 'action' ? { actionId: isUndo ? it.id.slice(5) : it.id } : {}) });
        });
        track.append(bar);
      };
      steps.forEach((s) => add(s, 2));
      actions.forEach((it, i) => add(it, 24 + (actionLanes[i] ?? 0) * 20));
      for (const m of marks) {
        const mark = el('div', `mark ${m.kind}`);
        mark.style.left = pct(m.x);
        mark.title = m.label;
        const label = el('span', 'mark-label', m.kind === 'crash' ? '✕ crash' : m.kind === 'resume' ? '▶ resume' : m.kind === 'reconciled' ? '◆' : m.kind === 'decided' ? '◆' : '');
        mark.append(label);
        track.append(mark);
      }
      for (const s of a.scale.segments.filter((g) => g.gap)) {
        const gap = el('div', 'gap');
        gap.style.left = pct(s.x0);
        gap.style.width = pct(s.x1 - s.x0);
        gap.title = s.paused
          ? `${fmt(s.end - s.start)} paused in the debugger: not to scale`
          : `${fmt(s.end - s.start)} with nothing journaled (a pause in a debugger, or a slow effect): not to scale`;
        gap.append(el('span', 'gap-label', `${s.paused ? '‖' : '⫽'} ${fmt(s.end - s.start)}${s.paused ? ' paused' : ''}`));
        track.append(gap);
      }
      group.append(track);
      const axis = el('div', 'axis');
      for (const t of a.scale.ticks) {
        const tick = el('span', 'tick', t.label);
        tick.style.left = pct(t.x);
        axis.append(tick);
      }
      group.append(axis);
      chart.append(group);
    }
    const notes = [];
    if (data.truncated) notes.push('This run is large: the timeline shows its first items only.');
    const doubt = data.items.filter((i) => i.status === 'in-doubt').length;
    if (doubt) notes.push(`${doubt} action(s) were in doubt when an attempt stopped.`);
    foot.textContent = notes.join(' ');
  }

  window.addEventListener('message', (e) => {
    if (e.data && e.data.type === 'timeline') render(e.data.data);
  });
  vscode.postMessage({ type: 'ready' });
})();
