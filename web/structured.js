// ragd UI — structured parts of an answer on the chat page (docs/ui.md "Graph and record answers"):
//   - a graph answer's sources as entity → relation rows, the record (cost) table and each one's section path
//     (the sources' metadata: kind, entity_type, relations, columns, rows — docs/graph.md);
//   - the graph steps in the debug panel (search_info.graph);
//   - the filter a collection's schema read out of the question as removable chips (search_info.conditions;
//     removing one asks again with drop_filters — docs/metadata.md).
// Everything from documents and questions is inserted as text (ragd.el), never as HTML.
'use strict';

const ragdStructured = (() => {
  const { el, t } = ragd;

  const kindOf = (s) => (s && s.metadata && s.metadata.kind) || '';

  /** isGraph reports whether an answer's sources come from a collection's graph. */
  function isGraph(sources) {
    return (sources || []).some((s) => ['entity', 'records', 'passage'].includes(kindOf(s)) && /^graph:/.test(s.source || ''));
  }

  /** table builds a table of text cells; numeric-looking cells are right-aligned. */
  function table(cls, head, rows) {
    const num = (v) => /^-?[\d,]+(?:\.\d+)?$/.test(String(v).trim());
    return el('div', { class: 'structured-scroll' }, el('table', { class: cls },
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', {}, String(h))))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', num(c) ? { class: 'num' } : {}, String(c ?? ''))))))));
  }

  function path(s) {
    return s.section ? el('p', { class: 'section-path', title: t('graph.sectionPath') }, s.section) : null;
  }

  /**
   * graphSources shows the cited graph sources of an answer (null when it is not a graph answer): each entity
   * with its type and section path and its relations as rows entity → relation → other; the record table;
   * the source passages by their path. label(n) is the number an answer's chip shows for source n.
   */
  function graphSources(sources, label) {
    if (!isGraph(sources)) return null;
    const items = [];
    for (const s of sources) {
      const n = `[${label(s.n)}]`;
      const m = s.metadata || {};
      if (m.kind === 'entity') {
        const rels = Array.isArray(m.relations) ? m.relations : [];
        items.push(el('section', { class: 'graph-entity', 'data-n': s.n },
          el('h4', {}, el('span', { class: 'graph-n' }, n), ' ', s.title || '', ' ', el('span', { class: 'badge' }, m.entity_type || '')),
          path(s),
          rels.length ? table('relation-rows', [t('graph.entity'), t('graph.relation'), '→'],
            rels.map((r) => [s.title, r.label, r.text])) : null));
      } else if (m.kind === 'records' && Array.isArray(m.columns) && Array.isArray(m.rows)) {
        items.push(el('section', { class: 'graph-records', 'data-n': s.n },
          el('h4', {}, el('span', { class: 'graph-n' }, n), ' ', s.title || ''),
          path(s),
          table('record-table', m.columns, m.rows)));
      } else if (m.kind === 'passage') {
        items.push(el('section', { class: 'graph-passage', 'data-n': s.n },
          el('h4', {}, el('span', { class: 'graph-n' }, n), ' ', s.section || s.title || '')));
      }
    }
    if (!items.length) return null;
    return el('details', { class: 'graph-sources', open: true },
      el('summary', {}, t('graph.sources', { n: items.length })), ...items);
  }

  /** graphSteps lists what graph retrieval did, step by step (null for an answer from documents). */
  function graphSteps(info) {
    const g = info && info.graph;
    if (!g) return null;
    const extra = [];
    if (g.intents && g.intents.length) extra.push(t('graph.intent', { v: g.intents.join(', ') }));
    if (g.spec) extra.push(t('graph.spec', { v: g.spec }));
    const step = (name, text) => el('li', { 'data-step': name }, text);
    return el('ol', { class: 'graph-steps', 'aria-label': t('graph.steps') },
      step('entities', t('graph.entities', { n: g.entities_found ?? 0 })),
      step('relations', t('graph.relations', { n: g.relations_expanded ?? 0 })),
      step('rows', [t('graph.rows', { n: g.rows_matched ?? 0 }), ...extra].join(' · ')),
      step('passages', t('graph.passages', { n: g.chunks_retrieved ?? 0 })),
      step('latency', t('graph.latency', { ms: typeof g.latency_ms === 'number' ? g.latency_ms.toFixed(1) : '—' })));
  }

  /**
   * filterChips shows the conditions read out of the question (null when there are none). Each applied one
   * has ✕: onChange(drop) asks again with drop — the fields dropped so far plus its field; a dropped one is
   * struck through with ↺, which asks again with it applied.
   */
  function filterChips(info, onChange) {
    const conds = (info && info.conditions) || [];
    if (!conds.length) return null;
    const dropped = [...new Set(conds.filter((c) => c.dropped).map((c) => c.field))];
    const chips = conds.map((c) => {
      const button = c.dropped
        ? el('button', { type: 'button', class: 'chip-action', 'aria-label': t('chip.apply', { text: c.text }), title: t('chip.applyTitle') }, '↺')
        : el('button', { type: 'button', class: 'chip-action', 'aria-label': t('chip.remove', { text: c.text }), title: t('chip.removeTitle') }, '✕');
      button.addEventListener('click', () => onChange(c.dropped ? dropped.filter((f) => f !== c.field) : [...dropped, c.field]));
      return el('li', { class: 'chip', 'data-field': c.field, 'data-dropped': c.dropped ? 'true' : 'false' },
        el('span', { class: 'chip-text' }, c.text || `${c.label || c.field}`), button);
    });
    return el('div', { class: 'filter-chips' },
      el('span', { class: 'hint' }, t('chip.filter')), el('ul', {}, ...chips));
  }

  return { graphSources, graphSteps, filterChips };
})();
