// ragd UI — shared by every page: API calls with the API key, error messages, the model status line, the
// header's theme, language and sign-in controls and a tiny DOM helper. Every string comes from i18n.js. Everything user- or document-provided is put into the page as
// text (textContent), never as HTML; only sanitised markdown output (chat.js) is HTML.
'use strict';

const ragd = (() => {
  const KEY_STORAGE = 'ragd.apiKey';
  const { t } = ragdI18n;

  /** ApiError is an error response of the API, or a network failure (code "network"). */
  class ApiError extends Error {
    constructor(code, message, status, retryAfter) {
      super(message || code);
      this.code = code;
      this.status = status || 0;
      this.retryAfter = retryAfter || '';
    }
    /** human is the text shown to the user: the code's message, then the server's details. */
    human() {
      const base = ragdI18n.has('error.' + this.code) ? t('error.' + this.code) : t('error.internal');
      let s = base;
      if (this.message && this.message !== this.code && this.code !== 'network') s += ' — ' + this.message;
      if (this.retryAfter) s += ` (${this.retryAfter}s)`;
      return s;
    }
  }

  function apiKey() {
    try { return sessionStorage.getItem(KEY_STORAGE) || ''; } catch (_) { return ''; }
  }
  function setApiKey(k) {
    try { sessionStorage.setItem(KEY_STORAGE, k); } catch (_) { /* private mode: key lives in memory only */ }
    memoryKey = k;
    mePromise = null;
  }
  /** signOut forgets the tab's key and reloads the page (which asks for a key again when the API needs one). */
  function signOut() {
    try { sessionStorage.removeItem(KEY_STORAGE); } catch (_) { /* storage off */ }
    memoryKey = '';
    mePromise = null;
    location.reload();
  }

  let mePromise = null;
  /**
   * me resolves to the principal of the tab's key (GET /api/me: principal, user, teams, scopes, admin,
   * keys_required), or null when none was entered. Asked once per page and key.
   */
  function me() {
    if (!mePromise) {
      mePromise = fetchAPI('/api/me').then((r) => (r.ok ? r.json() : null), () => null);
    }
    return mePromise;
  }
  /** can reports whether the principal has a scope ("read", "write", "admin"). */
  function can(principal, scope) { return !!principal && (principal.scopes || []).includes(scope); }
  let memoryKey = '';
  function currentKey() { return apiKey() || memoryKey; }

  function withKey(headers) {
    const h = Object.assign({}, headers || {});
    const k = currentKey();
    if (k) h['X-RAG-API-Key'] = k;
    return h;
  }

  /** errorFrom turns a non-2xx response into an ApiError. */
  async function errorFrom(resp) {
    let code = 'internal', message = `HTTP ${resp.status}`;
    try {
      const body = await resp.json();
      if (body && body.error) { code = body.error; message = body.message || ''; }
    } catch (_) { /* not JSON */ }
    return new ApiError(code, message, resp.status, resp.headers.get('Retry-After'));
  }

  /**
   * fetchAPI calls the API with the session's key. On 401 it asks for a key (again, while the key entered is
   * refused) and retries; when the user cancels it resolves to the 401 response. It rejects with
   * ApiError("network") when the server cannot be reached.
   */
  async function fetchAPI(path, opts = {}) {
    for (;;) {
      let resp;
      try {
        resp = await fetch(path, Object.assign({}, opts, { headers: withKey(opts.headers) }));
      } catch (e) {
        if (e && e.name === 'AbortError') throw e;
        throw new ApiError('network', String(e && e.message || e));
      }
      if (resp.status !== 401) return resp;
      const err = await errorFrom(resp);
      if (!(await askKey(err.human()))) {
        return new Response(JSON.stringify({ error: err.code, message: err.message }), { status: 401, headers: { 'Content-Type': 'application/json' } });
      }
    }
  }

  /** api calls the API and returns its JSON body, or throws ApiError. */
  async function api(path, opts = {}) {
    const resp = await fetchAPI(path, opts);
    if (!resp.ok) throw await errorFrom(resp);
    if (resp.status === 204) return null;
    return resp.json();
  }

  /**
   * upload sends FormData with XMLHttpRequest (fetch has no upload progress). onProgress gets 0..1.
   * Resolves to the parsed JSON body; rejects with ApiError.
   */
  function upload(method, path, form, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, path);
      const h = withKey({});
      for (const k of Object.keys(h)) xhr.setRequestHeader(k, h[k]);
      xhr.upload.onprogress = (e) => { if (e.lengthComputable && onProgress) onProgress(e.loaded / e.total); };
      xhr.onerror = () => reject(new ApiError('network', 'upload failed'));
      xhr.onload = async () => {
        let body = null;
        try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
        if (xhr.status >= 200 && xhr.status < 300) { resolve(body); return; }
        const err = new ApiError(body && body.error || 'internal', body && body.message || `HTTP ${xhr.status}`, xhr.status, xhr.getResponseHeader('Retry-After'));
        if (xhr.status === 401 && await askKey(err.human())) {
          upload(method, path, form, onProgress).then(resolve, reject);
          return;
        }
        reject(err);
      };
      xhr.send(form);
    });
  }

  let keyPrompt = null;
  /** askKey shows the API-key dialog (once at a time) and resolves true when a key was entered. */
  function askKey(reason) {
    if (keyPrompt) return keyPrompt;
    keyPrompt = new Promise((resolve) => {
      const dlg = el('dialog', { class: 'key-dialog', id: 'key-dialog' });
      const input = el('input', { type: 'password', id: 'api-key-input', autocomplete: 'off', placeholder: t('key.heading'), 'aria-label': t('key.heading') });
      const form = el('form', { method: 'dialog' },
        el('strong', {}, t('key.heading')),
        el('p', { class: 'hint' }, reason || t('key.needed')),
        input,
        el('p', { class: 'hint' }, t('key.tabOnly')),
        el('div', { class: 'row' },
          el('button', { type: 'button', class: 'secondary', id: 'api-key-cancel' }, t('key.cancel')),
          el('button', { type: 'submit', class: 'primary', id: 'api-key-save' }, t('key.use'))));
      dlg.append(form);
      document.body.append(dlg);
      const finish = (ok) => {
        dlg.close();
        dlg.remove();
        keyPrompt = null;
        resolve(ok);
      };
      form.addEventListener('submit', (e) => {
        e.preventDefault();
        const k = input.value.trim();
        if (!k) return;
        setApiKey(k);
        finish(true);
      });
      form.querySelector('#api-key-cancel').addEventListener('click', () => finish(false));
      dlg.addEventListener('cancel', (e) => { e.preventDefault(); finish(false); });
      dlg.showModal();
      input.focus();
    });
    return keyPrompt;
  }

  /**
   * el creates an element. attrs are set as attributes (no event handlers, no HTML); children are nodes or
   * strings (inserted as text).
   */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v === null || v === undefined) continue;
      e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  let statusTimer = 0;

  /**
   * renderStatus fills the header's model line: which embedder and generator are active and, after a change
   * of embedder, which space searches use and how far the background re-embed is (refreshed every few
   * seconds until it completes).
   */
  async function renderStatus(target) {
    clearTimeout(statusTimer);
    try {
      const st = await api('/api/status');
      const parts = [];
      const emb = st.embedder || {};
      parts.push(el('span', { id: 'status-embedder' }, ...ragdI18n.nodes('status.embedder', { space: el('code', { class: 'ident' }, emb.space || '?') })));
      if (emb.lexical) {
        parts.push(el('span', { class: 'lexical', id: 'status-lexical', title: emb.note || '' }, t('status.lexical')));
      }
      const sp = st.embedding;
      if (sp && sp.reembed && sp.reembed.state !== 'complete') {
        const r = sp.reembed;
        const search = sp.mode === 'keyword' ? t('status.keywordsOnly') : sp.search;
        const state = r.state === 'failed' ? t('status.reembedStopped') : '';
        parts.push(el('span', { class: 'reembed', id: 'status-reembed', 'data-state': r.state, title: [sp.reason, r.last_error].filter(Boolean).join(' — ') },
          t('status.reembed', { percent: r.percent, done: r.done, total: r.total, state, search })));
        statusTimer = setTimeout(() => renderStatus(target), 3000);
      }
      parts.push(el('span', { id: 'status-generator' }, ...ragdI18n.nodes('status.generator', { name: el('code', { class: 'ident' }, st.generator || '?') })));
      if (st.documents) parts.push(el('span', { id: 'status-documents' }, t('status.documents', { ready: st.documents.ready || 0, total: st.documents.total || 0, chunks: st.chunks || 0 })));
      target.replaceChildren(...parts);
      return st;
    } catch (e) {
      target.replaceChildren(el('span', { class: 'lexical' }, e instanceof ApiError ? e.human() : String(e)));
      return null;
    }
  }

  // ---- theme: the system's light or dark (prefers-color-scheme) until the header's toggle picks one ----
  const THEME_STORAGE = 'ragd.theme';

  function storedTheme() {
    try { return localStorage.getItem(THEME_STORAGE) || ''; } catch (_) { return ''; }
  }
  /** theme is the theme shown: "dark" or "light". */
  function theme() {
    const shown = document.documentElement.dataset.theme;
    if (shown === 'dark' || shown === 'light') return shown;
    return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  }
  /** setTheme shows and remembers a theme ("" follows the system again). */
  function setTheme(name) {
    if (name) document.documentElement.dataset.theme = name;
    else delete document.documentElement.dataset.theme;
    try { if (name) localStorage.setItem(THEME_STORAGE, name); else localStorage.removeItem(THEME_STORAGE); } catch (_) { /* storage off */ }
    const b = document.getElementById('theme-toggle');
    if (b) {
      const dark = theme() === 'dark';
      b.textContent = dark ? '☀' : '☾';
      b.setAttribute('aria-label', t(dark ? 'theme.light' : 'theme.dark'));
      b.title = t(dark ? 'theme.light' : 'theme.dark');
    }
  }

  /**
   * renderPrincipal puts the sign-in control in the header: who the tab's key is (user, teams, scopes) with
   * "Sign out", or "Sign in" without a key; in single-user local mode just "local". An admin gets the Admin link.
   */
  async function renderPrincipal(bar) {
    const box = el('div', { class: 'principal', id: 'principal' });
    const toggle = document.getElementById('theme-toggle');
    if (toggle) toggle.before(box); else bar.append(box);
    const p = await me();
    const nav = bar.querySelector('nav');
    if (p && p.admin && nav && !document.getElementById('nav-admin')) {
      const a = el('a', { href: '/admin', id: 'nav-admin' }, t('nav.admin'));
      if (location.pathname === '/admin') a.setAttribute('aria-current', 'page');
      nav.append(a);
    }
    if (p && !p.keys_required) {
      box.replaceChildren(el('span', { id: 'principal-name', title: t('principal.local') }, p.principal));
      return;
    }
    if (!p) {
      const b = el('button', { type: 'button', class: 'secondary', id: 'sign-in' }, t('principal.signIn'));
      b.addEventListener('click', async () => { if (await askKey('')) location.reload(); });
      box.replaceChildren(b);
      return;
    }
    const who = p.user || p.principal;
    const scopes = (p.scopes || []).map(scopeName);
    const detail = [p.principal, (p.teams || []).length ? t('principal.teams', { teams: p.teams.join(', ') }) : '', t('principal.scopes', { scopes: scopes.join(', ') })].filter(Boolean).join(' · ');
    const out = el('button', { type: 'button', class: 'secondary', id: 'sign-out' }, t('principal.signOut'));
    out.addEventListener('click', signOut);
    box.replaceChildren(el('span', { id: 'principal-name', title: detail }, who), el('span', { class: 'hint', id: 'principal-scopes', 'data-scopes': (p.scopes || []).join(',') }, scopes.join(',')), out);
  }

  /** when is a time (an API timestamp) as the page's language writes it; "" for none or a malformed one. */
  function when(s) {
    const d = new Date(s);
    return s && !isNaN(d) ? d.toLocaleString(ragdI18n.lang()) : '';
  }

  /** scopeName is a scope ("read", "write", "admin") in the page's language; an unknown one as it is. */
  function scopeName(s) { return ragdI18n.has('scope.' + s) ? t('scope.' + s) : s; }

  /**
   * pageSpan is "p. 3" or "p. 3–4" (in the page's language) for a chunk or passage with pages, "" without;
   * text read from page images by OCR says so with the engine's confidence: "p. 3 (OCR 87 %)".
   */
  function pageSpan(x) {
    if (!x || !x.page_start) return '';
    const span = x.page_end && x.page_end !== x.page_start ? t('common.pages', { from: x.page_start, to: x.page_end }) : t('common.page', { n: x.page_start });
    return x.ocr ? t('common.ocr', { span, pct: Math.round((x.ocr_confidence || 0) * 100) }) : span;
  }

  /**
   * setupPage adds what every page's header has: the theme toggle and the language toggle (named in the
   * other language, which it switches to); on a phone, the status line opens on a tap.
   */
  function setupPage() {
    const bar = document.querySelector('.topbar');
    if (bar && !document.getElementById('theme-toggle')) {
      const b = el('button', { type: 'button', class: 'theme-toggle', id: 'theme-toggle' });
      b.addEventListener('click', () => setTheme(theme() === 'dark' ? 'light' : 'dark'));
      const other = ragdI18n.lang() === 'ko' ? 'en' : 'ko';
      const l = el('button', { type: 'button', class: 'lang-toggle', id: 'lang-toggle', lang: other, 'data-lang': other, title: t('lang.switch'), 'aria-label': t('lang.switch') }, ragdI18n.NAMES[other]);
      l.addEventListener('click', () => ragdI18n.setLang(other));
      const nav = bar.querySelector('nav');
      if (nav) nav.after(b, l); else bar.append(b, l);
    }
    setTheme(storedTheme());
    if (bar) renderPrincipal(bar);
    const status = document.getElementById('model-status');
    if (status) status.addEventListener('click', () => status.classList.toggle('expanded'));
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setupPage);
  else setupPage();

  return { ApiError, api, fetchAPI, errorFrom, upload, askKey, el, renderStatus, setTheme, theme, me, can, signOut, pageSpan, when, t };
})();
