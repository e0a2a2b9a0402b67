// ragd UI — small parts shared by the documents list, the document page and the search playground: the
// document-type filter's choices and the "more" button of a long text.
'use strict';

const ragdPages = (() => {
  const { el, t } = ragd;

  // The short type names the API's filters read (internal/filter), as the type pickers offer them.
  const TYPES = [['', t('common.all')], ['pdf', 'PDF'], ['docx', 'Word'], ['hwp', 'HWP/HWPX'], ['xlsx', 'Excel'],
    ['pptx', 'PowerPoint'], ['markdown', 'Markdown'], ['html', 'HTML'], ['text', t('type.text')]];

  /** fillTypes puts the document types into a select. */
  function fillTypes(select) {
    select.replaceChildren(...TYPES.map(([value, label]) => el('option', { value }, label)));
  }

  /**
   * expander gives item (whose text CSS cuts short unless the item has class "open") a "more"/"less" button
   * when its text is longer than limit characters.
   */
  function expander(item, text, limit) {
    if (text.length <= limit) return;
    const more = el('button', { type: 'button', class: 'secondary chunk-more' }, t('common.more'));
    more.addEventListener('click', () => {
      item.classList.toggle('open');
      more.textContent = t(item.classList.contains('open') ? 'common.less' : 'common.more');
    });
    item.append(more);
  }

  return { fillTypes, expander };
})();
