// ragd UI — the search playground (/search): runs POST /api/search with a query, a collection, filters and
// k, and shows each hit with every score that produced its rank (vector, keyword, fused, re-ranking inputs,
// final). The form is mirrored in the address (?q=…&k=…), so a search can be reloaded and shared.
'use strict';

(() => {
  const { el, api, ApiError, t } = ragd;
  const $ = (id) => document.getElementById(id);
  const OPS = [['eq', '='], ['ne', '≠'], ['in', t('search.anyOf')], ['gt', '>'], ['gte', '≥'], ['lt', '<'], ['lte', '≤']];

  function errText(e) { return e instanceof ApiError ? e.human() : String(e && e.message || e); }

  // ---- metadata conditions ----
  function addCondition(key = '', op = 'eq', value = '') {
    const k = el('input', { class: 'cond-key', placeholder: t('search.field'), 'aria-label': t('search.fieldAria'), value: key });
    const o = el('select', { class: 'cond-op', 'aria-label': t('search.comparison') }, ...OPS.map(([v, label]) => el('option', { value: v }, label)));
    o.value = op;
    const v = el('input', { class: 'cond-value', placeholder: t('search.valuePlaceholder'), 'aria-label': t('search.value'), value });
    const rm = el('button', { type: 'button', class: 'secondary', 'aria-label': t('search.removeCondition') }, '✕');
    const row = el('div', { class: 'meta-cond' }, k, o, v, rm);
    rm.addEventListener('click', () => row.remove());
    $('pg-meta').append(row);
    return row;
  }

  /** typed reads a metadata value as the API compares it: numbers and booleans as such, else text. */
  function typed(s) {
    s = s.trim();
    if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
    if (s === 'true' || s === 'false') return s === 'true';
    return s;
  }

  function conditions() {
    const out = [];
    for (const row of document.querySelectorAll('#pg-meta .meta-cond')) {
      const key = row.querySelector('.cond-key').value.trim();
      const op = row.querySelector('.cond-op').value;
      const raw = row.querySelector('.cond-value').value;
      if (!key) continue;
      const values = op === 'in' ? raw.split(',').map((x) => x.trim()).filter(Boolean).map(typed) : [typed(raw)];
      out.push({ key, op, values });
    }
    return out;
  }

  // ---- the request, and the address that mirrors it ----
  function request() {
    const filters = {};
    const tags = $('pg-tags').value.split(',').map((t) => t.trim()).filter(Boolean);
    if (tags.length) filters.tags = tags;
    if ($('pg-type').value) filters.media_types = [$('pg-type').value];
    // Dates are whole days in UTC, as the CLI and the documents list read them.
    if ($('pg-from').value) filters.created_after = $('pg-from').value + 'T00:00:00Z';
    if ($('pg-to').value) filters.created_before = $('pg-to').value + 'T23:59:59.999999999Z';
    const meta = conditions();
    if (meta.length) filters.metadata = meta;
    return { query: $('pg-query').value.trim(), k: Number($('pg-k').value) || 0, collection: $('pg-collection').value, filters };
  }

  function toAddress(req) {
    const p = new URLSearchParams();
    p.set('q', req.query);
    if (req.k) p.set('k', String(req.k));
    for (const [name, id] of [['collection', 'pg-collection'], ['type', 'pg-type'], ['tags', 'pg-tags'], ['from', 'pg-from'], ['to', 'pg-to']]) {
      if ($(id).value) p.set(name, $(id).value);
    }
    for (const c of req.filters.metadata || []) p.append('meta', JSON.stringify(c));
    history.replaceState(null, '', '/search?' + p.toString());
  }

  function fromAddress() {
    const p = new URLSearchParams(location.search);
    $('pg-query').value = p.get('q') || '';
    if (p.get('k')) $('pg-k').value = p.get('k');
    for (const [name, id] of [['type', 'pg-type'], ['tags', 'pg-tags'], ['from', 'pg-from'], ['to', 'pg-to']]) {
      if (p.get(name)) $(id).value = p.get(name);
    }
    for (const m of p.getAll('meta')) {
      try {
        const c = JSON.parse(m);
        addCondition(c.key, c.op, (c.values || []).join(', '));
      } catch (_) { /* a hand-edited address: skip the condition */ }
    }
    return p;
  }

  // ---- results ----
  /** num shows a score with digits decimals, or three significant digits when it is smaller than that shows. */
  function num(x, digits) {
    if (typeof x !== 'number') return '—';
    return x !== 0 && Math.abs(x) < Math.pow(10, -digits + 1) ? x.toPrecision(3) : x.toFixed(digits);
  }

  /**
   * score is one score of a hit: its value, what it is (name: its key, data-score; shown as the string
   * search.NAME), and a bar of its share of the largest value of that score in the result (absent scores —
   * not a candidate of that list (rank 0), no re-ranker — say so).
   */
  function score(name, value, digits, maxOf, note, rank) {
    const present = typeof value === 'number' && rank !== 0;
    const share = present && maxOf > 0 ? Math.max(0, Math.min(1, value / maxOf)) : 0;
    const bar = el('i', {});
    bar.style.width = (share * 100).toFixed(1) + '%';
    if (rank !== undefined) note = t('search.rank', { n: rank });
    return el('div', { class: 'score' + (present ? '' : ' absent'), 'data-score': name },
      el('span', {}, t('search.' + name)), el('b', {}, present ? num(value, digits) : '—'),
      note ? el('span', {}, note) : null,
      el('div', { class: 'score-bar' }, bar));
  }

  function renderHits(res) {
    const hits = res.hits || [];
    const max = (f) => Math.max(0, ...hits.map((h) => (typeof h[f] === 'number' ? h[f] : 0)));
    const maxes = { score: max('score'), fused: max('fused_score'), vector: max('vector_score'), keyword: max('keyword_score'), rerank: max('rerank_score') };
    const rr = res.rerank;
    const what = rr ? [rr.reranker, rr.weights ? t('chat.blend', { weights: rr.weights.join('/') }) : ''].filter(Boolean).join(' + ') : '';
    const parts = [
      t('search.hits', { n: hits.length }) + (res.truncated ? t('search.truncated') : ''),
      t('search.candidates', { vector: res.vector_candidates, keyword: res.keyword_candidates }),
      res.space ? ragdI18n.nodes('search.space', { space: el('code', {}, res.space) }) : t('search.keywordOnly'),
      t('search.times', { embed: num(res.embed_ms, 1), vector: num(res.vector_ms, 1), keyword: num(res.keyword_ms, 1), total: num(res.total_ms, 1) }),
      !rr ? t('chat.rerankOff') : rr.warning ? t('chat.rerankWarning', { what, warning: rr.warning }) : t('chat.rerank', { what }),
    ];
    $('pg-summary').replaceChildren(...parts.flatMap((p, i) => [i ? ' · ' : '', ...[].concat(p)]));
    $('pg-hits').replaceChildren(...hits.map((h, i) => {
      const href = `/documents/${encodeURIComponent(h.document_id)}?chunk=${h.index}` + (h.page_start ? `&page=${h.page_start}` : '');
      const scores = el('div', { class: 'scores' },
        score('final', h.score, 4, maxes.score),
        score('fused', h.fused_score, 4, maxes.fused),
        score('vector', h.vector_score, 3, maxes.vector, '', h.vector_rank || 0),
        score('keyword', h.keyword_score, 2, maxes.keyword, '', h.keyword_rank || 0),
        score('rerank', h.rerank_score, 3, maxes.rerank));
      for (const [name, v] of [['recency', h.recency], ['importance', h.importance], ['permission', h.permission]]) {
        if (typeof v === 'number') scores.append(score(name, v, 3, 1));
      }
      if (h.document_rank) scores.append(score('document', h.document_rank, 0, 0, t('search.namedByQuery')));
      const text = ragdHighlight.passage('p', 'hit-text', h.text, h.media_type, h.kind);
      const li = el('li', { class: 'hit', 'data-rank': i + 1, 'data-chunk': h.id },
        el('div', { class: 'hit-head' },
          el('span', { class: 'hit-rank' }, `#${i + 1}`),
          el('a', { href }, h.title || h.source || h.document_id),
          el('span', { class: 'sub' }, [ragd.pageSpan(h), h.section, h.media_type].filter(Boolean).join(' · '))),
        scores, text);
      ragdPages.expander(li, h.text, 300);
      return li;
    }));
    $('pg-empty').hidden = hits.length > 0;
  }

  let running = 0;
  async function run() {
    const req = request();
    if (!req.query) {
      $('pg-summary').replaceChildren(el('span', { class: 'error-text' }, t('search.enterQuery')));
      return;
    }
    toAddress(req);
    const seq = ++running;
    $('pg-run').disabled = true;
    $('pg-summary').textContent = t('search.searching');
    try {
      const res = await api('/api/search', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(req) });
      if (seq === running) renderHits(res);
    } catch (e) {
      if (seq === running) {
        $('pg-hits').replaceChildren();
        $('pg-empty').hidden = true;
        $('pg-summary').replaceChildren(el('span', { class: 'error-text', id: 'pg-error' }, errText(e)));
      }
    } finally {
      if (seq === running) $('pg-run').disabled = false;
    }
  }

  $('pg-form').addEventListener('submit', (e) => { e.preventDefault(); run(); });
  $('pg-query').addEventListener('keydown', (e) => {
    // Enter searches; Shift+Enter is a new line; Enter that confirms a Korean IME composition does neither.
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      run();
    }
  });
  $('pg-add-cond').addEventListener('click', () => addCondition().querySelector('.cond-key').focus());

  async function collections() {
    try {
      const res = await api('/api/collections');
      const list = res.collections || res || [];
      for (const c of list) $('pg-collection').append(el('option', { value: c.name }, c.name));
    } catch (_) { /* the picker stays at "all"; the search itself reports a failing API */ }
  }

  ragdPages.fillTypes($('pg-type'));
  ragd.renderStatus($('model-status'));
  const p = fromAddress();
  collections().then(() => {
    if (p.get('collection')) $('pg-collection').value = p.get('collection');
    if (p.get('q')) run();
  });
})();
