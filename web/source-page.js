// ragd UI — page images of PDF documents (GET /api/documents/{id}/pages/{n}.png): the page a cited passage
// came from, in the chat's source panel (sourcePage.show), and the page viewer of the document page
// (sourcePage.viewer). Images are fetched with the session's API key — an <img src> could not send it — and
// shown as data: URLs, which the CSP allows (img-src 'self' data:).
'use strict';

const sourcePage = (() => {
  const { el, fetchAPI, errorFrom, ApiError } = ragd;
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

  /**
   * viewer makes a page viewer of one PDF document: the image, "p. n / pages" and previous/next buttons.
   * Its element is v.root; v.go(n) shows page n (a later call wins over one still loading) and resolves
   * when it is shown. root.dataset.state is loading, ready or error; root.dataset.page the page shown.
   */
  function viewer(docId, title, opts = {}) {
    const img = el('img', { class: 'page-image', alt: '' });
    const label = el('span', { class: 'page-label' });
    const prev = el('button', { type: 'button', class: 'secondary page-prev', 'aria-label': 'previous page' }, '‹');
    const next = el('button', { type: 'button', class: 'secondary page-next', 'aria-label': 'next page' }, '›');
    const error = el('p', { class: 'page-error', hidden: true });
    const bar = el('div', { class: 'page-bar' }, prev, label, next, opts.extra || null);
    const root = el('figure', { class: 'page-viewer', 'data-state': 'loading' }, bar, error, img);
    let shown = 0, pages = 0, current = 0;

    async function go(n) {
      const seq = ++shown;
      current = n;
      root.dataset.state = 'loading';
      label.textContent = pages ? `p. ${n} / ${pages}` : `p. ${n}`;
      prev.disabled = n <= 1;
      next.disabled = pages > 0 && n >= pages;
      try {
        const width = widthFor(root.clientWidth || (opts.width || 600));
        const page = await load(docId, n, width);
        if (seq !== shown) return;
        pages = page.pages;
        img.src = page.url;
        img.alt = `page ${n} of ${title}`;
        error.hidden = true;
        label.textContent = pages ? `p. ${n} / ${pages}` : `p. ${n}`;
        next.disabled = pages > 0 && n >= pages;
        root.dataset.page = String(n);
        root.dataset.state = 'ready';
        if (opts.onPage) opts.onPage(n);
      } catch (e) {
        if (seq !== shown) return;
        img.removeAttribute('src');
        error.textContent = e instanceof ApiError ? e.human() : String(e && e.message || e);
        error.hidden = false;
        root.dataset.state = 'error';
      }
    }
    prev.addEventListener('click', () => { if (current > 1) go(current - 1); });
    next.addEventListener('click', () => { if (!pages || current < pages) go(current + 1); });
    return { root, go };
  }

  /**
   * show puts the page a source came from under its passage in the chat's source panel when the source is
   * a passage of a PDF, with a link to the document page at that passage; for any other source it removes
   * the page shown before. The cited words are highlighted in the passage text, not on the image: chunks
   * keep their page span but not the positions of their characters on the page.
   */
  function show(panel, s) {
    const old = panel.querySelector('.page-viewer');
    if (old) old.remove();
    if (!s || s.media_type !== PDF || !s.page_start || !s.document_id) return;
    const link = el('a', {
      class: 'page-open', id: 'source-open-document',
      href: `/documents/${encodeURIComponent(s.document_id)}?page=${s.page_start}&chunk=${s.chunk_index}`,
    }, 'open document');
    const v = viewer(s.document_id, s.title || s.source || s.document_id, { extra: link, width: panel.clientWidth - 32 });
    v.root.id = 'source-figure';
    const passage = panel.querySelector('#source-passage');
    if (passage) passage.after(v.root); else panel.append(v.root);
    v.go(s.page_start);
  }

  return { show, viewer, widthFor };
})();
