// Run timeline webview: draws one lane group per attempt (steps, actions, marks) from the data the extension posts.
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const chart = /** @type {HTMLElement} */ (document.getElementById('chart'));
  const title = /** @type {HTMLElement} */ (document.getElementById('title'));
  const foot = /** @type {HTMLElement} */ (document.getElementById('foot'));
  const legend = /** @type {HTMLElement} */ (document.getElementById('legend'));
  const tools = /** @type {HTMLElement} */ (document.getElementById('tools'));

  const STATUS_CLASS = {
    completed: 'ok', committed: 'ok', verified: 'ok', 're-executed': 'ok', 'decided happened': 'ok',
    replayed: 'muted', 'in-progress': 'live', 'in-flight': 'live', interrupted: 'crash', 'in-doubt': 'doubt',
    'compensation in doubt': 'doubt', failed: 'bad', rejected: 'bad', 'awaiting-approval': 'wait',
    compensating: 'undo', compensated: 'undo', 'compensation-failed': 'bad',
  };
  const LEGEND = [['ok', 'done'], ['live', 'in progress'], ['doubt', 'in doubt'], ['crash', 'interrupted'], ['bad', 'failed'], ['wait', 'awaiting approval'], ['undo', 'compensation']];
  /** Every bar is at least wide enough for its whole label (up to MAX_LABEL_PX), and bars in a row keep LANE_GAP apart. */
  const MIN_BAR_PX = 14;
  const MAX_LABEL_PX = 420;
  const LANE_GAP = 4;
  const ROW_PX = 22;
  /** A collapsed quiet stretch (a debugger pause, a slow effect): a narrow marked strip whatever its length. */
  const COLLAPSED_GAP_PX = 18;
  const ZOOMS = [0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8];

  /** What the person chose; undefined collapse means "per attempt: collapsed when quiet time dominates". */
  const view = /** @type {{ zoom: number, collapse: boolean | undefined, data: any }} */ ({ zoom: 1, collapse: undefined, data: undefined });
  const saved = vscode.getState();
  if (saved && typeof saved.zoom === 'number') view.zoom = saved.zoom;
  if (saved && typeof saved.collapse === 'boolean') view.collapse = saved.collapse;

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

  // ---- toolbar: zoom and collapsed pauses ----------------------------------------------------------------------
  const zoomOut = el('button', 'tool', '−');
  zoomOut.title = 'Zoom out (Ctrl+wheel)';
  const zoomLabel = el('span', 'zoom-label', '100%');
  const zoomIn = el('button', 'tool', '+');
  zoomIn.title = 'Zoom in (Ctrl+wheel)';
  const zoomFit = el('button', 'tool', 'Fit');
  zoomFit.title = 'Fit the width of the panel';
  const collapseBox = /** @type {HTMLInputElement} */ (el('input'));
  collapseBox.type = 'checkbox';
  collapseBox.id = 'collapse';
  const collapseLabel = /** @type {HTMLLabelElement} */ (el('label', 'tool-label', ' Collapse pauses'));
  collapseLabel.htmlFor = 'collapse';
  collapseLabel.prepend(collapseBox);
  collapseLabel.title = 'Draw quiet stretches (debugger pauses, slow effects) as narrow strips instead of to scale';
  tools.append(zoomOut, zoomLabel, zoomIn, zoomFit, collapseLabel);

  function setZoom(z) {
    view.zoom = Math.min(ZOOMS[ZOOMS.length - 1], Math.max(ZOOMS[0], z));
    remember();
    if (view.data) render(view.data);
  }
  const step = (dir) => {
    const i = ZOOMS.findIndex((z) => z >= view.zoom - 1e-9);
    setZoom(ZOOMS[Math.min(ZOOMS.length - 1, Math.max(0, (i < 0 ? ZOOMS.length - 1 : i) + dir))]);
  };
  zoomIn.addEventListener('click', () => step(1));
  zoomOut.addEventListener('click', () => step(-1));
  zoomFit.addEventListener('click', () => setZoom(1));
  collapseBox.addEventListener('change', () => {
    view.collapse = collapseBox.checked;
    remember();
    if (view.data) render(view.data);
  });
  chart.addEventListener(
    'wheel',
    (e) => {
      if (!e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      step(e.deltaY < 0 ? 1 : -1);
    },
    { passive: false },
  );
  let resizeTimer;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => view.data && render(view.data), 100);
  });

  function remember() {
    vscode.setState({ zoom: view.zoom, collapse: view.collapse });
  }

  // ---- measuring labels ----------------------------------------------------------------------------------------
  let ctx;
  function textWidth(text) {
    if (!ctx) {
      const probe = el('button', 'bar action');
      probe.style.visibility = 'hidden';
      chart.append(probe);
      const font = getComputedStyle(probe).font;
      probe.remove();
      ctx = document.createElement('canvas').getContext('2d');
      if (ctx) ctx.font = font;
    }
    return ctx ? ctx.measureText(text).width : text.length * 7;
  }

  // ---- the axis: time to pixels, quiet stretches collapsed or to scale -------------------------------------------
  /** The attempt's axis: segments in pixels, and px(t). Busy time shares what collapsed gaps leave, in proportion. */
  function axisOf(a, width, collapse) {
    const segs = a.scale.segments;
    const gapMs = segs.filter((s) => s.gap).reduce((n, s) => n + (s.end - s.start), 0);
    const busyMs = Math.max(1, segs.filter((s) => !s.gap).reduce((n, s) => n + (s.end - s.start), 0));
    const nGaps = segs.filter((s) => s.gap).length;
    const perMs = collapse ? Math.max(1, width - nGaps * COLLAPSED_GAP_PX) / busyMs : width / Math.max(1, busyMs + gapMs);
    let x = 0;
    const laid = segs.map((s) => {
      const w = s.gap && collapse ? COLLAPSED_GAP_PX : (s.end - s.start) * perMs;
      const out = { ...s, px0: x, px1: x + w };
      x += w;
      return out;
    });
    const px = (t) => {
      for (const s of laid) {
        if (t <= s.end) return t <= s.start ? s.px0 : s.px0 + ((t - s.start) / Math.max(1, s.end - s.start)) * (s.px1 - s.px0);
      }
      return laid.length ? laid[laid.length - 1].px1 : 0;
    };
    return { laid, px, width: x, perMs };
  }

  /** 1, 2 or 5 times a power of ten: ticks about every 90 px of busy time. */
  function tickStep(perMs) {
    const raw = Math.max(1, 90 / Math.max(1e-9, perMs));
    const p = 10 ** Math.floor(Math.log10(raw));
    return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
  }

  function tickLabel(k, stepMs) {
    if (k === 0) return '0';
    if (k < 1000) return `+${Math.round(k)} ms`;
    const d = stepMs >= 1000 ? 0 : Math.min(3, Math.ceil(-Math.log10(stepMs / 1000)));
    if (k < 60000) return `+${(k / 1000).toFixed(d)} s`;
    const min = Math.floor(k / 60000);
    return `+${min} min ${((k - min * 60000) / 1000).toFixed(d)} s`;
  }

  /** Rows so that no two bars share a pixel: each bar in the first row whose last bar ends before it begins. */
  function rows(bars) {
    const ends = [];
    for (const b of bars) {
      let row = ends.findIndex((e) => e + LANE_GAP <= b.x);
      if (row < 0) row = ends.length;
      ends[row] = b.x + b.w;
      b.row = row;
    }
    return ends.length;
  }

  function barsOf(items, px) {
    return items.map((it) => {
      const natural = px(it.end ?? it.start) - px(it.start);
      const label = Math.min(MAX_LABEL_PX, Math.ceil(textWidth(it.label)) + 10);
      return { it, x: px(it.start), w: Math.max(MIN_BAR_PX, natural, label), row: 0 };
    });
  }

  function render(data) {
    view.data = data;
    const run = data.run;
    title.textContent = `${run.agent} · ${run.id} · ${run.status} · ${data.attempts.length} attempt${data.attempts.length === 1 ? '' : 's'}`;
    zoomLabel.textContent = `${Math.round(view.zoom * 100)}%`;
    const scrollLeft = new Map([...chart.querySelectorAll('.scroller')].map((s) => [s.getAttribute('data-attempt'), s.scrollLeft]));
    chart.replaceChildren();
    const width = Math.max(240, (chart.clientWidth || 800) - 8) * view.zoom;
    let anyCollapsed = false;
    for (const a of data.attempts) {
      const items = data.items.filter((i) => i.attempt === a.attempt);
      const marks = data.marks.filter((m) => m.attempt === a.attempt);
      const end = Math.max(a.end, ...items.map((i) => i.end ?? i.start));
      const gapMs = a.scale.segments.filter((s) => s.gap).reduce((n, s) => n + (s.end - s.start), 0);
      // Collapsed by default when the attempt was mostly quiet (paused at breakpoints): else it is mostly hatching.
      const collapse = view.collapse ?? gapMs > Math.max(1, end - a.start) / 2;
      anyCollapsed ||= collapse;
      const axis = axisOf(a, width, collapse);

      const group = el('section', `attempt outcome-${a.outcome}`);
      const head = el('div', 'attempt-head');
      const paused = a.scale.segments.filter((s) => s.gap && s.paused).reduce((n, s) => n + (s.end - s.start), 0);
      head.append(
        el('strong', '', `Attempt ${a.attempt}`),
        el('span', 'muted-text', ` ${new Date(a.start).toLocaleTimeString()} · ${fmt(end - a.start)} · ${a.outcome}${paused ? ` · ${fmt(paused)} paused in the debugger` : ''}`),
      );
      group.append(head);

      const steps = barsOf(items.filter((i) => i.kind === 'step'), axis.px);
      const actions = barsOf(items.filter((i) => i.kind === 'action'), axis.px);
      const stepRows = rows(steps);
      const actionRows = rows(actions);
      const marksTop = (stepRows + actionRows) * ROW_PX + 4;
      const contentWidth = Math.max(axis.width, ...[...steps, ...actions].map((b) => b.x + b.w)) + 8;

      const scroller = el('div', 'scroller');
      scroller.setAttribute('data-attempt', String(a.attempt));
      const track = el('div', 'track');
      track.style.width = `${contentWidth}px`;
      track.style.height = `${marksTop + 18}px`;
      // Quiet stretches first: drawn under the bars, never over one, and never in the way of a click.
      for (const s of axis.laid.filter((g) => g.gap)) {
        const gap = el('div', `gap${s.paused ? ' paused' : ''}${collapse ? ' collapsed' : ''}`);
        gap.style.left = `${s.px0}px`;
        gap.style.width = `${Math.max(2, s.px1 - s.px0)}px`;
        track.append(gap);
      }
      const add = (b, top) => {
        const it = b.it;
        const bar = el('button', `bar ${it.kind} ${STATUS_CLASS[it.status] ?? 'ok'}`);
        bar.style.left = `${b.x}px`;
        bar.style.width = `${b.w}px`;
        bar.style.top = `${top}px`;
        bar.title = `${it.kind === 'step' ? 'step' : 'action'} ${it.label} — ${it.status}${it.end !== null ? ` (${fmt(it.end - it.start)})` : ''}`;
        if (it.detail) bar.title += `\n${it.detail}`;
        bar.textContent = it.label;
        bar.setAttribute('data-key', `${it.attempt}:${it.kind}:${it.id}`);
        bar.addEventListener('click', () => {
          const isUndo = it.kind === 'action' && it.id.startsWith('undo ');
          vscode.postMessage({ type: 'reveal', runId: run.id, stepIdx: it.stepIdx, ...(it.kind === 'action' ? { actionId: isUndo ? it.id.slice(5) : it.id } : {}) });
        });
        track.append(bar);
      };
      steps.forEach((b) => add(b, 2 + b.row * ROW_PX));
      actions.forEach((b) => add(b, 2 + (stepRows + b.row) * ROW_PX));
      for (const m of marks) {
        const mark = el('div', `mark ${m.kind}`);
        mark.style.left = `${axis.px(m.at)}px`;
        const text = m.kind === 'crash' ? '✕ crash' : m.kind === 'resume' ? '▶ resume' : m.kind === 'reconciled' || m.kind === 'decided' ? '◆' : '';
        const label = el('span', 'mark-label', text);
        label.style.top = `${marksTop}px`;
        label.title = m.label;
        mark.append(label);
        track.append(mark);
      }
      scroller.append(track);

      // The axis below the track: ticks over busy time, and each quiet stretch said in words where it is.
      const ruler = el('div', 'axis');
      ruler.style.width = `${contentWidth}px`;
      const taken = [];
      for (const s of axis.laid.filter((g) => g.gap)) {
        const words = `${s.paused ? '‖' : '⫽'} ${fmt(s.end - s.start)}${s.paused ? ' paused' : ''}`;
        const g = el('span', `gap-label${s.paused ? ' paused' : ''}`, words);
        g.style.left = `${s.px0}px`;
        g.title = s.paused
          ? `${fmt(s.end - s.start)} paused in the debugger: ${collapse ? 'collapsed' : 'to scale'}`
          : `${fmt(s.end - s.start)} with nothing journaled (a pause in a debugger, or a slow effect): ${collapse ? 'collapsed' : 'to scale'}`;
        ruler.append(g);
        taken.push([s.px0, s.px0 + textWidth(words) + 8]);
      }
      const stepMs = tickStep(axis.perMs);
      for (const s of axis.laid.filter((g) => !g.gap)) {
        for (let k = Math.ceil((s.start - a.start) / stepMs) * stepMs; a.start + k <= s.end; k += stepMs) {
          const x = axis.px(a.start + k);
          const label = tickLabel(k, stepMs);
          const span = [x - textWidth(label) / 2 - 4, x + textWidth(label) / 2 + 4];
          if (taken.some(([l, r]) => span[0] < r && span[1] > l)) continue;
          taken.push(span);
          const tick = el('span', 'tick', label);
          tick.style.left = `${x}px`;
          ruler.append(tick);
        }
      }
      scroller.append(ruler);
      group.append(scroller);
      chart.append(group);
      const left = scrollLeft.get(String(a.attempt));
      if (left) scroller.scrollLeft = left;
    }
    collapseBox.checked = view.collapse ?? anyCollapsed;
    const notes = [];
    if (data.truncated) notes.push('This run is large: the timeline shows its first items only.');
    const doubt = data.items.filter((i) => i.status === 'in-doubt').length;
    if (doubt) notes.push(`${doubt} action(s) were in doubt when an attempt stopped.`);
    foot.textContent = notes.join(' ');
  }

  // ---- what the extension's tests ask of the drawing --------------------------------------------------------------
  /** Scrolls a bar into view and names what a click at its centre would hit. */
  function centreOf(bar) {
    bar.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    const r = bar.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return { r, hit };
  }

  function probe() {
    const bars = [...chart.querySelectorAll('.bar')];
    const rects = new Map(bars.map((b) => [b, b.getBoundingClientRect()]));
    return bars.map((bar) => {
      const { hit } = centreOf(bar);
      const r = rects.get(bar);
      const overlaps = bars
        .filter((o) => o !== bar && o.parentElement === bar.parentElement)
        .filter((o) => {
          const q = rects.get(o);
          return q.left < r.right - 0.5 && q.right > r.left + 0.5 && q.top < r.bottom - 0.5 && q.bottom > r.top + 0.5;
        })
        .map((o) => o.getAttribute('data-key'));
      return {
        key: bar.getAttribute('data-key'),
        text: bar.textContent,
        width: r.width,
        labelFits: bar.scrollWidth <= bar.clientWidth + 1,
        onTop: hit === bar || bar.contains(hit),
        overlaps,
      };
    });
  }

  window.addEventListener('message', (e) => {
    const m = e.data;
    if (!m) return;
    if (m.type === 'timeline') render(m.data);
    else if (m.type === 'probe') vscode.postMessage({ type: 'probed', id: m.id, bars: probe(), collapsed: collapseBox.checked, zoom: view.zoom });
    else if (m.type === 'click') {
      // A click where a person would click: the centre of the bar, on whatever is drawn there.
      const bar = [...chart.querySelectorAll('.bar')].find((b) => b.getAttribute('data-key') === m.key);
      const hit = bar ? centreOf(bar).hit : null;
      if (hit instanceof HTMLElement) hit.click();
      vscode.postMessage({ type: 'clicked', id: m.id, onBar: !!bar && (hit === bar || bar.contains(hit)) });
    } else if (m.type === 'zoom' && typeof m.zoom === 'number') setZoom(m.zoom);
  });
  vscode.postMessage({ type: 'ready' });
})();
