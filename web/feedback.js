// ragd UI — thumbs up and down, with an optional comment, on an answer and on each of its sources
// (POST /api/feedback; clicking the same thumb again removes the rating with DELETE /api/feedback/{id}).
// The chat page calls ragdFeedback.section(done, collection) for every finished answer.
'use strict';

const ragdFeedback = (() => {
  const { el, api, ApiError, t } = ragd;
  const MAX_COMMENT = 2000;

  /**
   * controls returns the thumbs and comment box of one rated thing. base is the request without rating
   * and comment ({target, question, answer, not_found, chunk_id | chunk_ids}); label names it for
   * assistive technology.
   */
  function controls(base, label) {
    const up = el('button', { type: 'button', class: 'thumb thumb-up', 'aria-pressed': 'false', 'aria-label': t('fb.aria', { label, what: t('fb.helpful') }), title: t('fb.helpful') }, '▲');
    const down = el('button', { type: 'button', class: 'thumb thumb-down', 'aria-pressed': 'false', 'aria-label': t('fb.aria', { label, what: t('fb.notHelpful') }), title: t('fb.notHelpful') }, '▼');
    const comment = el('textarea', { class: 'feedback-comment', rows: 2, maxlength: MAX_COMMENT, 'aria-label': t('fb.aria', { label, what: t('fb.comment') }), placeholder: t('fb.placeholder') });
    const save = el('button', { type: 'button', class: 'secondary feedback-save' }, t('fb.save'));
    const box = el('div', { class: 'feedback-form', hidden: true }, comment, save);
    const status = el('span', { class: 'feedback-status', 'aria-live': 'polite' });
    const root = el('div', { class: 'feedback', 'data-target': base.target, 'data-rating': '0' }, up, down, status, box);
    let rating = 0;
    let id = null;

    function show() {
      root.dataset.rating = String(rating);
      up.setAttribute('aria-pressed', String(rating === 1));
      down.setAttribute('aria-pressed', String(rating === -1));
      box.hidden = rating === 0;
    }
    async function send() {
      const f = await api('/api/feedback', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(Object.assign({}, base, { rating, comment: comment.value.trim() })),
      });
      id = f.id;
      root.dataset.id = id;
    }
    async function run(fn, done) {
      up.disabled = down.disabled = save.disabled = true;
      try {
        await fn();
        status.textContent = done;
        status.removeAttribute('data-code');
      } catch (err) {
        const e = err instanceof ApiError ? err : new ApiError('network', String(err && err.message || err));
        status.textContent = e.human();
        status.dataset.code = e.code;
      } finally {
        up.disabled = down.disabled = save.disabled = false;
        show();
      }
    }
    function thumb(r) {
      if (rating === r && id) {
        run(async () => {
          await api(`/api/feedback/${encodeURIComponent(id)}`, { method: 'DELETE' });
          rating = 0;
          id = null;
          delete root.dataset.id;
        }, t('fb.removed'));
        return;
      }
      const before = rating;
      rating = r;
      run(async () => {
        try { await send(); } catch (e) { rating = before; throw e; }
      }, t('fb.thanks'));
    }
    up.addEventListener('click', () => thumb(1));
    down.addEventListener('click', () => thumb(-1));
    save.addEventListener('click', () => { if (rating) run(send, t('fb.saved')); });
    return root;
  }

  /**
   * section returns the feedback of a finished answer (its done event or JSON body): thumbs on the answer,
   * and a list of its cited sources, each with thumbs.
   */
  function section(done, collection) {
    const exchange = { question: done.question || '', answer: done.answer || '', not_found: !!done.not_found, collection: collection || '' };
    const sources = done.sources || [];
    const answer = controls(Object.assign({ target: 'answer', chunk_ids: sources.map((s) => s.chunk_id) }, exchange), t('fb.answer'));
    const items = sources.map((s) => el('li', { class: 'source-item', 'data-chunk': s.chunk_id, 'data-n': s.n },
      el('span', { class: 'source-label' }, [`[${s.n}] ${s.title || s.source || s.document_id}`, ragd.pageSpan(s)].filter(Boolean).join(' ')),
      controls(Object.assign({ target: 'source', chunk_id: s.chunk_id }, exchange), t('fb.source', { n: s.n }))));
    return el('div', { class: 'answer-feedback' },
      el('div', { class: 'answer-rating' }, el('span', { class: 'hint' }, t('fb.rateAnswer')), answer),
      items.length ? el('details', { class: 'sources-rating' }, el('summary', {}, t('fb.rateSources', { n: items.length })), el('ul', {}, ...items)) : null);
  }

  return { section, controls };
})();
