// ragd UI — the Q&A board of a collection: questions with their status, an ask form that shows similar
// earlier questions while typing, each question with its AI answer card (source references that open the
// passage) and people's answers, and an answer form. Everything is inserted as text.
'use strict';

(() => {
  const { api, el, ApiError, renderStatus, t } = ragd;
  // A question's status in the page's language (an unknown one as it is).
  const statusName = (s) => (ragdI18n.has('board.' + s) ? t('board.' + s) : s);
  const $ = (id) => document.getElementById(id);
  const human = (e) => (e instanceof ApiError ? e.human() : String(e));
  let current = '';

  function collection() { return $('board-collection').value; }

  async function loadCollections() {
    const want = new URLSearchParams(location.search).get('collection');
    const { collections } = await api('/api/collections');
    const names = collections.map((c) => c.name);
    if (!names.length) names.push('default');
    $('board-collection').replaceChildren(...names.map((n) => el('option', { value: n }, n)));
    $('board-collection').value = names.includes(want) ? want : (names.includes('lectures') ? 'lectures' : names[0]);
  }

  async function loadQuestions() {
    const q = new URLSearchParams({ collection: collection() });
    if ($('f-status').value) q.set('status', $('f-status').value);
    const { questions } = await api('/api/questions?' + q);
    $('questions').replaceChildren(...questions.map((x) => el('li', {},
      el('button', { type: 'button', class: 'question-link', 'data-id': x.id }, x.title),
      el('span', { class: 'badge status-' + x.status, 'data-status': x.status }, statusName(x.status)))));
    $('questions-empty').hidden = questions.length > 0;
  }

  // refLabel is a source reference as "lecture · week · chunk n" (whatever metadata the document has).
  function refLabel(r) {
    const m = r.metadata || {};
    const parts = [m.lecture_name || r.title, m.week].filter(Boolean);
    parts.push(t('board.chunk', { n: r.chunk_index }));
    return parts.join(' · ') + ` (${(r.similarity || 0).toFixed(2)})`;
  }

  function answerCard(a) {
    const card = el('article', { class: a.is_ai ? 'answer-card ai-answer' : 'answer-card' },
      el('header', {}, a.is_ai ? el('span', { class: 'badge ai' }, t('board.ai')) : el('strong', {}, a.author || t('board.anonymous')),
        ' ', el('span', { class: 'hint' }, ragd.when(a.created_at))),
      el('p', { class: 'answer-body' }, a.body));
    if (a.source_refs && a.source_refs.length) {
      card.append(el('ul', { class: 'source-refs' }, ...a.source_refs.map((r, i) =>
        el('li', {}, el('button', { type: 'button', class: 'source-ref', 'data-ref': String(i) }, `[${i + 1}] ` + refLabel(r))))));
      card.querySelectorAll('.source-ref').forEach((b) => b.addEventListener('click', () => openPassage(a.source_refs[Number(b.dataset.ref)])));
    }
    return card;
  }

  async function openPassage(r) {
    $('passage').hidden = false;
    $('passage-title').textContent = refLabel(r);
    $('passage-text').textContent = '…';
    try {
      const { chunks } = await api('/api/documents/' + encodeURIComponent(r.document_id) + '/chunks');
      const c = chunks.find((x) => x.id === r.chunk_id) || chunks.find((x) => x.index === r.chunk_index);
      $('passage-text').textContent = c ? c.text : t('board.passageGone');
    } catch (e) {
      $('passage-text').textContent = human(e);
    }
  }

  async function openThread(id) {
    current = id;
    const q = await api('/api/questions/' + encodeURIComponent(id));
    $('thread').hidden = false;
    $('passage').hidden = true;
    $('thread-title').textContent = q.title;
    $('thread-body').textContent = q.body || '';
    const meta = [statusName(q.status), ragd.when(q.created_at)];
    if (q.last_error) meta.push(t('board.lastError', { error: q.last_error }));
    $('thread-meta').textContent = meta.join(' · ');
    // The AI answer first, then people's answers oldest first.
    const answers = [...q.answers].sort((a, b) => Number(b.is_ai) - Number(a.is_ai));
    $('answers').replaceChildren(...(answers.length ? answers.map(answerCard)
      : [el('p', { class: 'empty' }, t('board.waiting'))]));
  }

  let similarTimer = 0;
  let similarSeq = 0;
  function showSimilar() {
    clearTimeout(similarTimer);
    const text = ($('ask-title').value + '\n' + $('ask-body').value).trim();
    if (text.length < 4) { $('similar').hidden = true; return; }
    similarTimer = setTimeout(async () => {
      const seq = ++similarSeq;
      try {
        const q = new URLSearchParams({ collection: collection(), q: text, k: '3' });
        const { questions } = await api('/api/questions/similar?' + q);
        if (seq !== similarSeq) return;
        $('similar-list').replaceChildren(...questions.map((x) => el('li', {},
          el('button', { type: 'button', class: 'question-link similar-question', 'data-id': x.id }, x.title),
          el('span', { class: 'badge status-' + x.status, 'data-status': x.status }, statusName(x.status)))));
        $('similar').hidden = questions.length === 0;
      } catch (_) {
        $('similar').hidden = true;
      }
    }, 250);
  }

  document.addEventListener('click', (e) => {
    const b = e.target.closest('.question-link');
    if (b) openThread(b.dataset.id).catch((err) => { $('thread-meta').textContent = human(err); });
  });

  $('ask-title').addEventListener('input', showSimilar);
  $('ask-body').addEventListener('input', showSimilar);
  $('board-collection').addEventListener('change', () => { $('thread').hidden = true; loadQuestions(); });
  $('f-status').addEventListener('change', loadQuestions);

  $('ask-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('ask-error').textContent = '';
    try {
      const q = await api('/api/questions', { method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ collection: collection(), title: $('ask-title').value, body: $('ask-body').value }) });
      $('ask-title').value = '';
      $('ask-body').value = '';
      $('similar').hidden = true;
      await loadQuestions();
      await openThread(q.id);
    } catch (err) {
      $('ask-error').textContent = human(err);
    }
  });

  $('answer-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    $('answer-error').textContent = '';
    try {
      await api('/api/questions/' + encodeURIComponent(current) + '/answers', { method: 'POST',
        headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ body: $('answer-body').value }) });
      $('answer-body').value = '';
      await openThread(current);
    } catch (err) {
      $('answer-error').textContent = human(err);
    }
  });

  $('run-now').addEventListener('click', async () => {
    $('run-now').disabled = true;
    $('run-info').textContent = '…';
    try {
      const r = await api('/api/qa/runs?wait=true', { method: 'POST' });
      $('run-info').textContent = t('board.runResult', { answered: r.answered, failed: r.failed, skipped: r.skipped });
      await loadQuestions();
      if (current) await openThread(current);
    } catch (err) {
      $('run-info').textContent = human(err);
    } finally {
      $('run-now').disabled = false;
    }
  });

  renderStatus($('model-status'));
  loadCollections().then(loadQuestions).catch((err) => { $('questions-empty').hidden = false; $('questions-empty').textContent = human(err); });
})();
