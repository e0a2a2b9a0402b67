// ragd UI — the chat page. The answer streams from POST /api/chat as server-sent events (sources, delta…,
// done | error). Answer markdown is rendered by marked and sanitised by DOMPurify into a DOM fragment;
// citations [n] are then made clickable by splitting text nodes (no HTML is re-parsed after sanitising).
'use strict';

(() => {
  const { el, fetchAPI, errorFrom, ApiError } = ragd;
  const MAX_QUESTION = 500;
  const HISTORY_TURNS = 5;

  const $ = (id) => document.getElementById(id);
  const conversation = $('conversation');
  const form = $('ask-form');
  const input = $('question');
  const sendButton = $('send');
  const counter = $('counter');

  const state = {
    history: [],        // [{role, content}] — the last turns, sent with each question
    busy: false,
    controller: null,   // AbortController of the answer being streamed
    conversation: null, // the conversation shown, as the server keeps it ({id, title, collections, document_ids})
    editing: null,      // the question being edited (its message box)
    saving: null,       // a promise: the IDs of a stopped exchange, once the server has kept it
  };

  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A' && node.hasAttribute('href')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    }
  });

  const PURIFY = {
    RETURN_DOM_FRAGMENT: true,
    FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
    FORBID_ATTR: ['style', 'id', 'name'],
  };

  /**
   * renderAnswer renders markdown text as sanitised DOM with clickable citations for the known sources.
   * weak (optional) are the answer's weakly supported sentences, as the API reports them; they are marked.
   * labels (optional) maps a source's number to the number its chip shows (citationLabels).
   */
  function renderAnswer(text, sources, onCite, weak, labels) {
    const { text: source, spans } = withWeakMarks(text || '', weak);
    const html = marked.parse(source, { gfm: true, breaks: true, async: false });
    const frag = DOMPurify.sanitize(html, PURIFY);
    if (spans.length) markWeak(frag, spans);
    linkCitations(frag, sources, onCite, labels || new Map());
    return frag;
  }

  /**
   * citationLabels numbers the sources an answer cites in the order the answer first cites them, so that its
   * chips read [1] [2] [3] whatever the passages' retrieval ranks ([1] … [4] … [3] before). The chip keeps
   * the source's own number in data-n.
   */
  function citationLabels(text, sources) {
    const labels = new Map();
    for (const m of (text || '').matchAll(/\[(\d{1,3})\]/g)) {
      const n = Number(m[1]);
      if (sources.has(n) && !labels.has(n)) labels.set(n, labels.size + 1);
    }
    return labels;
  }

  // Private-use characters bracket the weakly supported sentences in the markdown: they pass through marked
  // and DOMPurify as text, and markWeak then wraps the text between them, node by node, in a span — so no
  // HTML is built from answer text and a sentence may cross emphasis or links.
  const WEAK_OPEN = '\uE000';
  const WEAK_CLOSE = '\uE001';

  /**
   * withWeakMarks brackets the weak sentences of text (UTF-8 byte offsets, as the API gives them) with
   * WEAK_OPEN/WEAK_CLOSE. Leading list, heading, quote and table markers stay outside so that the markdown
   * keeps its structure; a sentence with unbalanced emphasis or code marks is left unmarked rather than
   * breaking them. Returns the text and the spans marked, in text order.
   */
  function withWeakMarks(text, weak) {
    if (!weak || !weak.length || text.includes(WEAK_OPEN) || text.includes(WEAK_CLOSE)) return { text, spans: [] };
    const bytes = new TextEncoder().encode(text);
    const decoder = new TextDecoder();
    const index = (b) => decoder.decode(bytes.subarray(0, Math.max(0, Math.min(b, bytes.length)))).length;
    const ranges = weak.map((w) => ({ w, from: index(w.start), to: index(w.end) }))
      .filter((r) => r.from < r.to)
      .sort((a, b) => b.from - a.from); // from the end, so earlier offsets stay valid
    const spans = [];
    let out = text;
    let limit = Infinity;
    for (const r of ranges) {
      if (r.to > limit) continue; // overlaps the one after it
      const lead = /^(?:\s*(?:[-*+]|\d+[.)]|#{1,6}|>|\|)\s+)*\s*/.exec(out.slice(r.from, r.to))[0].length;
      const from = r.from + lead;
      const seg = out.slice(from, r.to);
      if (!seg.trim() || (seg.match(/\*/g) || []).length % 2 || (seg.match(/`/g) || []).length % 2) continue;
      out = out.slice(0, from) + WEAK_OPEN + seg + WEAK_CLOSE + out.slice(r.to);
      spans.unshift(r.w);
      limit = r.from;
    }
    return { text: out, spans };
  }

  /** markWeak wraps the text between the weak marks in span.weak-support (spans[k] describes the k-th). */
  function markWeak(root, spans) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
    let k = -1;
    let inside = false;
    for (const node of nodes) {
      const v = node.nodeValue;
      if (!inside && !v.includes(WEAK_OPEN)) continue;
      const out = document.createDocumentFragment();
      let buf = '';
      const flush = () => {
        if (!buf) return;
        out.append(inside && spans[k] ? weakSpan(spans[k], buf) : document.createTextNode(buf));
        buf = '';
      };
      for (const ch of v) {
        if (ch === WEAK_OPEN) { flush(); inside = true; k++; } else if (ch === WEAK_CLOSE) { flush(); inside = false; } else buf += ch;
      }
      flush();
      node.replaceWith(out);
    }
  }

  function weakSpan(w, text) {
    const pct = Math.round((w.support || 0) * 100);
    const cites = (w.citations || []).map((n) => `[${n}]`).join('');
    return el('span', {
      class: 'weak-support',
      'data-support': String(w.support ?? ''),
      title: `근거가 약한 문장: 인용한 출처 ${cites}와 겹치는 단어가 ${pct}%뿐입니다. ` +
        `(Weakly supported: only ${pct}% of this sentence's words appear in the cited passage ${cites}.)`,
    }, text);
  }

  /** linkCitations replaces "[n]" in text nodes (outside code and links) with buttons for known sources. */
  function linkCitations(root, sources, onCite, labels) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (/\[\d{1,3}\]/.test(n.nodeValue) && !n.parentElement?.closest('code, pre, a')) nodes.push(n);
    }
    for (const node of nodes) {
      const parts = node.nodeValue.split(/(\[\d{1,3}\])/);
      const out = document.createDocumentFragment();
      for (const part of parts) {
        const m = /^\[(\d{1,3})\]$/.exec(part);
        if (m && sources.has(Number(m[1]))) {
          const n = Number(m[1]);
          const label = labels.get(n) || n;
          const b = el('button', { type: 'button', class: 'cite', 'data-n': n, 'data-label': label, 'aria-label': `source ${label}` }, `[${label}]`);
          b.addEventListener('click', () => onCite(n));
          out.append(b);
        } else if (part) {
          out.append(document.createTextNode(part));
        }
      }
      node.replaceWith(out);
    }
  }

  /** citedDocuments returns the distinct documents an answer cites, in citation order: the assistant turn's
   *  document_ids, which a follow-up question's retrieval favours. */
  function citedDocuments(done) {
    const ids = [];
    for (const s of done.sources || []) if (s.document_id && !ids.includes(s.document_id)) ids.push(s.document_id);
    return ids;
  }

  /** citedSentences returns the answer's sentences that cite [n], without citation markers and markdown. */
  function citedSentences(answer, n) {
    const out = [];
    // Split into text, marker run, text, marker run…: the sentence a run cites is the text just before it.
    const parts = (answer || '').split(/((?:\s*\[\d{1,3}\])+)/);
    for (let i = 1; i < parts.length; i += 2) {
      const nums = (parts[i].match(/\d+/g) || []).map(Number);
      if (!nums.includes(n)) continue;
      const line = parts[i - 1].split(/\n+/).pop();
      const sentence = line.split(/(?<=[.!?。])\s+/).filter((x) => x.trim()).pop() || '';
      const clean = sentence.replace(/^\s*(?:[-*+]|\d+\.)\s+/, '').replace(/[*_`#>|]/g, ' ').trim();
      if (clean) out.push(clean);
    }
    return out;
  }

  /** citedWords returns the words of the cited sentences, longest first. */
  function citedWords(sentences) {
    const words = new Set();
    for (const s of sentences) {
      for (const w of s.match(/[\p{L}\p{N}]+/gu) || []) {
        if (w.length < 2) continue;
        words.add(w.toLowerCase());
        // Korean words carry particles (법안은/법안이): also match the stem without its last syllable.
        if (w.length >= 3 && /[\uac00-\ud7a3]$/.test(w)) words.add(w.slice(0, -1).toLowerCase());
      }
    }
    return [...words].sort((a, b) => b.length - a.length).slice(0, 80);
  }

  const escapeRe = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  /**
   * highlightRanges finds what to mark in the passage: each cited sentence where the passage contains it
   * (as extractive answers quote it, whatever the spacing), otherwise the cited words.
   */
  function highlightRanges(passage, sentences) {
    const ranges = [];
    for (const s of sentences) {
      const tokens = s.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu) || [];
      if (tokens.length < 3) continue;
      const re = new RegExp(tokens.map(escapeRe).join('\\s*'), 'iu');
      const m = re.exec(passage);
      if (m) ranges.push([m.index, m.index + m[0].length]);
    }
    if (ranges.length) return ranges;
    const words = citedWords(sentences);
    if (!words.length) return [];
    const re = new RegExp(`(${words.map(escapeRe).join('|')})`, 'giu');
    for (const m of passage.matchAll(re)) ranges.push([m.index, m.index + m[0].length]);
    return ranges;
  }

  /** highlight renders passage text into target with the ranges marked (text nodes only). */
  function highlight(target, passage, ranges) {
    target.replaceChildren();
    ranges = ranges.slice().sort((a, b) => a[0] - b[0]);
    let last = 0;
    for (const [from, to] of ranges) {
      if (from < last) continue; // overlapping
      if (from > last) target.append(document.createTextNode(passage.slice(last, from)));
      target.append(el('mark', {}, passage.slice(from, to)));
      last = to;
    }
    if (last < passage.length) target.append(document.createTextNode(passage.slice(last)));
  }

  function pages(s) {
    if (!s.page_start) return '—';
    const span = s.page_end && s.page_end !== s.page_start ? `p. ${s.page_start}–${s.page_end}` : `p. ${s.page_start}`;
    // Text read from page images says so, with the OCR engine's confidence.
    return s.ocr ? `${span} (OCR ${Math.round((s.ocr_confidence || 0) * 100)} %)` : span;
  }

  function fmt(x, digits = 3) { return typeof x === 'number' ? x.toFixed(digits) : '—'; }

  /** openSource shows source n of an answer in the side panel. */
  function openSource(turn, n) {
    const s = turn.sources.get(n);
    if (!s) return;
    $('source-title').textContent = s.title || s.source || s.document_id;
    $('source-n').textContent = `[${turn.labels.get(n) || n}]`;
    $('source-doc').textContent = s.source || s.document_id;
    $('source-page').textContent = pages(s);
    $('source-section').textContent = s.section || '—';
    $('source-scores').textContent = `vector ${fmt(s.vector_score)} (#${s.vector_rank || '—'}) · keyword ${fmt(s.keyword_score, 2)} (#${s.keyword_rank || '—'}) · fused ${fmt(s.fused_score, 4)} · rerank ${reranked(s)}`;
    const passage = s.passage || '';
    highlight($('source-passage'), passage, highlightRanges(passage, citedSentences(turn.text, n)));
    const panel = $('source-panel');
    panel.hidden = false;
    panel.dataset.n = String(n);
    sourcePage.show(panel, s); // the PDF page it came from (web/source-page.js)
    $('source-close').focus({ preventScroll: true });
    // Scroll once the panel is laid out (a hidden one has no geometry): the first highlight in view, in the
    // middle of the sheet on a phone.
    panel.scrollTop = 0;
    const first = $('source-passage').querySelector('mark');
    if (first) first.scrollIntoView({ block: 'center' });
  }

  function closeSource() { $('source-panel').hidden = true; }
  $('source-close').addEventListener('click', closeSource);
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeSource(); });

  /** rerankInfo summarises the re-ranking stage of a search, its warning when the re-ranker failed. */
  function rerankInfo(r) {
    if (!r) return 'rerank off';
    const what = [r.reranker, r.weights ? `blend ${r.weights.join('/')}` : ''].filter(Boolean).join(' + ');
    return r.warning ? `rerank ${what}: ${r.warning}` : `rerank ${what}`;
  }

  /** reranked shows a passage's re-ranking inputs: the cross-encoder's score and the blend's recency,
   * importance and permission (— when the stage is off). */
  function reranked(p) {
    const parts = [];
    if (typeof p.rerank_score === 'number') parts.push(fmt(p.rerank_score));
    if (typeof p.recency === 'number') parts.push(`r ${fmt(p.recency, 2)} i ${fmt(p.importance, 2)} p ${fmt(p.permission, 2)}`);
    return parts.length ? parts.join(' · ') : '—';
  }

  /** debugPanel lists every retrieved passage with its scores and the latency breakdown. */
  function debugPanel(done) {
    const info = done.search_info || {};
    const rows = (done.passages || []).map((p) => el('tr', {},
      el('td', {}, `[${p.n}]`),
      el('td', {}, (p.title || p.source || '').slice(0, 48)),
      el('td', {}, pages(p)),
      el('td', { class: 'num' }, `${fmt(p.vector_score)} #${p.vector_rank || '—'}`),
      el('td', { class: 'num' }, `${fmt(p.keyword_score, 2)} #${p.keyword_rank || '—'}`),
      el('td', { class: 'num' }, fmt(p.fused_score, 4)),
      el('td', { class: 'num rerank' }, reranked(p)),
      el('td', { class: 'num' }, fmt(p.score, 4))));
    const table = el('table', {},
      el('thead', {}, el('tr', {}, ...['#', 'document', 'page', 'vector', 'keyword', 'fused', 'rerank', 'score'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...rows));
    const ms = (x) => `${fmt(x, 1)} ms`;
    const latency = el('p', { class: 'latency' },
      el('span', {}, `embed ${ms(info.embed_ms)}`),
      el('span', {}, `vector ${ms(info.vector_ms)} (${info.vector_candidates ?? 0} candidates)`),
      el('span', {}, `keyword ${ms(info.keyword_ms)} (${info.keyword_candidates ?? 0} candidates)`),
      el('span', {}, `retrieve ${ms(info.retrieve_ms)}`),
      el('span', {}, `generate ${ms(info.generate_ms)}`),
      el('span', {}, `total ${ms(info.latency_ms)}`),
      el('span', {}, `history ${info.history_turns ?? 0} turns`),
      el('span', { class: 'search-space' }, `space ${info.space || 'keywords only'}`),
      el('span', { class: 'search-rerank' }, rerankInfo(info.rerank)),
      el('span', {}, `generator ${done.generator || ''}`));
    return el('details', { class: 'debug' },
      el('summary', {}, `retrieval: ${info.chunks_retrieved ?? 0} passages · ${ms(info.latency_ms)}`),
      rows.length ? table : el('p', {}, 'no passage cleared the threshold'),
      ragdStructured.graphSteps(info),
      latency);
  }

  function scrollDown() { conversation.scrollTop = conversation.scrollHeight; }

  // ---- messages ----

  /** addUser shows a question; id is its message in the conversation (when saved). */
  function addUser(text, id) {
    const edit = el('button', { type: 'button', class: 'msg-action edit', title: '고쳐서 다시 묻기 (edit and resend)', 'aria-label': 'edit and resend' }, '✎');
    const box = el('article', { class: 'msg msg-user', 'data-role': 'user' }, el('span', { class: 'msg-text' }, text), edit);
    if (id) box.dataset.id = id;
    edit.addEventListener('click', () => startEdit(box));
    conversation.append(box);
    return box;
  }

  // The turn of each finished answer's box (for the history when a conversation is edited).
  const turns = new WeakMap();

  /** Turn is one assistant answer as it streams; question is the user message it answers. */
  function newTurn(question) {
    const answerEl = el('div', { class: 'answer' });
    const typing = el('span', { class: 'typing', 'aria-label': 'answering' }, el('span'), el('span'), el('span'));
    const box = el('article', { class: 'msg msg-assistant streaming', 'data-role': 'assistant', 'data-state': 'waiting' }, typing, answerEl);
    conversation.append(box);
    const turn = { box, answerEl, typing, question, text: '', sources: new Map(), labels: new Map(), frame: 0 };
    turn.render = () => {
      if (turn.frame) return;
      turn.frame = requestAnimationFrame(() => {
        turn.frame = 0;
        turn.answerEl.replaceChildren(renderTurn(turn));
        scrollDown();
      });
    };
    return turn;
  }

  function renderTurn(turn, weak) {
    turn.labels = citationLabels(turn.text, turn.sources);
    return renderAnswer(turn.text, turn.sources, (n) => openSource(turn, n), weak, turn.labels);
  }

  function setSources(turn, list) {
    turn.sources = new Map((list || []).map((s) => [s.n, s]));
  }

  /** relabelled returns the answer's sources in citation order, each numbered as its chip shows it. */
  function relabelled(turn, sources) {
    return (sources || []).map((s) => Object.assign({}, s, { n: turn.labels.get(s.n) || s.n }))
      .sort((a, b) => a.n - b.n);
  }

  function finish(turn, done) {
    if (turn.frame) { cancelAnimationFrame(turn.frame); turn.frame = 0; }
    turn.typing.remove();
    turn.box.classList.remove('streaming');
    if (done.passages) setSources(turn, done.passages);
    turn.text = done.answer || '';
    turn.answerEl.replaceChildren(renderTurn(turn, done.weak));
    if (done.truncated) {
      turn.box.insertBefore(el('p', { class: 'notice' }, `질문이 ${MAX_QUESTION}자를 넘어 잘라서 답했습니다. (The question was truncated to ${MAX_QUESTION} characters.)`), turn.answerEl);
    }
    const check = done.citations || {};
    if (check.weakly_supported > 0) {
      turn.box.append(el('p', { class: 'notice citation-note', 'data-weak': check.weakly_supported },
        `출처의 뒷받침이 약한 문장 ${check.weakly_supported}개에 점선 밑줄을 그었습니다. ` +
        `(${check.weakly_supported} weakly supported sentence${check.weakly_supported > 1 ? 's are' : ' is'} underlined with dots.)`));
    }
    if (check.removed > 0) {
      turn.box.append(el('p', { class: 'notice citation-note', 'data-removed': check.removed },
        `주어지지 않은 출처를 가리킨 인용 ${check.removed}개를 지웠습니다. ` +
        `(${check.removed} citation${check.removed > 1 ? 's' : ''} to passages that were not given removed.)`));
    }
    if (done.stopped) turn.box.append(el('p', { class: 'notice stopped-note' }, '답변을 멈췄습니다. (Stopped.)'));
    // A schema's filter as chips above the answer; a graph answer's sources as entity → relation rows below it.
    const info = done.search_info || {};
    turn.drop = (info.conditions || []).filter((c) => c.dropped).map((c) => c.field);
    const chips = ragdStructured.filterChips(info, (drop) => regenerate(turn, drop));
    if (chips) turn.box.insertBefore(chips, turn.answerEl);
    if (info.route) turn.box.dataset.route = info.route;
    const graph = ragdStructured.graphSources(done.sources, (n) => turn.labels.get(n) || n);
    if (graph) turn.box.append(graph);
    const collection = (state.conversation && state.conversation.collections.length === 1) ? state.conversation.collections[0] : '';
    turn.box.append(actions(turn), ragdFeedback.section(Object.assign({}, done, { sources: relabelled(turn, done.sources) }), collection), debugPanel(done));
    setIds(turn, done.message_ids);
    turns.set(turn.box, turn);
    turn.documents = citedDocuments(done);
    turn.box.dataset.state = done.stopped ? 'stopped' : 'done';
    scrollDown();
  }

  function setIds(turn, ids) {
    if (!ids || ids.length !== 2) return;
    turn.question.dataset.id = ids[0];
    turn.box.dataset.id = ids[1];
  }

  function fail(turn, err) {
    if (turn.frame) { cancelAnimationFrame(turn.frame); turn.frame = 0; }
    turn.typing.remove();
    turn.box.classList.remove('streaming');
    turn.box.classList.add('msg-error');
    if (turn.text) turn.answerEl.replaceChildren(renderTurn(turn));
    const e = err instanceof ApiError ? err : new ApiError('network', String(err && err.message || err));
    turn.box.append(el('p', { class: 'error-text', 'data-code': e.code }, e.human()));
    turn.box.dataset.state = 'error';
    scrollDown();
  }

  /** stopped ends a turn the user stopped: what arrived stays, as the server keeps it. */
  function stopped(turn) {
    if (turn.frame) { cancelAnimationFrame(turn.frame); turn.frame = 0; }
    turn.typing.remove();
    turn.box.classList.remove('streaming');
    turn.answerEl.replaceChildren(renderTurn(turn));
    turn.box.append(el('p', { class: 'notice stopped-note' }, '답변을 멈췄습니다. (Stopped.)'), actions(turn));
    turns.set(turn.box, turn);
    turn.documents = [];
    turn.box.dataset.state = 'stopped';
  }

  // ---- answer actions: copy, regenerate; a question's edit-and-resend ----

  function actions(turn) {
    const copy = el('button', { type: 'button', class: 'msg-action copy', title: '마크다운으로 복사 (copy as markdown)' }, 'Copy');
    const again = el('button', { type: 'button', class: 'msg-action regenerate', title: '답변 다시 만들기 (regenerate)' }, '↻ Regenerate');
    copy.addEventListener('click', async () => {
      try {
        await copyText(markdownOf(turn));
        copy.textContent = '✓ Copied';
      } catch (_) {
        copy.textContent = '✗ Copy failed';
      }
      setTimeout(() => { copy.textContent = 'Copy'; }, 1500);
    });
    again.addEventListener('click', () => regenerate(turn));
    return el('div', { class: 'answer-actions' }, copy, again);
  }

  /** markdownOf is an answer as copied: its markdown numbered as its chips are, then the sources it cites. */
  function markdownOf(turn) {
    const text = turn.text.replace(/\[(\d{1,3})\]/g, (m, n) => (turn.labels.has(Number(n)) ? `[${turn.labels.get(Number(n))}]` : m));
    const cited = [...turn.labels].sort((a, b) => a[1] - b[1]).map(([n, label]) => {
      const s = turn.sources.get(n);
      const page = pages(s);
      return `[${label}] ${s.title || s.source || s.document_id}${page === '—' ? '' : ', ' + page}`;
    });
    return cited.length ? `${text.trim()}\n\n${cited.join('\n')}\n` : text;
  }

  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    const area = el('textarea', { class: 'visually-hidden', readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    if (!ok) throw new Error('copy failed');
  }

  /** removeFrom removes a message and everything after it from the page and the history. */
  function removeFrom(box) {
    const all = [...conversation.querySelectorAll('.msg[data-role]')];
    const i = all.indexOf(box);
    if (i < 0) return;
    for (const m of all.slice(i)) m.remove();
    state.history = historyOf(all.slice(0, i));
  }

  /** regenerate asks a turn's question again in its place, without the filter fields drop (default: the
   *  turn's own). */
  async function regenerate(turn, drop) {
    if (state.busy) return;
    await whenSaved();
    const q = turn.question;
    const text = q.querySelector('.msg-text').textContent;
    const replaceFrom = q.dataset.id || '';
    removeFrom(q);
    ask(text, replaceFrom, drop || turn.drop);
  }

  function startEdit(box) {
    if (state.busy) return;
    state.editing = box;
    input.value = box.querySelector('.msg-text').textContent;
    $('editing').hidden = false;
    updateCounter();
    autosize();
    input.focus();
  }
  function cancelEdit() {
    state.editing = null;
    $('editing').hidden = true;
  }
  $('edit-cancel').addEventListener('click', () => { cancelEdit(); input.value = ''; updateCounter(); autosize(); });

  // ---- streaming ----

  /** sse yields {event, data} from a text/event-stream response body. */
  async function* sse(resp) {
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length) yield { event, data: JSON.parse(data.join('\n')) };
      }
    }
  }

  function setBusy(busy) {
    state.busy = busy;
    sendButton.disabled = busy;
    sendButton.hidden = busy;
    $('stop').hidden = !busy;
  }

  /** ask sends a question (replaceFrom: the saved message it replaces, with everything after it; drop: the
   *  schema fields whose conditions read out of it are not applied). */
  async function ask(question, replaceFrom, drop) {
    setBusy(true);
    const qbox = addUser(question);
    const turn = newTurn(qbox);
    scrollDown();
    const controller = new AbortController();
    state.controller = controller;
    let saving = null;
    try {
      const conv = await ensureConversation();
      const body = { question, history: state.history.slice(-HISTORY_TURNS), stream: true, conversation_id: conv.id };
      if (replaceFrom) body.replace_from = replaceFrom;
      if (drop && drop.length) body.drop_filters = drop;
      // The pickers' scope, also when their lists were never opened (a reopened conversation's).
      updatePicked();
      if (scope.documents.length) body.document_ids = scope.documents;
      if (scope.collections.length) body.filters = { collections: scope.collections };
      const resp = await fetchAPI('/api/chat', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      if (!resp.ok) throw await errorFrom(resp);
      let done = null;
      if ((resp.headers.get('Content-Type') || '').includes('application/json')) {
        done = await resp.json();
      } else {
        for await (const ev of sse(resp)) {
          if (ev.event === 'sources') {
            setSources(turn, ev.data.sources);
            turn.box.dataset.state = 'streaming';
          } else if (ev.event === 'delta') {
            turn.typing.hidden = true;
            turn.text += ev.data.text || '';
            turn.render();
          } else if (ev.event === 'done') {
            done = ev.data;
          } else if (ev.event === 'error') {
            throw new ApiError(ev.data.error || 'internal', ev.data.message || '');
          }
        }
      }
      if (!done) throw new ApiError('network', 'the answer stream ended early');
      finish(turn, done);
      state.history.push({ role: 'user', content: done.question || question }, { role: 'assistant', content: done.answer || '', document_ids: citedDocuments(done) });
      state.history = state.history.slice(-2 * HISTORY_TURNS);
      loadConversations();
    } catch (err) {
      if (err && err.name === 'AbortError') {
        stopped(turn);
        // The server keeps the stopped exchange once it sees the client go: learn its message IDs.
        saving = syncIds(turn);
        state.saving = saving;
      } else {
        fail(turn, err);
        // The conversation is gone (deleted in another tab): the next question starts a new one.
        if (err instanceof ApiError && err.code === 'not_found' && state.conversation) {
          state.conversation = null;
          remember('');
          loadConversations();
        }
      }
    } finally {
      if (state.controller === controller) state.controller = null;
      setBusy(false);
    }
    if (saving) { await saving; loadConversations(); }
  }

  /** whenSaved waits for a stopped exchange's IDs, so that regenerating or editing replaces it. */
  async function whenSaved() {
    if (state.saving) await state.saving;
    state.saving = null;
  }

  /** syncIds reads the conversation until it holds a stopped exchange's messages, and sets their IDs. */
  async function syncIds(turn) {
    const id = state.conversation && state.conversation.id;
    if (!id) return;
    const count = conversation.querySelectorAll('.msg[data-role]').length;
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 150));
      try {
        const c = await ragd.api(`/api/conversations/${encodeURIComponent(id)}`);
        if (c.messages.length >= count) {
          const last = c.messages.slice(-2);
          setIds(turn, last.map((m) => m.id));
          return;
        }
      } catch (_) { return; }
    }
  }

  async function submit() {
    const q = input.value.trim();
    if (state.busy) return;
    if (!q) {
      const box = el('article', { class: 'msg msg-assistant msg-error', 'data-state': 'error' },
        el('p', { class: 'error-text', 'data-code': 'question_required' }, ragd.MESSAGES.question_required));
      conversation.append(box);
      scrollDown();
      return;
    }
    input.value = '';
    updateCounter();
    autosize();
    const editing = state.editing;
    cancelEdit();
    if (editing && editing.isConnected) {
      await whenSaved();
      const replaceFrom = editing.dataset.id || '';
      removeFrom(editing);
      ask(q, replaceFrom);
      return;
    }
    ask(q);
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); submit(); });
  $('stop').addEventListener('click', () => { if (state.controller) state.controller.abort(); });

  // Korean (and any) IME: Enter that confirms a composition must not send. keydown during composition has
  // isComposing (keyCode 229 in older engines); Safari fires compositionend before that keydown, so a flag
  // cleared one tick later covers it.
  let composing = false;
  input.addEventListener('compositionstart', () => { composing = true; });
  input.addEventListener('compositionend', () => { setTimeout(() => { composing = false; }, 0); });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && state.editing) { cancelEdit(); return; }
    if (e.key !== 'Enter' || e.shiftKey) return;
    if (e.isComposing || e.keyCode === 229 || composing) return;
    e.preventDefault();
    submit();
  });

  function updateCounter() {
    const n = [...input.value].length;
    counter.textContent = n ? `${n}/${MAX_QUESTION}` : '';
    counter.classList.toggle('over', n > MAX_QUESTION);
    counter.title = n > MAX_QUESTION ? 'longer questions are truncated to 500 characters' : '';
  }
  function autosize() {
    input.style.height = 'auto';
    input.style.height = Math.min(input.scrollHeight, 160) + 'px';
  }
  input.addEventListener('input', () => { updateCounter(); autosize(); });

  // ---- scope: collections and documents, remembered per conversation ----

  /** pickedDocuments returns the ids of the documents checked in the picker ([] means all documents). */
  function pickedDocuments() {
    return [...document.querySelectorAll('#doc-options input:checked')].map((c) => c.value);
  }
  /** pickedCollections returns the names of the collections checked ([] means every readable one). */
  function pickedCollections() {
    return [...document.querySelectorAll('#coll-options input:checked')].map((c) => c.value);
  }

  // What the pickers hold before their lists are loaded (a conversation's remembered scope).
  const scope = { collections: [], documents: [] };

  function updatePicked() {
    const docs = $('doc-options').childElementCount ? pickedDocuments() : scope.documents;
    const colls = $('coll-options').childElementCount ? pickedCollections() : scope.collections;
    scope.documents = docs;
    scope.collections = colls;
    $('doc-picked').textContent = docs.length ? `(${docs.length})` : '(all)';
    $('coll-picked').textContent = colls.length ? `(${colls.join(', ')})` : '(all)';
  }

  /** loadDocuments lists the ready documents of the picked collections (the first 500), keeping what was checked. */
  async function loadDocuments() {
    const keep = new Set(scope.documents);
    const colls = scope.collections;
    try {
      const filter = colls.length ? '&collection=' + encodeURIComponent(colls.join(',')) : '';
      const page = await ragd.api('/api/documents?status=ready&limit=500' + filter);
      $('doc-options').replaceChildren(...(page.documents || []).map((d) => el('label', { class: 'doc-option' },
        el('input', { type: 'checkbox', value: d.id, checked: keep.has(d.id) }), ' ', d.title || d.id)));
    } catch (err) {
      $('doc-options').replaceChildren(el('span', { class: 'error' }, (err && err.message) || 'could not list the documents'));
    }
    updatePicked();
  }

  /** loadCollections lists the collections in the picker, keeping what was checked. */
  async function loadCollections() {
    const keep = new Set(scope.collections);
    try {
      const list = (await ragd.api('/api/collections')).collections || [];
      $('coll-options').replaceChildren(...list.map((c) => el('label', { class: 'doc-option' },
        el('input', { type: 'checkbox', value: c.name, checked: keep.has(c.name) }), ' ', c.name,
        c.description ? el('span', { class: 'hint' }, ' — ' + c.description) : null)));
    } catch (err) {
      $('coll-options').replaceChildren(el('span', { class: 'error' }, (err && err.message) || 'could not list the collections'));
    }
    updatePicked();
  }

  /** setScope shows a conversation's remembered scope in the pickers. */
  function setScope(collections, documents) {
    scope.collections = collections || [];
    scope.documents = documents || [];
    for (const c of document.querySelectorAll('#coll-options input')) c.checked = scope.collections.includes(c.value);
    for (const c of document.querySelectorAll('#doc-options input')) c.checked = scope.documents.includes(c.value);
    updatePicked();
  }

  /** saveScope remembers the pickers' scope in the current conversation. */
  async function saveScope() {
    updatePicked();
    const conv = state.conversation;
    if (!conv) return;
    conv.collections = scope.collections;
    conv.document_ids = scope.documents;
    try {
      await ragd.api(`/api/conversations/${encodeURIComponent(conv.id)}`, {
        method: 'PATCH', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ collections: scope.collections, document_ids: scope.documents }),
      });
    } catch (err) {
      showSidebarError(err);
    }
  }

  $('doc-picker').addEventListener('toggle', () => { if ($('doc-picker').open) loadDocuments(); });
  $('coll-picker').addEventListener('toggle', () => { if ($('coll-picker').open) loadCollections(); });
  $('doc-options').addEventListener('change', saveScope);
  $('coll-options').addEventListener('change', () => {
    saveScope();
    if ($('doc-picker').open) loadDocuments();
  });

  // ---- conversations: kept on the server (GET/POST/PATCH/DELETE /api/conversations) ----

  const CURRENT = 'ragd.conversation';
  // The open conversation is remembered in localStorage and shown in the address (#c=ID), so that a reload,
  // a bookmark or the back button opens it again.
  function remember(id) {
    try { if (id) localStorage.setItem(CURRENT, id); else localStorage.removeItem(CURRENT); } catch (_) { /* storage off */ }
    const hash = id ? '#c=' + encodeURIComponent(id) : '';
    if (location.hash !== hash) history.replaceState(null, '', location.pathname + location.search + hash);
  }
  function remembered() {
    const m = /^#c=([^&]+)$/.exec(location.hash);
    if (m) return decodeURIComponent(m[1]);
    try { return localStorage.getItem(CURRENT) || ''; } catch (_) { return ''; }
  }

  /** ensureConversation returns the current conversation, creating it (with the pickers' scope) first. */
  async function ensureConversation() {
    if (state.conversation) return state.conversation;
    updatePicked();
    const c = await ragd.api('/api/conversations', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ collections: scope.collections, document_ids: scope.documents }),
    });
    state.conversation = c;
    remember(c.id);
    return c;
  }

  function showSidebarError(err) {
    const e = err instanceof ApiError ? err : new ApiError('network', String(err && err.message || err));
    $('conv-list').prepend(el('li', { class: 'error-text', 'data-code': e.code }, e.human()));
  }

  /** loadConversations lists the principal's conversations in the sidebar, newest first. */
  async function loadConversations() {
    let list;
    try {
      list = (await ragd.api('/api/conversations?limit=200')).conversations || [];
    } catch (err) {
      $('conv-list').replaceChildren();
      showSidebarError(err);
      return [];
    }
    const current = state.conversation && state.conversation.id;
    $('conv-list').replaceChildren(...list.map((c) => {
      const open = el('button', { type: 'button', class: 'conv-open', title: c.title || '(untitled)' }, c.title || '(제목 없음 · untitled)');
      const rename = el('button', { type: 'button', class: 'msg-action conv-rename', 'aria-label': 'rename', title: '이름 바꾸기 (rename)' }, '✎');
      const del = el('button', { type: 'button', class: 'msg-action conv-delete', 'aria-label': 'delete', title: '지우기 (delete)' }, '✕');
      const li = el('li', { class: 'conv-item', 'data-id': c.id, 'aria-current': c.id === current ? 'true' : false }, open, rename, del);
      open.addEventListener('click', () => { openConversation(c.id); closeSidebar(); });
      rename.addEventListener('click', () => renameConversation(li, c));
      del.addEventListener('click', () => deleteConversation(c));
      return li;
    }));
    return list;
  }

  function renameConversation(li, c) {
    const field = el('input', { type: 'text', class: 'conv-title-input', maxlength: 200, 'aria-label': 'conversation title' });
    field.value = c.title || '';
    li.replaceChildren(field);
    field.focus();
    field.select();
    let done = false;
    const save = async (keep) => {
      if (done) return;
      done = true;
      if (keep && field.value.trim() !== c.title) {
        try {
          await ragd.api(`/api/conversations/${encodeURIComponent(c.id)}`, {
            method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ title: field.value }),
          });
        } catch (err) {
          await loadConversations();
          showSidebarError(err);
          return;
        }
      }
      loadConversations();
    };
    field.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); save(true); }
      if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); save(false); }
    });
    field.addEventListener('blur', () => save(true));
  }

  async function deleteConversation(c) {
    if (!window.confirm(`"${c.title || 'untitled'}" 대화를 지울까요? (Delete this conversation?)`)) return;
    try {
      await ragd.api(`/api/conversations/${encodeURIComponent(c.id)}`, { method: 'DELETE' });
    } catch (err) {
      showSidebarError(err);
      return;
    }
    if (state.conversation && state.conversation.id === c.id) clearConversation();
    loadConversations();
  }

  /** historyOf rebuilds the history sent with a question from the messages on the page. */
  function historyOf(boxes) {
    const out = [];
    for (const b of boxes) {
      if (b.dataset.role === 'user') out.push({ role: 'user', content: b.querySelector('.msg-text').textContent });
      else if (turns.has(b) && b.dataset.state !== 'error') out.push({ role: 'assistant', content: turns.get(b).text, document_ids: turns.get(b).documents || [] });
    }
    return out.slice(-2 * HISTORY_TURNS);
  }

  function clearConversation() {
    if (state.controller) state.controller.abort();
    state.conversation = null;
    state.history = [];
    cancelEdit();
    remember('');
    closeSource();
    for (const m of [...conversation.children]) if (m.id !== 'welcome') m.remove();
    setScope([], []);
  }

  /** openConversation shows a saved conversation: its messages, answers with their sources, and its scope. */
  async function openConversation(id) {
    let c;
    try {
      c = await ragd.api(`/api/conversations/${encodeURIComponent(id)}`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') { remember(''); return; }
      showSidebarError(err);
      return;
    }
    clearConversation();
    state.conversation = c;
    remember(c.id);
    setScope(c.collections, c.document_ids);
    let question = null;
    for (const m of c.messages || []) {
      if (m.role === 'user') {
        question = addUser(m.content, m.id);
        continue;
      }
      const turn = newTurn(question || addUser(''));
      setSources(turn, m.passages || m.sources);
      // The answer as it was shown: its details (citation check, weak sentences, generator…) and the rest.
      const done = Object.assign({}, m.details || {}, { answer: m.content, question: question ? question.querySelector('.msg-text').textContent : '',
        sources: m.sources || [], passages: m.passages || [], search_info: m.search_info || {}, not_found: m.not_found,
        stopped: m.stopped, message_ids: question ? [question.dataset.id, m.id] : null });
      finish(turn, done);
      question = null;
    }
    state.history = historyOf([...conversation.querySelectorAll('.msg[data-role]')]);
    for (const li of $('conv-list').children) li.setAttribute('aria-current', String(li.dataset.id === c.id));
    scrollDown();
  }

  $('new-conversation').addEventListener('click', () => { clearConversation(); loadConversations(); input.focus(); });
  $('new-chat').addEventListener('click', () => { clearConversation(); loadConversations(); closeSidebar(); input.focus(); });

  // On narrow screens the sidebar is a drawer.
  function closeSidebar() {
    document.body.classList.remove('sidebar-open');
    $('sidebar-toggle').setAttribute('aria-expanded', 'false');
  }
  $('sidebar-toggle').addEventListener('click', () => {
    const open = document.body.classList.toggle('sidebar-open');
    $('sidebar-toggle').setAttribute('aria-expanded', String(open));
  });
  // A click outside the open drawer, or Escape, closes it.
  document.addEventListener('click', (e) => {
    if (document.body.classList.contains('sidebar-open') && !e.target.closest('#sidebar, #sidebar-toggle')) closeSidebar();
  });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape') closeSidebar(); });

  // The "/" that focused the question box is not typed into it (preventDefault on keydown stops it in a
  // browser; a key sent as separate down and char events still delivers the char: it is dropped here).
  let slashFocus = false;
  input.addEventListener('beforeinput', (e) => {
    if (slashFocus && e.data === '/') e.preventDefault();
    slashFocus = false;
  });
  document.addEventListener('keyup', (e) => { if (e.key === '/') slashFocus = false; });

  // Keyboard shortcuts: / focuses the question box; Escape stops a streaming answer (and closes the source
  // panel, above); Ctrl+Shift+O starts a new chat; Ctrl+Shift+C copies the last answer.
  document.addEventListener('keydown', (e) => {
    const typing = e.target instanceof HTMLElement && e.target.closest('input, textarea, [contenteditable]');
    if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      slashFocus = true;
      input.focus();
    } else if (e.key === 'Escape' && state.controller) {
      state.controller.abort();
    } else if ((e.ctrlKey || e.metaKey) && e.shiftKey && e.code === 'KeyO') {
      e.preventDefault();
      $('new-conversation').click();
    } else if ((e.ctrlKey || e.metaKey) && e.shiftKey && e.code === 'KeyC') {
      const copy = [...conversation.querySelectorAll('.msg-assistant .answer-actions .copy')].pop();
      if (copy) { e.preventDefault(); copy.click(); }
    }
  });

  ragd.renderStatus($('model-status'));
  (async () => {
    await loadConversations();
    const id = remembered();
    if (id) await openConversation(id);
  })();
  input.focus();
})();
