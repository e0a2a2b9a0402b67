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
    history: [],      // [{role, content}] — the last turns, sent with each question
    busy: false,
    controller: null, // AbortController of the answer being streamed
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
   */
  function renderAnswer(text, sources, onCite, weak) {
    const { text: source, spans } = withWeakMarks(text || '', weak);
    const html = marked.parse(source, { gfm: true, breaks: true, async: false });
    const frag = DOMPurify.sanitize(html, PURIFY);
    if (spans.length) markWeak(frag, spans);
    linkCitations(frag, sources, onCite);
    return frag;
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
  function linkCitations(root, sources, onCite) {
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
          const b = el('button', { type: 'button', class: 'cite', 'data-n': n, 'aria-label': `source ${n}` }, `[${n}]`);
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
    const first = target.querySelector('mark');
    if (first) first.scrollIntoView({ block: 'nearest' });
  }

  function pages(s) {
    if (!s.page_start) return '—';
    return s.page_end && s.page_end !== s.page_start ? `p. ${s.page_start}–${s.page_end}` : `p. ${s.page_start}`;
  }

  function fmt(x, digits = 3) { return typeof x === 'number' ? x.toFixed(digits) : '—'; }

  /** openSource shows source n of an answer in the side panel. */
  function openSource(turn, n) {
    const s = turn.sources.get(n);
    if (!s) return;
    $('source-title').textContent = s.title || s.source || s.document_id;
    $('source-n').textContent = `[${n}]`;
    $('source-doc').textContent = s.source || s.document_id;
    $('source-page').textContent = pages(s);
    $('source-section').textContent = s.section || '—';
    $('source-scores').textContent = `vector ${fmt(s.vector_score)} (#${s.vector_rank || '—'}) · keyword ${fmt(s.keyword_score, 2)} (#${s.keyword_rank || '—'}) · fused ${fmt(s.fused_score, 4)} · rerank ${reranked(s)}`;
    const passage = s.passage || '';
    highlight($('source-passage'), passage, highlightRanges(passage, citedSentences(turn.text, n)));
    const panel = $('source-panel');
    panel.hidden = false;
    panel.dataset.n = String(n);
    $('source-close').focus({ preventScroll: true });
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
      latency);
  }

  function scrollDown() { conversation.scrollTop = conversation.scrollHeight; }

  function addUser(text) {
    conversation.append(el('article', { class: 'msg msg-user' }, text));
  }

  /** Turn is one assistant answer as it streams. */
  function newTurn() {
    const answerEl = el('div', { class: 'answer' });
    const typing = el('span', { class: 'typing', 'aria-label': 'answering' }, el('span'), el('span'), el('span'));
    const box = el('article', { class: 'msg msg-assistant streaming', 'data-state': 'waiting' }, typing, answerEl);
    conversation.append(box);
    const turn = { box, answerEl, typing, text: '', sources: new Map(), frame: 0 };
    turn.render = () => {
      if (turn.frame) return;
      turn.frame = requestAnimationFrame(() => {
        turn.frame = 0;
        turn.answerEl.replaceChildren(renderAnswer(turn.text, turn.sources, (n) => openSource(turn, n)));
        scrollDown();
      });
    };
    return turn;
  }

  function setSources(turn, list) {
    turn.sources = new Map((list || []).map((s) => [s.n, s]));
  }

  function finish(turn, done) {
    if (turn.frame) { cancelAnimationFrame(turn.frame); turn.frame = 0; }
    turn.typing.remove();
    turn.box.classList.remove('streaming');
    if (done.passages) setSources(turn, done.passages);
    turn.text = done.answer || '';
    const frag = renderAnswer(turn.text, turn.sources, (n) => openSource(turn, n), done.weak);
    turn.answerEl.replaceChildren(frag);
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
    turn.box.append(ragdFeedback.section(done), debugPanel(done));
    turn.box.dataset.state = 'done';
    scrollDown();
  }

  function fail(turn, err) {
    if (turn.frame) { cancelAnimationFrame(turn.frame); turn.frame = 0; }
    turn.typing.remove();
    turn.box.classList.remove('streaming');
    turn.box.classList.add('msg-error');
    if (turn.text) turn.answerEl.replaceChildren(renderAnswer(turn.text, turn.sources, (n) => openSource(turn, n)));
    const e = err instanceof ApiError ? err : new ApiError('network', String(err && err.message || err));
    turn.box.append(el('p', { class: 'error-text', 'data-code': e.code }, e.human()));
    turn.box.dataset.state = 'error';
    scrollDown();
  }

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

  async function ask(question) {
    state.busy = true;
    sendButton.disabled = true;
    addUser(question);
    const turn = newTurn();
    scrollDown();
    const controller = new AbortController();
    state.controller = controller;
    const body = { question, history: state.history.slice(-HISTORY_TURNS), stream: true };
    const chosen = pickedDocuments();
    if (chosen.length) body.document_ids = chosen;
    try {
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
    } catch (err) {
      if (err && err.name === 'AbortError') { turn.box.remove(); return; }
      fail(turn, err);
    } finally {
      if (state.controller === controller) state.controller = null;
      state.busy = false;
      sendButton.disabled = false;
    }
  }

  function submit() {
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
    ask(q);
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); submit(); });

  // Korean (and any) IME: Enter that confirms a composition must not send. keydown during composition has
  // isComposing (keyCode 229 in older engines); Safari fires compositionend before that keydown, so a flag
  // cleared one tick later covers it.
  let composing = false;
  input.addEventListener('compositionstart', () => { composing = true; });
  input.addEventListener('compositionend', () => { setTimeout(() => { composing = false; }, 0); });
  input.addEventListener('keydown', (e) => {
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

  /** pickedDocuments returns the ids of the documents checked in the picker ([] means all documents). */
  function pickedDocuments() {
    return [...document.querySelectorAll('#doc-options input:checked')].map((c) => c.value);
  }

  function updatePicked() {
    const n = pickedDocuments().length;
    $('doc-picked').textContent = n ? `(${n})` : '(all)';
  }

  /** loadDocuments lists the ready documents in the picker (the first 500), keeping what was checked. */
  async function loadDocuments() {
    const keep = new Set(pickedDocuments());
    try {
      const page = await ragd.api('/api/documents?status=ready&limit=500');
      $('doc-options').replaceChildren(...(page.documents || []).map((d) => el('label', { class: 'doc-option' },
        el('input', { type: 'checkbox', value: d.id, checked: keep.has(d.id) }), ' ', d.title || d.id)));
    } catch (err) {
      $('doc-options').replaceChildren(el('span', { class: 'error' }, (err && err.message) || 'could not list the documents'));
    }
    updatePicked();
  }
  $('doc-picker').addEventListener('toggle', () => { if ($('doc-picker').open) loadDocuments(); });
  $('doc-options').addEventListener('change', updatePicked);

  $('new-conversation').addEventListener('click', () => {
    if (state.controller) state.controller.abort();
    state.history = [];
    closeSource();
    for (const m of [...conversation.children]) if (m.id !== 'welcome') m.remove();
    input.focus();
  });

  ragd.renderStatus($('model-status'));
  input.focus();
})();
