// ragd UI — the document page (/documents/{id}): the document's facts, its versions with their files, its
// chunks (page span, section, tokens, text) and, for a PDF, its pages beside them. ?page=N opens page N and
// ?chunk=I selects chunk I (the chat's "open document" link). Everything shown comes from the API as text.
'use strict';

(() => {
  const { el, api, fetchAPI, errorFrom, ApiError, t } = ragd;
  const $ = (id) => document.getElementById(id);
  const id = decodeURIComponent(location.pathname.replace(/^\/documents\//, '').replace(/\/$/, ''));
  const params = new URLSearchParams(location.search);
  const base = '/api/documents/' + encodeURIComponent(id);
  let viewer = null;
  let timer = 0;

  function errText(e) { return e instanceof ApiError ? e.human() : String(e && e.message || e); }

  function bytes(n) {
    if (!n && n !== 0) return '—';
    if (n < 1024) return `${n} B`;
    if (n < 1048576) return `${(n / 1024).toFixed(1)} KB`;
    return `${(n / 1048576).toFixed(1)} MB`;
  }

  function when(s) {
    const d = new Date(s);
    return isNaN(d) || d.getFullYear() < 2 ? '—' : ragd.when(s);
  }

  /**
   * download saves the file at path. Without an API key a plain link would do; with one the file must be
   * fetched with the key, so every download goes through fetch and a temporary object URL.
   */
  async function download(path, fallbackName, status) {
    status.textContent = '';
    status.hidden = true;
    try {
      const resp = await fetchAPI(path);
      if (!resp.ok) throw await errorFrom(resp);
      const blob = await resp.blob();
      const m = /filename\*=UTF-8''([^;]+)/i.exec(resp.headers.get('Content-Disposition') || '');
      const a = el('a', { href: URL.createObjectURL(blob), download: m ? decodeURIComponent(m[1]) : fallbackName });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    } catch (e) {
      status.textContent = errText(e);
      status.hidden = false;
    }
  }

  /** fact is one line of the document's facts; name is its key (data-fact), shown in the page's language. */
  function fact(name, value) {
    if (value === undefined || value === null || value === '') return [];
    return [el('dt', {}, t('doc.fact.' + name)), el('dd', { 'data-fact': name }, value)];
  }

  /** stateName is a document status or stage in the page's language (an unknown one as it is). */
  function stateName(prefix, s) { return ragdI18n.has(prefix + s) ? t(prefix + s) : s; }

  function renderFacts(d, collection) {
    document.title = `ragd — ${d.title || d.source}`;
    $('doc-title').textContent = d.title || d.source || d.id;
    const status = el('span', {}, el('span', { class: 'badge ' + d.status, 'data-status': d.status }, stateName('state.', d.status)));
    if (d.status !== 'ready' || d.pending) status.append(' ', [d.pending ? t('doc.newVersion') : '', stateName('stage.', d.stage), `${d.progress}%`].filter(Boolean).join(' '));
    const meta = Object.entries(d.metadata || {}).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ');
    $('doc-facts').replaceChildren(
      ...fact('status', status),
      ...fact('source', d.source),
      ...fact('type', d.media_type),
      ...fact('version', String(d.version)),
      ...fact('chunks', String(d.chunk_count)),
      ...fact('size', bytes(d.size)),
      ...fact('collection', collection),
      ...fact('externalId', d.external_id !== d.source ? d.external_id : ''),
      ...fact('tags', (d.tags || []).join(', ')),
      ...fact('metadata', meta),
      ...fact('owner', d.owner),
      ...fact('created', when(d.created_at)),
      ...fact('updated', when(d.updated_at)),
      ...fact('id', el('code', {}, d.id)));
    const err = $('doc-error');
    err.hidden = !d.error;
    err.textContent = d.error ? `${d.error_code || t('doc.failed')}: ${d.error}` : '';
    const dl = $('doc-download');
    dl.hidden = !(d.content_hash || d.pending);
    dl.href = base + '/file';
  }

  function renderVersions(d) {
    const rows = (d.versions || []).map((v) => {
      const status = el('span', { class: 'hint' });
      const get = el('a', { href: `${base}/file?version=${v.version}`, class: 'version-download' }, t('doc.downloadVersion'));
      get.addEventListener('click', (e) => { e.preventDefault(); download(get.getAttribute('href'), v.source || d.source, status); });
      return el('tr', { 'data-version': v.version },
        el('td', { 'data-label': t('docs.version') }, v.version === d.version ? t('doc.current', { v: v.version }) : String(v.version)),
        el('td', { 'data-label': t('doc.committed') }, when(v.created_at)),
        el('td', { 'data-label': t('docs.title') }, v.title || ''),
        el('td', { 'data-label': t('doc.size') }, bytes(v.size)),
        el('td', { 'data-label': t('docs.chunks') }, String(v.chunk_count)),
        el('td', { 'data-label': t('doc.hash') }, el('code', { title: v.content_hash }, (v.content_hash || '').slice(0, 12))),
        el('td', {}, get, ' ', status));
    });
    $('version-rows').replaceChildren(...rows);
    $('versions-empty').hidden = rows.length > 0;
  }

  /**
   * renderHistory lists the document's changes of state (GET …/history), oldest first: when, the state (a
   * stage while it is processed), the version it is about, and a failure's error.
   */
  async function renderHistory() {
    let events;
    try {
      events = (await api(base + '/history')).events || [];
    } catch (e) {
      $('history-rows').replaceChildren(el('tr', {}, el('td', { colspan: 4, class: 'error-text' }, errText(e))));
      return;
    }
    $('history-rows').replaceChildren(...events.map((e) => {
      // A processing step is named by its stage (extracting, embedding…); any other state by its status.
      const state = e.status === 'processing' || (e.status === 'ready' && e.stage !== 'done')
        ? stateName('stage.', e.stage) : stateName('state.', e.status);
      return el('tr', { 'data-status': e.status, 'data-stage': e.stage },
        el('td', { 'data-label': t('doc.historyAt') }, when(e.at)),
        el('td', { 'data-label': t('doc.historyState') }, el('span', { class: 'badge ' + e.status }, state)),
        el('td', { 'data-label': t('docs.version') }, String(e.version)),
        el('td', { 'data-label': t('doc.historyDetail') }, e.error ? `${e.error_code || t('doc.failed')}: ${e.error}` : ''));
    }));
    $('history-empty').hidden = events.length > 0;
  }

  let selected = null; // the index of the selected chunk
  const chunkOf = new Map(); // chunk index (as text) → chunk

  function select(index, scroll) {
    selected = index;
    for (const li of document.querySelectorAll('#chunks .chunk.selected')) li.classList.remove('selected');
    const li = document.querySelector(`#chunks .chunk[data-index="${index}"]`);
    if (!li) return;
    li.classList.add('selected');
    if (scroll) li.scrollIntoView({ block: 'center' });
  }

  function renderChunks(d, chunks) {
    const isPDF = d.media_type === 'application/pdf';
    $('chunk-count').textContent = chunks.length ? `(${chunks.length})` : '';
    chunkOf.clear();
    for (const c of chunks) chunkOf.set(String(c.index), c);
    $('chunks').replaceChildren(...chunks.map((c) => {
      const head = el('div', { class: 'chunk-head' },
        el('span', { class: 'chunk-n' }, `#${c.index}`),
        c.kind && c.kind !== 'text' ? el('span', { class: 'chunk-kind' }, c.kind) : null,
        c.page_start ? el('span', { class: 'chunk-pages' }, ragd.pageSpan(c)) : null,
        el('span', { class: 'chunk-tokens' }, t('doc.tokens', { n: c.tokens })),
        c.section ? el('span', { class: 'chunk-section' }, c.section) : null);
      const li = el('li', { class: 'chunk', id: 'chunk-' + c.index, 'data-index': c.index, 'data-page': c.page_start || '' }, head,
        ragdHighlight.passage('p', 'chunk-text', c.text, d.media_type, c.kind));
      if (isPDF && c.page_start) {
        const show = el('button', { type: 'button', class: 'secondary chunk-show-page' }, t('doc.showPage'));
        show.addEventListener('click', () => {
          select(c.index, false);
          viewer.go(c.page_start);
          // On a phone the pages come after the chunks: bring them into view.
          const r = viewer.root.getBoundingClientRect();
          if (r.top > innerHeight || r.bottom < 0) viewer.root.scrollIntoView({ block: 'start' });
        });
        head.append(show);
      }
      ragdPages.expander(li, c.text, 400);
      return li;
    }));
    $('chunks-empty').hidden = chunks.length > 0;
  }

  /** collectionName names a collection ID (the ID itself when the collections cannot be listed). */
  let collections = null;
  async function collectionName(cid) {
    if (!collections) {
      try {
        const res = await api('/api/collections');
        collections = new Map((res.collections || []).map((c) => [c.id, c.name]));
      } catch (_) {
        collections = new Map();
      }
    }
    return collections.get(cid) || cid;
  }

  async function load() {
    clearTimeout(timer);
    let d;
    try {
      d = await api(base);
    } catch (e) {
      $('doc-title').textContent = t('doc.fallbackTitle');
      $('doc-error').textContent = errText(e);
      $('doc-error').hidden = false;
      return;
    }
    renderFacts(d, await collectionName(d.collection_id));
    renderVersions(d);
    renderHistory();
    if (d.status === 'queued' || d.status === 'processing' || d.pending) timer = setTimeout(load, 2000);
    if (d.version === 0) return;
    try {
      const res = await api(base + '/chunks');
      renderChunks(d, res.chunks || []);
    } catch (e) {
      $('chunks').replaceChildren(el('li', { class: 'error-text' }, errText(e)));
    }
    if (d.media_type === 'application/pdf' && d.content_hash && !viewer) {
      $('pages-card').hidden = false;
      $('doc-layout').classList.add('with-pages');
      // The selected chunk is highlighted on its pages.
      viewer = sourcePage.viewer(d.id, d.title || d.source, {
        scrollToMark: false,
        texts: (n) => {
          const c = chunkOf.get(String(selected));
          return c && c.page_start <= n && n <= (c.page_end || c.page_start) ? [c.text] : [];
        },
      });
      viewer.root.id = 'page-viewer';
      $('pages').append(viewer.root);
      if (params.has('chunk')) select(params.get('chunk'), true);
      // ?page, else the selected chunk's page, else the first page a chunk is on.
      const chosen = chunkOf.get(String(selected));
      const first = Number(params.get('page')) || (chosen && chosen.page_start) ||
        Number((document.querySelector('#chunks .chunk[data-page]:not([data-page=""])') || {}).dataset?.page) || 1;
      viewer.go(first);
    } else if (params.has('chunk')) {
      select(params.get('chunk'), true);
    }
  }

  // ---- sharing: the document's grants (GET/PUT …/grants), shown only to a key that may change them ----
  let grants = null;

  async function loadGrants() {
    try {
      grants = await api(base + '/grants');
    } catch (_) {
      grants = null;
    }
    const writable = !!(grants && grants.writable);
    $('share-button').hidden = !writable;
    $('share-button').dataset.writable = String(writable);
  }

  /** saveGrants replaces both lists; the answer is the new state. */
  async function saveGrants(read, write) {
    grants = await api(base + '/grants', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ read, write }),
    });
  }

  function openShare() {
    const dlg = el('dialog', { class: 'share-dialog', id: 'share-dialog', 'aria-labelledby': 'share-heading' });
    const list = el('ul', { class: 'grant-list', id: 'grant-list' });
    const status = el('p', { class: 'error-text', id: 'share-error', hidden: true });
    const kind = el('select', { id: 'grant-kind', 'aria-label': t('share.kind') }, el('option', { value: 'user' }, t('share.user')), el('option', { value: 'team' }, t('share.team')));
    const name = el('input', { id: 'grant-name', placeholder: t('share.name'), 'aria-label': t('share.nameAria'), autocomplete: 'off', required: true });
    const level = el('select', { id: 'grant-access', 'aria-label': t('share.access') }, el('option', { value: 'read' }, t('share.read')), el('option', { value: 'write' }, t('share.write')));
    const form = el('form', { class: 'grant-form', id: 'grant-form' }, kind, name, level, el('button', { type: 'submit', class: 'primary', id: 'grant-add' }, t('share.add')));
    const close = el('button', { type: 'button', class: 'secondary', id: 'share-close' }, t('share.close'));
    dlg.append(el('h2', { id: 'share-heading' }, t('share.heading')),
      el('p', { class: 'hint' }, t('share.hint')),
      list, status, form, el('div', { class: 'row' }, close));
    const fail = (e) => { status.textContent = errText(e); status.hidden = false; };
    const done = () => { dlg.close(); dlg.remove(); };
    const render = () => {
      if (!grants.writable) { // this key just removed its own write grant
        $('share-button').hidden = true;
        $('share-button').dataset.writable = 'false';
        done();
        return;
      }
      const rows = [];
      for (const access of ['write', 'read']) {
        for (const who of grants[access] || []) {
          const rm = el('button', { type: 'button', class: 'secondary', 'aria-label': t('share.removeAria', { access: t('share.' + access), who }) }, t('share.remove'));
          rm.addEventListener('click', async () => {
            status.hidden = true;
            const read = grants.read.filter((g) => access !== 'read' || g !== who);
            const write = grants.write.filter((g) => access !== 'write' || g !== who);
            try { await saveGrants(read, write); render(); } catch (e) { fail(e); }
          });
          rows.push(el('li', { 'data-grant': who, 'data-access': access }, el('span', { class: 'who' }, who), el('span', { class: 'badge' }, t('share.' + access)), rm));
        }
      }
      list.replaceChildren(...(rows.length ? rows : [el('li', { class: 'empty' }, t('share.none'))]));
    };
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      status.hidden = true;
      const who = kind.value + ':' + name.value.trim();
      if (!name.value.trim()) return;
      const read = grants.read.slice(), write = grants.write.slice();
      const target = level.value === 'write' ? write : read;
      if (!target.includes(who)) target.push(who);
      try { await saveGrants(read, write); name.value = ''; render(); } catch (err) { fail(err); }
    });
    close.addEventListener('click', done);
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); done(); });
    render();
    document.body.append(dlg);
    dlg.showModal();
    name.focus();
  }

  $('share-button').addEventListener('click', async () => {
    await loadGrants();
    if (grants && grants.writable) openShare();
  });

  $('doc-download').addEventListener('click', (e) => {
    e.preventDefault();
    download(base + '/file', $('doc-title').textContent, $('doc-error'));
  });
  ragd.renderStatus($('model-status'));
  load().then(loadGrants);
})();
