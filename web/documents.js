// ragd UI — the documents page: drag-and-drop (or picker) upload of many files with per-file progress, the
// document list with filters and paging, live status while documents are processed, delete and new version.
'use strict';

(() => {
  const { el, api, upload, ApiError, t } = ragd;
  const $ = (id) => document.getElementById(id);
  const PAGE = 50;
  const state = { offset: 0, total: 0, active: 0, wasActive: false, timer: 0, pendingUploads: 0, versionTarget: null };

  const TYPE_LABELS = {
    'application/pdf': 'PDF',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word',
    'application/hwp+zip': 'HWPX',
    'application/x-hwp': 'HWP',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'Excel',
    'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'PowerPoint',
    'text/markdown': 'Markdown',
    'text/mdx': 'MDX',
    'text/html': 'HTML',
  };
  function typeLabel(mt) {
    if (mt === 'text/plain') return t('type.text');
    if (TYPE_LABELS[mt]) return TYPE_LABELS[mt];
    if (mt && mt.startsWith('text/x-')) return t('type.code', { lang: mt.slice(7) });
    return mt || '—';
  }

  function errText(e) { return e instanceof ApiError ? e.human() : String(e && e.message || e); }
  /** stateName is a document status or stage in the page's language (an unknown one as it is). */
  function stateName(prefix, s) { return ragdI18n.has(prefix + s) ? t(prefix + s) : s; }
  // The column names a phone shows before each cell (data-label).
  const COL = { title: t('docs.title'), type: t('docs.type'), status: t('docs.status'), chunks: t('docs.chunks'), version: t('docs.version'), updated: t('docs.updated') };

  // ---- upload ----
  const dropzone = $('dropzone');
  const fileInput = $('file-input');
  $('pick').addEventListener('click', () => fileInput.click());
  fileInput.addEventListener('change', () => { uploadFiles([...fileInput.files]); fileInput.value = ''; });
  for (const ev of ['dragenter', 'dragover']) {
    dropzone.addEventListener(ev, (e) => { e.preventDefault(); dropzone.classList.add('over'); });
  }
  for (const ev of ['dragleave', 'drop']) {
    dropzone.addEventListener(ev, (e) => { e.preventDefault(); dropzone.classList.remove('over'); });
  }
  dropzone.addEventListener('drop', (e) => uploadFiles([...(e.dataTransfer?.files || [])]));

  /** uploadFiles sends each file in its own request so that each has its own progress and result. */
  function uploadFiles(files) {
    for (const f of files) uploadOne(f);
  }

  async function uploadOne(file) {
    const bar = el('progress', { max: 1, value: 0 });
    const result = el('span', { class: 'result' }, t('docs.uploading'));
    const item = el('li', { 'data-file': file.name }, el('span', { class: 'name', title: file.name }, file.name), bar, result);
    $('uploads').prepend(item);
    const form = new FormData();
    form.append('file', file, file.name);
    const coll = $('upload-collection').value.trim();
    const tags = $('upload-tags').value.trim();
    if (coll) form.append('collection', coll);
    if (tags) form.append('tags', tags);
    state.pendingUploads++;
    try {
      const body = await upload('POST', '/api/documents', form, (p) => { bar.value = p; });
      bar.value = 1;
      const d = body && body.documents && body.documents[0];
      result.textContent = d ? (d.outcome === 'unchanged' ? t('docs.unchanged') : t('docs.uploadedAs', { status: stateName('state.', d.status) })) : t('docs.uploaded');
      result.classList.add('ok');
      item.dataset.state = 'ok';
      if (d && d.id) { item.dataset.doc = d.id; item.dataset.status = d.status; }
    } catch (e) {
      result.textContent = errText(e);
      result.classList.add('bad');
      item.dataset.state = 'error';
    } finally {
      state.pendingUploads--;
      refresh();
    }
  }

  // ---- list ----
  function query() {
    const p = new URLSearchParams();
    const q = $('f-q').value.trim();
    const tag = $('f-tag').value.trim();
    const type = $('f-type').value;
    const status = $('f-status').value;
    const from = $('f-from').value;
    const to = $('f-to').value;
    if (q) p.set('q', q);
    if (tag) p.set('tag', tag);
    if (type) p.set('type', type);
    if (status) p.set('status', status);
    if (from) p.set('created_after', from);
    if (to) p.set('created_before', to);
    if ($('f-view').value === 'deleted') p.set('deleted', 'true');
    p.set('limit', String(PAGE));
    p.set('offset', String(state.offset));
    return p.toString();
  }

  function statusCell(d) {
    const cell = el('td', { 'data-label': COL.status });
    cell.append(el('span', { class: 'badge ' + d.status, 'data-status': d.status }, stateName('state.', d.status)));
    const working = d.status === 'queued' || d.status === 'processing' || d.pending;
    if (working) {
      const stage = stateName('stage.', d.stage);
      const what = d.pending && d.status === 'ready' ? t('docs.newVersionStage', { stage }) : stage;
      cell.append(' ', el('span', { class: 'sub' }, `${what} ${d.progress}%`));
      cell.append(el('progress', { max: 100, value: d.progress }));
    }
    if (d.error) cell.append(el('div', { class: 'doc-error' }, d.error));
    return cell;
  }

  /** deletedRow is a deleted document: when it was deleted, when it will be purged, and Restore until then. */
  function deletedRow(d) {
    const tags = (d.tags || []).join(', ');
    const res = el('button', { type: 'button', class: 'secondary', 'data-action': 'restore' }, t('docs.restore'));
    res.addEventListener('click', () => restore(d));
    const at = ragd.when;
    return el('tr', { id: 'doc-' + d.id, 'data-id': d.id, 'data-status': 'deleted', 'data-title': d.title },
      el('td', { 'data-label': COL.title },
        el('span', { class: 'title' }, d.title || d.source),
        el('div', { class: 'sub' }, sourceLine(d, tags))),
      el('td', { 'data-label': COL.type }, typeLabel(d.media_type)),
      el('td', { 'data-label': COL.status }, el('span', { class: 'badge failed', 'data-status': 'deleted' }, t('state.deleted')),
        el('div', { class: 'purge-at', 'data-purge-at': d.purge_at || '' }, t('docs.deletedAt', { at: at(d.deleted_at), purge: at(d.purge_at) }))),
      el('td', { 'data-label': COL.chunks }, String(d.chunk_count)),
      el('td', { 'data-label': COL.version }, String(d.version)),
      el('td', { 'data-label': COL.updated }, at(d.updated_at)),
      el('td', {}, el('div', { class: 'doc-actions' }, res)));
  }

  async function restore(d) {
    try {
      await api('/api/documents/' + encodeURIComponent(d.id) + '/restore', { method: 'POST' });
    } catch (e) {
      alert(errText(e));
    }
    refresh();
  }

  function sourceLine(d, tags) { return [d.source, tags ? t('docs.tagList', { tags }) : ''].filter(Boolean).join(' · '); }

  function row(d) {
    if (d.deleted_at) return deletedRow(d);
    const tags = (d.tags || []).join(', ');
    const del = el('button', { type: 'button', class: 'secondary danger', 'data-action': 'delete' }, t('docs.delete'));
    del.addEventListener('click', () => remove(d));
    const ver = el('button', { type: 'button', class: 'secondary', 'data-action': 'version' }, t('docs.newVersion'));
    ver.addEventListener('click', () => { state.versionTarget = d; $('version-input').click(); });
    return el('tr', { id: 'doc-' + d.id, 'data-id': d.id, 'data-status': d.status, 'data-title': d.title },
      el('td', { 'data-label': COL.title },
        el('a', { class: 'title', href: '/documents/' + encodeURIComponent(d.id) }, d.title || d.source),
        el('div', { class: 'sub' }, sourceLine(d, tags))),
      el('td', { 'data-label': COL.type }, typeLabel(d.media_type)),
      statusCell(d),
      el('td', { 'data-label': COL.chunks }, String(d.chunk_count)),
      el('td', { 'data-label': COL.version }, String(d.version)),
      el('td', { 'data-label': COL.updated }, ragd.when(d.updated_at)),
      el('td', {}, el('div', { class: 'doc-actions' }, ver, del)));
  }

  // A refresh asked for while one runs (a filter changed) runs right after it, with the new filters.
  let inflight = false, again = false;
  async function refresh() {
    if (inflight) { again = true; return; }
    inflight = true;
    try {
      const page = await api('/api/documents?' + query());
      const docs = page.documents || [];
      state.total = page.total || 0;
      state.active = docs.filter((d) => d.status === 'queued' || d.status === 'processing' || d.pending).length;
      $('doc-rows').replaceChildren(...docs.map(row));
      $('doc-empty').hidden = docs.length > 0;
      $('page-info').textContent = state.total ? t('docs.pageInfo', { from: state.offset + 1, to: state.offset + docs.length, total: state.total }) : '';
      $('prev').disabled = state.offset === 0;
      $('next').disabled = state.offset + docs.length >= state.total;
      await followUploads(docs);
      if (state.active > 0 || state.wasActive) ragd.renderStatus($('model-status'));
      state.wasActive = state.active > 0;
    } catch (e) {
      $('doc-rows').replaceChildren(el('tr', {}, el('td', { colspan: 7, class: 'doc-error' }, errText(e))));
    } finally {
      inflight = false;
      if (again) { again = false; refresh(); } else schedule();
    }
  }

  /**
   * followUploads brings the upload rows up to date with their documents' status (queued → processing →
   * ready or failed), from the page's listing or, for a document not on this page, its own record. While
   * one is still working it counts as active, so the polling stays quick.
   */
  async function followUploads(docs) {
    const byId = new Map(docs.map((d) => [d.id, d]));
    for (const item of document.querySelectorAll('#uploads li[data-doc]')) {
      if (item.dataset.status === 'ready' || item.dataset.status === 'failed') continue;
      let d = byId.get(item.dataset.doc);
      if (!d) {
        try { d = await api(`/api/documents/${encodeURIComponent(item.dataset.doc)}`); } catch (_) { continue; }
      }
      const result = item.querySelector('.result');
      item.dataset.status = d.status;
      if (d.status === 'failed') {
        result.textContent = t('docs.failedReason', { reason: d.error || '' });
        result.classList.replace('ok', 'bad');
        item.dataset.state = 'error';
      } else {
        result.textContent = d.status === 'ready' ? t('state.ready') : t('docs.uploadedAs', { status: stateName('state.', d.status) });
        if (d.status !== 'ready' && !byId.has(d.id)) state.active++;
      }
    }
  }

  /** schedule polls quickly while something is being processed, slowly otherwise. */
  function schedule() {
    clearTimeout(state.timer);
    const busy = state.active > 0 || state.pendingUploads > 0;
    state.timer = setTimeout(refresh, busy ? 1000 : 8000);
  }

  async function remove(d) {
    if (!confirm(t('docs.deleteConfirm', { title: d.title }))) return;
    try {
      await api('/api/documents/' + encodeURIComponent(d.id), { method: 'DELETE' });
    } catch (e) {
      alert(errText(e));
    }
    refresh();
  }

  $('version-input').addEventListener('change', async () => {
    const input = $('version-input');
    const d = state.versionTarget;
    const file = input.files[0];
    input.value = '';
    if (!d || !file) return;
    const form = new FormData();
    form.append('file', file, file.name);
    try {
      await upload('PUT', '/api/documents/' + encodeURIComponent(d.id), form, null);
    } catch (e) {
      alert(errText(e));
    }
    refresh();
  });

  let debounce = 0;
  $('filters').addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => { state.offset = 0; refresh(); }, 250);
  });
  $('filters').addEventListener('submit', (e) => e.preventDefault());
  $('prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - PAGE); refresh(); });
  $('next').addEventListener('click', () => { state.offset += PAGE; refresh(); });

  // A key without the write scope gets no upload, delete, new version or restore (the server would refuse them).
  ragd.me().then((p) => { if (p && !ragd.can(p, 'write')) document.body.classList.add('read-only'); });
  ragdPages.fillTypes($('f-type'));
  ragd.renderStatus($('model-status')).then((st) => {
    if (st && st.limits) $('limit-hint').textContent = t('docs.limit', { mb: Math.round(st.limits.max_upload_bytes / 1048576 * 10) / 10 });
  });
  refresh();
})();
