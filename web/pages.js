// ragd UI — small parts shared by the documents list, the document page and the search playground: the
// document-type filter's choices, a passage's page span, and the "more" button of a long text.
'use strict';

const ragdPages = (() => {
  const { el } = ragd;

  // The short type names the API's filters read (internal/filter), as the type pickers offer them.
  const TYPES = [['', 'all'], ['pdf', 'PDF'], ['docx', 'Word'], ['hwp', 'HWP/HWPX'], ['xlsx', 'Excel'],
    ['pptx', 'PowerPoint'], ['markdown', 'Markdown'], ['html', 'HTML'], ['text', 'text']];

  /** fillTypes puts the document types into a select. */
  function fillTypes(select) {
    select.replaceChildren(...TYPES.map(([value, label]) => el('option', { value }, label)));
  }

  /**
   * pageSpan is "p. 3" or "p. 3–4" for a chunk or hit with pages, "" without; text read by OCR says so with
   * the engine's confidence: "p. 3 (OCR 87 %)".
   */
  function pageSpan(x) {
    if (!x.page_start) return '';
    const span = x.page_end && x.page_end !== x.page_start ? `p. ${x.page_start}–${x.page_end}` : `p. ${x.page_start}`;
    return x.ocr ? `${span} (OCR ${Math.round((x.ocr_confidence || 0) * 100)} %)` : span;
  }

  /**
   * expander gives item (whose text CSS cuts short unless the item has class "open") a "more"/"less" button
   * when its text is longer than limit characters.
   */
  function expander(item, text, limit) {
    if (text.length <= limit) return;
    const more = el('button', { type: 'button', class: 'secondary chunk-more' }, 'more');
    more.addEventListener('click', () => {
      item.classList.toggle('open');
      more.textContent = item.classList.contains('open') ? 'less' : 'more';
    });
    item.append(more);
  }

  return { fillTypes, pageSpan, expander };
})();
