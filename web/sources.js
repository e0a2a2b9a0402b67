// ragd UI — the sources panel of the documents page: a collection's sources (folders, web sites, …) with
// their sync status and last error, a "run now" button each, and a form to add one (docs/connectors.md).
'use strict';

(() => {
  const { el, api, ApiError, t } = ragd;
  const $ = (id) => document.getElementById(id);
  const json = (method, body) => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const errText = (e) => (e instanceof ApiError ? e.human() : String(e && e.message || e));
  const state = { collection: '', timer: 0 };
  const path = (rest) => '/api/collections/' + encodeURIComponent(state.collection) + '/sources' + (rest || '');

  /** where says where a source reads from: its path or URL, else its settings. */
  function where(s) {
    const set = s.settings || {};
    return set.path || set.url || set.repository || set.repo || JSON.stringify(set);
  }

  /** status is a source's state as a key (data-status): syncing, paused, not synced, failed or in sync. */
  function status(st) {
    if (st.running) return 'syncing';
    if (st.paused) return 'paused';
    if (!st.last_run_at) return 'not synced';
    if (st.last_error) return 'failed';
    return 'in sync';
  }

  /** statusText sums up a source's state in a word or two, in the page's language. */
  function statusText(st) {
    const key = { syncing: 'src.syncing', paused: 'src.paused', 'not synced': 'src.notSynced', failed: 'src.failed', 'in sync': 'src.inSync' }[status(st)];
    return t(key, { reason: st.pause_reason || '' });
  }

  /** kindName is a source kind in the page's language (a kind without a name there as it is). */
  const kindName = (k) => (ragdI18n.has('srckind.' + k) ? t('srckind.' + k) : k);

  function lastSync(st) {
    if (!st.last_run_at) return '—';
    return `${ragd.when(st.last_run_at)} · +${st.added} ~${st.updated} −${st.deleted} =${st.unchanged}` + (st.failed ? ' · ' + t('src.failedCount', { n: st.failed }) : '');
  }

  function row(s) {
    const st = s.state || {};
    const run = el('button', { type: 'button', class: 'secondary write-only', 'data-action': 'sync' }, t('src.run'));
    const tr = el('tr', { 'data-source': s.id, 'data-status': status(st) },
      el('td', { 'data-label': t('src.kind'), 'data-kind': s.kind }, kindName(s.kind)),
      el('td', { class: 'name', title: where(s), 'data-label': t('src.where') }, where(s)),
      el('td', { class: 'src-status', 'data-label': t('src.status') }, statusText(st)),
      el('td', { class: 'src-last', 'data-label': t('src.lastSync') }, lastSync(st)),
      el('td', { class: 'src-error', 'data-label': t('src.lastError') }, st.last_error || ''),
      el('td', { class: 'doc-actions' }, run));
    run.addEventListener('click', async () => {
      run.disabled = true;
      tr.querySelector('.src-status').textContent = t('src.syncing');
      try {
        await api(path('/' + encodeURIComponent(s.id) + '/sync'), { method: 'POST' });
      } catch (e) {
        tr.querySelector('.src-error').textContent = errText(e);
      }
      run.disabled = false;
      load();
    });
    return tr;
  }

  async function load() {
    clearTimeout(state.timer);
    if (!state.collection) return;
    let body;
    try {
      body = await api(path());
    } catch (e) {
      $('src-rows').replaceChildren();
      $('src-empty').hidden = false;
      $('src-empty').textContent = errText(e);
      return;
    }
    const kinds = body.kinds || [];
    const sel = $('src-kind');
    if (sel.options.length !== kinds.length) {
      sel.replaceChildren(...kinds.map((k) => el('option', { value: k }, kindName(k))));
      showFields();
    }
    const list = body.sources || [];
    $('src-rows').replaceChildren(...list.map(row));
    $('src-empty').hidden = list.length > 0;
    $('src-empty').textContent = t('src.empty');
    // While a sync runs (or has not run yet), the panel follows it.
    if (list.some((s) => s.state.running || !s.state.last_run_at)) state.timer = setTimeout(load, 1000);
  }

  /** showFields shows the folder's fields for a folder, a JSON settings box for the other kinds. */
  function showFields() {
    const folder = $('src-kind').value === 'folder';
    for (const id of ['src-path', 'src-include', 'src-exclude']) $(id).hidden = !folder;
    $('src-settings').hidden = folder;
  }
  $('src-kind').addEventListener('change', showFields);

  const globs = (v) => v.split(',').map((x) => x.trim()).filter(Boolean);

  $('src-add').addEventListener('submit', async (e) => {
    e.preventDefault();
    const out = $('src-add-result');
    out.className = 'result';
    let spec;
    try {
      spec = $('src-kind').value === 'folder'
        ? { path: $('src-path').value.trim(), include: globs($('src-include').value), exclude: globs($('src-exclude').value) }
        : JSON.parse($('src-settings').value || '{}');
    } catch (err) {
      out.textContent = t('src.notJSON', { error: err.message });
      out.classList.add('bad');
      return;
    }
    spec.kind = $('src-kind').value;
    if (spec.include && !spec.include.length) delete spec.include;
    if (spec.exclude && !spec.exclude.length) delete spec.exclude;
    const schedule = $('src-schedule').value.trim();
    if (schedule) spec.schedule = schedule;
    try {
      const s = await api(path(), json('POST', spec));
      out.textContent = t('src.added');
      out.classList.add('ok');
      out.dataset.source = s.id;
    } catch (err) {
      out.textContent = errText(err);
      out.classList.add('bad');
    }
    load();
  });

  $('sources-pick').addEventListener('submit', (e) => {
    e.preventDefault();
    state.collection = $('src-collection').value.trim();
    load();
  });
  // The panel opens on a collection whose sources the principal manages — an admin's any, else one it or
  // one of its teams owns (the field's default when it is one, else the first): a collection seen only
  // through document grants has no sources to show it, and asking would only fetch a 404.
  (async () => {
    let names = [];
    try {
      const [me, list] = await Promise.all([api('/api/me'), api('/api/collections')]);
      const mine = (c) => me.admin || c.owner === me.principal || (me.teams || []).some((t) => c.owner === 'team:' + t);
      names = (list.collections || []).filter(mine).map((c) => c.name);
    } catch (e) {
      return; // signed out or offline: the panel waits for the user to pick a collection
    }
    const wanted = $('src-collection').value.trim();
    state.collection = names.includes(wanted) ? wanted : (names[0] || '');
    $('src-collection').value = state.collection;
    load();
  })();
})();
