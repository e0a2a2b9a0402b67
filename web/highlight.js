// ragd UI — syntax highlighting of code: code blocks in answers (```go … ```), the passages of source-code
// documents (text/x-<lang>) and code blocks inside passages. A small hand-written tokenizer, no library
// and no network: comments, strings, numbers, keywords, literals, built-in types, function names and, for
// markup, tags and attributes, for about thirty common languages in a few families. It only ever splits the
// code's own text into spans (text nodes), so nothing in the code is read as HTML.
'use strict';

const ragdHighlight = (() => {
  const { el } = ragd;

  const words = (s) => new Set(s.split(/\s+/).filter(Boolean));
  const C_COMMENTS = { line: ['//'], block: [['/*', '*/']] };
  const HASH = { line: ['#'], block: [] };

  // Each language: comments (line prefixes, block open/close), string quotes, keywords, literals and types;
  // ci: keywords in any case; vars: $name variables; triple: """ and ''' strings; markup: tags.
  const JS_KW = 'async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield';
  const LANGS = {
    go: Object.assign({ str: ['"', '`', "'"], kw: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var', lit: 'true false nil iota', types: 'any bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr' }, C_COMMENTS),
    javascript: Object.assign({ str: ['"', "'", '`'], kw: JS_KW, lit: 'true false null undefined NaN Infinity', types: '' }, C_COMMENTS),
    typescript: Object.assign({ str: ['"', "'", '`'], kw: JS_KW + ' abstract as declare enum implements interface keyof namespace private protected public readonly type', lit: 'true false null undefined', types: 'any boolean never number object string symbol unknown void' }, C_COMMENTS),
    java: Object.assign({ str: ['"', "'"], kw: 'abstract assert break case catch class continue default do else enum extends final finally for if implements import instanceof interface native new package private protected public return static super switch synchronized this throw throws transient try var volatile while record yield', lit: 'true false null', types: 'boolean byte char double float int long short void String' }, C_COMMENTS),
    kotlin: Object.assign({ str: ['"', "'"], triple: true, kw: 'as break class continue do else for fun if import in interface is object package return super this throw try typealias val var when while override open data sealed private public internal protected companion', lit: 'true false null', types: 'Int Long Double Float Boolean String Unit Any' }, C_COMMENTS),
    c: Object.assign({ str: ['"', "'"], kw: 'auto break case const continue default do else enum extern for goto if inline register restrict return sizeof static struct switch typedef union volatile while #include #define #ifdef #ifndef #endif #if #else #pragma', lit: 'NULL true false', types: 'char double float int long short signed unsigned void size_t bool' }, C_COMMENTS),
    'c++': Object.assign({ str: ['"', "'"], kw: 'auto break case catch class const constexpr continue default delete do else enum explicit export extern for friend goto if inline namespace new noexcept operator private protected public return sizeof static struct switch template this throw try typedef typename union using virtual volatile while #include #define #ifdef #ifndef #endif #if #else #pragma', lit: 'nullptr NULL true false', types: 'bool char double float int long short signed unsigned void size_t std string vector' }, C_COMMENTS),
    csharp: Object.assign({ str: ['"', "'"], kw: 'abstract as async await base break case catch class const continue default delegate do else enum event explicit extern finally fixed for foreach if implicit in interface internal is lock namespace new operator out override params private protected public readonly record ref return sealed static struct switch this throw try typeof using var virtual void while', lit: 'true false null', types: 'bool byte char decimal double float int long object sbyte short string uint ulong ushort' }, C_COMMENTS),
    rust: Object.assign({ str: ['"'], kw: 'as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while', lit: 'true false None Some Ok Err', types: 'bool char f32 f64 i8 i16 i32 i64 i128 isize str u8 u16 u32 u64 u128 usize String Vec Option Result Box' }, C_COMMENTS),
    swift: Object.assign({ str: ['"'], kw: 'as break case catch class continue default defer do else enum extension fileprivate for func guard if import in init internal let private protocol public return self static struct switch throw throws try var where while', lit: 'true false nil', types: 'Bool Double Float Int String Void' }, C_COMMENTS),
    php: Object.assign({ str: ['"', "'"], vars: true, kw: 'abstract and as break case catch class clone const continue declare default do echo else elseif empty extends final finally fn for foreach function global if implements include interface isset namespace new or private protected public require return static switch throw trait try use var while yield', lit: 'true false null TRUE FALSE NULL', types: 'array bool float int string void' }, { line: ['//', '#'], block: [['/*', '*/']] }),
    css: Object.assign({ dash: true, str: ['"', "'"], kw: '@media @import @font-face @keyframes @supports !important', lit: '', types: '' }, { line: [], block: [['/*', '*/']] }),
    python: Object.assign({ str: ['"', "'"], triple: true, kw: 'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case', lit: 'True False None', types: 'int float str bool list dict set tuple bytes object self' }, HASH),
    ruby: Object.assign({ str: ['"', "'"], kw: 'alias and begin break case class def defined do else elsif end ensure for if in module next not or redo rescue retry return self super then unless until when while yield require attr_accessor', lit: 'true false nil', types: '' }, HASH),
    shellscript: Object.assign({ str: ['"', "'"], vars: true, kw: 'case do done elif else esac export fi for function if in local readonly return select shift then until while echo exit set unset source cd', lit: 'true false', types: '' }, HASH),
    powershell: Object.assign({ str: ['"', "'"], vars: true, ci: true, kw: 'begin break catch continue do else elseif end exit filter finally for foreach function if in param process return switch throw trap try until while', lit: '$true $false $null', types: '' }, { line: ['#'], block: [['<#', '#>']] }),
    yaml: Object.assign({ dash: true, str: ['"', "'"], keys: true, kw: '', lit: 'true false null yes no on off ~', types: '' }, HASH),
    toml: Object.assign({ dash: true, str: ['"', "'"], triple: true, keys: true, kw: '', lit: 'true false', types: '' }, HASH),
    makefile: Object.assign({ str: ['"', "'"], vars: true, kw: 'ifeq ifneq ifdef ifndef else endif include define endef export .PHONY', lit: '', types: '' }, HASH),
    dockerfile: Object.assign({ str: ['"', "'"], vars: true, ci: true, kw: 'FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD STOPSIGNAL HEALTHCHECK SHELL AS', lit: '', types: '' }, HASH),
    r: Object.assign({ str: ['"', "'"], kw: 'if else repeat while function for in next break return library', lit: 'TRUE FALSE NULL NA Inf NaN', types: '' }, HASH),
    perl: Object.assign({ str: ['"', "'"], vars: true, kw: 'my our local sub if elsif else unless while until for foreach return use package require last next', lit: 'undef', types: '' }, HASH),
    elixir: Object.assign({ str: ['"', "'"], kw: 'def defp defmodule do end if else unless case cond fn when with import alias use require', lit: 'true false nil', types: '' }, HASH),
    sql: Object.assign({ str: ["'", '"'], ci: true, kw: 'add all alter and as asc begin between by case check commit constraint create cross default delete desc distinct drop else end exists foreign from full group having if in index inner insert into is join key left like limit not null offset on or order outer primary references returning right rollback select set table then transaction union unique update using values view when where with', lit: 'true false null', types: 'bigint blob boolean char date decimal double float int integer numeric real serial text timestamp timestamptz varchar jsonb vector' }, { line: ['--'], block: [['/*', '*/']] }),
    lua: Object.assign({ str: ['"', "'"], kw: 'and break do else elseif end for function goto if in local not or repeat return then until while', lit: 'true false nil', types: '' }, { line: ['--'], block: [['--[[', ']]']] }),
    haskell: Object.assign({ str: ['"'], kw: 'case class data deriving do else if import in instance let module newtype of then type where', lit: 'True False Nothing Just', types: 'Int Integer Double String Bool IO Maybe' }, { line: ['--'], block: [['{-', '-}']] }),
    json: { line: [], block: [], str: ['"'], keys: true, kw: '', lit: 'true false null', types: '' },
    ini: Object.assign({ dash: true, str: ['"'], keys: true, kw: '', lit: 'true false', types: '' }, { line: [';', '#'], block: [] }),
    xml: { dash: true, line: [], block: [['<!--', '-->']], str: ['"', "'"], markup: true, kw: '', lit: '', types: '' },
  };
  const ALIASES = {
    golang: 'go', js: 'javascript', jsx: 'javascript', mjs: 'javascript', node: 'javascript', ts: 'typescript', tsx: 'typescript',
    kt: 'kotlin', kts: 'kotlin', scala: 'java', groovy: 'java', dart: 'java', h: 'c', objc: 'c', cpp: 'c++', cc: 'c++', cxx: 'c++', hpp: 'c++',
    cs: 'csharp', 'c#': 'csharp', rs: 'rust', zig: 'rust', py: 'python', python3: 'python', rb: 'ruby', sh: 'shellscript',
    bash: 'shellscript', zsh: 'shellscript', shell: 'shellscript', console: 'shellscript', ps1: 'powershell', yml: 'yaml',
    scss: 'css', sass: 'css', less: 'css', mk: 'makefile', make: 'makefile', docker: 'dockerfile', containerfile: 'dockerfile',
    pl: 'perl', ex: 'elixir', exs: 'elixir', hs: 'haskell', postgres: 'sql', postgresql: 'sql', sqlite: 'sql', mysql: 'sql',
    jsonc: 'json', json5: 'json', html: 'xml', xhtml: 'xml', svg: 'xml', vue: 'xml', svelte: 'xml',
  };

  const compiled = new Map();
  /** lang is the compiled rules of a language name (a fence's info word or the <lang> of text/x-<lang>), or null. */
  function lang(name) {
    let n = String(name || '').toLowerCase().trim();
    n = ALIASES[n] || n;
    const def = LANGS[n];
    if (!def) return null;
    if (!compiled.has(n)) {
      const fold = (s) => new Set([...words(s)].map((w) => (def.ci ? w.toLowerCase() : w)));
      compiled.set(n, Object.assign({}, def, { name: n, kw: fold(def.kw), lit: fold(def.lit), types: fold(def.types) }));
    }
    return compiled.get(n);
  }

  const NUMBER = /(?:0[xX][\da-fA-F_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)[a-zA-Z]*/y;
  const WORD = /[#@$!.]?[A-Za-z_]\w*/y;
  const DASHED = /[#@$!.]?[A-Za-z_][\w]*(?:-[A-Za-z_]\w*)*/y; // css properties, yaml keys, tag names

  /**
   * tokens splits code into [class, text] pairs of one language (class "" for plain text). Every character
   * of code is in exactly one token, in order.
   */
  function tokens(code, L) {
    const out = [];
    let plain = '';
    const push = (cls, text) => {
      if (!cls) { plain += text; return; }
      if (plain) { out.push(['', plain]); plain = ''; }
      out.push([cls, text]);
    };
    let i = 0;
    let inTag = false;
    while (i < code.length) {
      const rest = (s) => code.startsWith(s, i);
      // Block comments, then line comments.
      const block = L.block.find(([open]) => rest(open));
      if (block) {
        const end = code.indexOf(block[1], i + block[0].length);
        const stop = end < 0 ? code.length : end + block[1].length;
        push('hl-com', code.slice(i, stop));
        i = stop;
        continue;
      }
      const line = L.line.find((p) => rest(p));
      if (line && !(L.vars && line === '#' && code[i - 1] === '$')) {
        const end = code.indexOf('\n', i);
        const stop = end < 0 ? code.length : end;
        push('hl-com', code.slice(i, stop));
        i = stop;
        continue;
      }
      const ch = code[i];
      // Markup: a tag's name after < or </, its attributes' names while inside it.
      if (L.markup) {
        if (ch === '<' && /[A-Za-z/!?]/.test(code[i + 1] || '')) {
          const m = /<\/?[!?]?[\w:-]*/y;
          m.lastIndex = i;
          const t = m.exec(code)[0];
          push('hl-tag', t);
          i += t.length;
          inTag = true;
          continue;
        }
        if (inTag && (ch === '>' || rest('/>'))) {
          const t = ch === '>' ? '>' : '/>';
          push('hl-tag', t);
          i += t.length;
          inTag = false;
          continue;
        }
        if (!inTag) { push('', ch); i++; continue; }
      }
      // Strings: triple-quoted, then one quote with backslash escapes (not across lines, except `).
      if (L.str.includes(ch)) {
        const triple = L.triple && rest(ch + ch + ch) ? ch + ch + ch : '';
        let j = i + (triple ? 3 : 1);
        if (triple) {
          const end = code.indexOf(triple, j);
          j = end < 0 ? code.length : end + 3;
        } else {
          while (j < code.length && code[j] !== ch && (code[j] !== '\n' || ch === '`')) j += code[j] === '\\' ? 2 : 1;
          j = Math.min(code.length, j + 1);
        }
        const s = code.slice(i, j);
        // A quoted key ("name": …) in JSON-like languages.
        const key = L.keys && /^\s*:/.test(code.slice(j, j + 8));
        push(key ? 'hl-key' : 'hl-str', s);
        i = j;
        continue;
      }
      if (/\d/.test(ch) || (ch === '.' && /\d/.test(code[i + 1] || ''))) {
        const prev = code[i - 1] || '';
        if (!/[\w$]/.test(prev)) {
          NUMBER.lastIndex = i;
          const m = NUMBER.exec(code);
          if (m && m[0]) { push('hl-num', m[0]); i += m[0].length; continue; }
        }
      }
      if (/[A-Za-z_#@$!.]/.test(ch)) {
        const re = L.dash ? DASHED : WORD;
        re.lastIndex = i;
        const m = re.exec(code);
        const prev = code[i - 1] || '';
        if (m && m[0] && !/[\w$]/.test(prev)) {
          const w = m[0];
          const k = L.ci ? w.toLowerCase() : w;
          let cls = '';
          if (L.markup) cls = 'hl-attr';
          else if (L.vars && w[0] === '$') cls = 'hl-var';
          else if (L.kw.has(k)) cls = 'hl-kw';
          else if (L.lit.has(k)) cls = 'hl-lit';
          else if (L.types.has(k)) cls = 'hl-type';
          else if (L.keys && /^[ \t]*[:=]/.test(code.slice(i + w.length, i + w.length + 4)) && /(^|\n)[ \t-]*$/.test(code.slice(Math.max(0, i - 80), i))) cls = 'hl-key';
          else if (!/[.#@$!-]/.test(w) && code[i + w.length] === '(') cls = 'hl-fn';
          if (w[0] === '.' || w[0] === '!' || (w[0] === '#' && cls === '') || (w[0] === '@' && cls === '')) {
            // ".field", "#id" and the like: only the punctuation's own word counts, as plain text.
            push('', w[0]);
            i += 1;
            continue;
          }
          push(cls, w);
          i += w.length;
          continue;
        }
      }
      push('', ch);
      i++;
    }
    if (plain) out.push(['', plain]);
    return out;
  }

  /** fill puts code into target as highlighted spans (plain text when the language is not known). */
  function fill(target, code, name) {
    const L = lang(name);
    target.replaceChildren();
    if (!L) { target.textContent = code; return; }
    target.classList.add('hl');
    target.dataset.lang = L.name;
    for (const [cls, text] of tokens(code, L)) target.append(cls ? el('span', { class: cls }, text) : document.createTextNode(text));
  }

  /** element highlights every code block (pre > code, marked's class "language-x") under root in place. */
  function element(root) {
    for (const code of root.querySelectorAll('pre > code')) {
      const m = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className || '');
      if (m) fill(code, code.textContent, m[1]);
    }
  }

  /** codeLang is the language of a source-code media type (text/x-go → "go"), "" for any other. */
  function codeLang(mediaType) {
    const m = /^text\/x-([\w+#.-]+)$/.exec(mediaType || '');
    return m ? m[1] : '';
  }

  // Strong marks of a language, for code whose language nobody named (a code block of a markdown document is
  // a passage of kind "code" without its fence): the first that matches wins; none, and it stays plain.
  const GUESSES = [
    ['go', /^\s*package \w+\s*$|\bfunc (\(\w+ \*?\w+\) )?\w+\(|\w+ := /m],
    ['python', /^\s*(def \w+\(.*\):|class \w+.*:\s*$|from [\w.]+ import |import \w+\s*$)/m],
    ['sql', /^\s*(SELECT|INSERT INTO|UPDATE|CREATE (TABLE|INDEX)|DELETE FROM|WITH \w+ AS)\b/i],
    ['shellscript', /^#!.*\b(ba|z)?sh\b|^\s*\$ \w/m],
    ['c', /^\s*#include\s*[<"]|\bint main\s*\(/m],
    ['javascript', /\b(function\s*\w*\s*\(|const \w+ = |let \w+ = |=> )/],
    ['xml', /^\s*<[A-Za-z!?]/],
    ['json', /^\s*[{[][\s\S]*[}\]]\s*$/],
  ];
  /** guess is the language code looks like, "" when nothing marks it. */
  function guess(code) {
    const g = GUESSES.find(([, re]) => re.test(code));
    return g ? g[0] : '';
  }

  /**
   * passage returns an element (tag, class cls) showing a passage's text: all of it highlighted when it is
   * source code (mediaType text/x-<lang>) or a passage of kind "code" (its language guessed), otherwise the
   * text with its fenced code blocks (```lang) highlighted.
   */
  function passage(tag, cls, text, mediaType, kind) {
    const box = el(tag, { class: cls });
    text = text || '';
    const whole = codeLang(mediaType) || (kind === 'code' ? guess(text) : '');
    if (whole && lang(whole)) {
      const code = el('code', { class: 'hl-code' + (kind === 'code' && !codeLang(mediaType) ? ' hl-block' : '') });
      fill(code, text, whole);
      box.append(code);
      return box;
    }
    const fence = /(^|\n)(```|~~~)[ \t]*([\w+#.-]*)[^\n]*\n([\s\S]*?)(?:\n\2[ \t]*(?=\n|$)|$)/g;
    let last = 0;
    for (const m of text.matchAll(fence)) {
      const start = m.index + m[1].length;
      if (start > last) box.append(document.createTextNode(text.slice(last, start)));
      const code = el('code', { class: 'hl-code hl-block' });
      fill(code, m[4], m[3]);
      box.append(code);
      last = m.index + m[0].length;
    }
    if (last < text.length) box.append(document.createTextNode(text.slice(last)));
    return box;
  }

  return { element, passage, guess, tokens: (code, name) => (lang(name) ? tokens(code, lang(name)) : [['', code]]), fill };
})();
