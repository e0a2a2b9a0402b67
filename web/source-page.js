// ragd UI — page images of PDF documents (GET /api/documents/{id}/pages/{n}.png): the page a cited passage
// came from, in the chat's source panel (sourcePage.show), and the page viewer of the document page
// (sourcePage.viewer). Images are fetched with the session's API key — an <img src> could not send it — and
// shown as data: URLs, which the CSP allows (img-src 'self' data:).
'use strict';

const sourcePage = (() => {
  const { el, fetchAPI, errorFrom, ApiError, t } = ragd;
  const PDF = 'application/pdf';

  /**
   * widthFor is the image width for a box cssWidth CSS pixels wide: device pixels, rounded up to a step of
   * 200 so that boxes of about the same size share the server's page cache (100–2000, the API's bounds).
   */
  function widthFor(cssWidth) {
    const px = Math.ceil(Math.max(cssWidth || 0, 200) * (window.devicePixelRatio || 1) / 200) * 200;
    return Math.min(2000, Math.max(200, px));
  }

  /** load fetches page n of a document; resolves to {url, pages} (a data: URL, the PDF's page count). */
  async function load(docId, n, width) {
    const resp = await fetchAPI(`/api/documents/${encodeURIComponent(docId)}/pages/${n}.png?w=${width}`);
    if (!resp.ok) throw await errorFrom(resp);
    const blob = await resp.blob();
    const url = await new Promise((resolve, reject) => {
      const r = new FileReader();
      r.addEventListener('load', () => resolve(r.result));
      r.addEventListener('error', () => reject(r.error));
      r.readAsDataURL(blob);
    });
    return { url, pages: Number(resp.headers.get('X-Page-Count')) || 0 };
  }

  const MAX_FIND_CHARS = 4000; // the API's limit (MaxFindChars)

  /**
   * boxes asks where texts are on page n of a document: resolves to the boxes of those found (fractions
   * of the page from its top left). Texts are cut to the API's limits.
   */
  async function boxes(docId, n, texts) {
    const p = new URLSearchParams();
    let left = MAX_FIND_CHARS;
    for (const t of texts.slice(0, 20)) {
      const cut = [...t].slice(0, left).join('');
      if (!cut.trim()) continue;
      p.append('text', cut);
      left -= [...cut].length;
      if (left <= 0) break;
    }
    if (!p.has('text')) return [];
    const res = await ragd.api(`/api/documents/${encodeURIComponent(docId)}/pages/${n}/boxes?${p}`);
    return res.boxes || [];
  }

  /** markedTexts is the highlighted text of a passage: its marks, runs of marks split only by spaces joined. */
  function markedTexts(passage) {
    const out = [];
    let cur = '';
    for (const node of passage.childNodes) {
      if (node.nodeName === 'MARK') cur += node.textContent;
      else if (cur && /^\s*$/.test(node.textContent)) cur += ' ';
      else if (cur) { out.push(cur); cur = ''; }
    }
    if (cur) out.push(cur);
    return out;
  }

  /**
   * viewer makes a page viewer of one PDF document: the image, "p. n / pages" and previous/next buttons.
   * Its element is v.root; v.go(n) shows page n (a later call wins over one still loading) and resolves
   * when it is shown. root.dataset.state is loading, ready or error; root.dataset.page the page shown.
   */
  function viewer(docId, title, opts = {}) {
    const img = el('img', { class: 'page-image', alt: '' });
    const canvas = el('div', { class: 'page-canvas' }, img);
    const label = el('span', { class: 'page-label' });
    const prev = el('button', { type: 'button', class: 'secondary page-prev', 'aria-label': t('page.prev') }, '‹');
    const next = el('button', { type: 'button', class: 'secondary page-next', 'aria-label': t('page.next') }, '›');
    const error = el('p', { class: 'page-error', hidden: true });
    const bar = el('div', { class: 'page-bar' }, prev, label, next, opts.extra || null);
    const root = el('figure', { class: 'page-viewer', 'data-state': 'loading' }, bar, error, canvas);
    let shown = 0, pages = 0, current = 0;
    const pageLabel = (n) => (pages ? t('page.of', { n, pages }) : t('common.page', { n }));

    async function go(n) {
      const seq = ++shown;
      current = n;
      root.dataset.state = 'loading';
      label.textContent = pageLabel(n);
      prev.disabled = n <= 1;
      next.disabled = pages > 0 && n >= pages;
      try {
        const width = widthFor(root.clientWidth || (opts.width || 600));
        const page = await load(docId, n, width);
        if (seq !== shown) return;
        pages = page.pages;
        img.src = page.url;
        img.alt = t('page.alt', { n, title });
        error.hidden = true;
        label.textContent = pageLabel(n);
        next.disabled = pages > 0 && n >= pages;
        root.dataset.page = String(n);
        for (const m of canvas.querySelectorAll('.page-mark')) m.remove();
        root.dataset.marks = '';
        root.dataset.state = 'ready';
        if (opts.onPage) opts.onPage(n);
        await mark(n, seq);
      } catch (e) {
        if (seq !== shown) return;
        img.removeAttribute('src');
        error.textContent = e instanceof ApiError ? e.human() : String(e && e.message || e);
        error.hidden = false;
        root.dataset.state = 'error';
      }
    }
    /**
     * mark draws the boxes of opts.texts(n) — the texts to highlight on page n — over the image. A failure
     * only leaves the page unmarked. root.dataset.marks is how many boxes were drawn.
     */
    async function mark(n, seq) {
      const texts = opts.texts ? opts.texts(n) : [];
      if (!texts || !texts.length) return;
      let found = [];
      try {
        found = await boxes(docId, n, texts);
      } catch (_) { /* the passage beside the page is still highlighted */ }
      if (seq !== shown) return;
      for (const b of found) {
        const m = el('span', { class: 'page-mark', 'aria-hidden': 'true' });
        Object.assign(m.style, { left: `${b.x * 100}%`, top: `${b.y * 100}%`, width: `${b.w * 100}%`, height: `${b.h * 100}%` });
        canvas.append(m);
      }
      root.dataset.marks = String(found.length);
      const first = canvas.querySelector('.page-mark');
      if (first && opts.scrollToMark) first.scrollIntoView({ block: 'nearest' });
    }

    prev.addEventListener('click', () => { if (current > 1) go(current - 1); });
    next.addEventListener('click', () => { if (!pages || current < pages) go(current + 1); });
    return { root, go };
  }

  /**
   * show puts the page a source came from under its passage in the chat's source panel when the source is
   * a passage of a PDF, with a link to the document page at that passage; for any other source it removes
   * the page shown before. The words highlighted in the passage are highlighted on the page too, where the
   * server finds them in the page's text (chunks keep no positions: GET …/pages/{n}/boxes looks for them).
   */
  function show(panel, s) {
    const old = panel.querySelector('.page-viewer');
    if (old) old.remove();
    if (!s || s.media_type !== PDF || !s.page_start || !s.document_id) return;
    const link = el('a', {
      class: 'page-open', id: 'source-open-document',
      href: `/documents/${encodeURIComponent(s.document_id)}?page=${s.page_start}&chunk=${s.chunk_index}`,
    }, t('page.openDocument'));
    const passage = panel.querySelector('#source-passage');
    const texts = () => {
      const marked = passage ? markedTexts(passage) : [];
      return marked.length ? marked : [s.passage || ''];
    };
    const v = viewer(s.document_id, s.title || s.source || s.document_id, { extra: link, width: panel.clientWidth - 32, texts });
    v.root.id = 'source-figure';
    if (passage) passage.after(v.root); else panel.append(v.root);
    v.go(s.page_start);
  }

  return { show, viewer, widthFor };
})();
