package textproc

import (
	"strings"
	"sync"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// TermKind says how the analyzer derived a term from the text.
type TermKind uint8

// Term kinds.
const (
	// KindWord is a whole token: a stemmed Latin word, a Hangul word, a number or a spec-like token.
	KindWord TermKind = iota
	// KindStem is a Hangul word with its trailing particle or ending stripped.
	KindStem
	// KindGram is a syllable bigram of a Hangul, Han or kana run.
	KindGram
	// KindPart is a piece of a compound token ("2024" of "2024-01-15", "만원" of "1000만원").
	KindPart
	// KindPair is two neighbouring Korean words, stems joined by "_" ("농민_폭력").
	KindPair
)

// Script is the kind of characters a term is made of.
type Script uint8

// Scripts.
const (
	// ScriptAlpha is letters of an alphabet (Latin, Greek, Cyrillic, …).
	ScriptAlpha Script = iota
	// ScriptHangul is Korean syllables or jamo.
	ScriptHangul
	// ScriptCJK is Han ideographs and Japanese kana.
	ScriptCJK
	// ScriptNumber is digits, possibly with a decimal point.
	ScriptNumber
	// ScriptMixed is anything else: letters with digits, or joiners.
	ScriptMixed
)

// Term is one term of the analysis of a text.
type Term struct {
	Text   string
	Kind   TermKind
	Script Script
	// Word is the index of the token the term came from, counted from 0 over the text, so that a caller can
	// tell neighbouring words (the hash embedder forms word bigrams from it).
	Word int
	// Stop marks a stop-word or a term derived from one.
	Stop bool
}

// Analyze normalises text and calls fn for each of its terms, in text order. IndexTerms and QueryTerms are
// built on it; the hash embedder uses it to see the same words as the keyword index.
func Analyze(text string, fn func(Term)) {
	rs := []rune(Normalize(text))
	a := analyzer{fn: fn, pairWord: -2}
	tok := make([]rune, 0, 32)
	n := len(rs)
	for i := 0; i < n; {
		r := rs[i]
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !isJoiner(r) {
			i++
			continue
		}
		tok = tok[:0]
		a.humps = a.humps[:0]
	scan:
		for ; i < n; i++ {
			r := rs[i]
			switch {
			case unicode.IsLetter(r) || unicode.IsNumber(r):
				if r < unicode.MaxASCII && unicode.IsLetter(r) && len(tok) > 0 && camelBoundary(rs, i) {
					a.humps = append(a.humps, len(tok))
				}
				tok = append(tok, unicode.ToLower(r))
			case unicode.IsMark(r):
				// dropped: FTS5's unicode61 tokenizer would split the word here
			case isJoiner(r):
				tok = append(tok, r)
			case r == '\'' || r == '’':
				if len(tok) == 0 || !unicode.IsLetter(tok[len(tok)-1]) || i+1 >= n || !unicode.IsLetter(rs[i+1]) {
					break scan
				}
				tok = append(tok, '\'')
			case r == ',':
				// a digit-group comma ("1,000") joins; any other comma separates
				if len(tok) == 0 || !isDigit(tok[len(tok)-1]) || !digitGroup(rs, i+1) {
					break scan
				}
			default:
				break scan
			}
		}
		a.token(tok)
	}
}

// digitGroup reports whether rs[i:] starts with exactly three digits.
func digitGroup(rs []rune, i int) bool {
	if i+3 > len(rs) {
		return false
	}
	for j := i; j < i+3; j++ {
		if !isDigit(rs[j]) {
			return false
		}
	}
	return i+3 == len(rs) || !isDigit(rs[i+3])
}

func isJoiner(r rune) bool {
	switch r {
	case '.', '-', '/', '_', '+', '#', '%':
		return true
	}
	return false
}

func isDigit(r rune) bool { return r < unicode.MaxASCII && '0' <= r && r <= '9' || unicode.IsNumber(r) }

func isHangul(r rune) bool { return unicode.Is(unicode.Hangul, r) }

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// class of a rune inside a token.
type class uint8

const (
	cAlpha class = iota
	cDigit
	cHangul
	cCJK
	cJoin
)

func classOf(r rune) class {
	switch {
	case isJoiner(r):
		return cJoin
	case isDigit(r):
		return cDigit
	case r < 0x1100:
		return cAlpha
	case isHangul(r):
		return cHangul
	case isCJK(r):
		return cCJK
	}
	return cAlpha
}

type analyzer struct {
	fn   func(Term)
	word int
	cls  []class
	// humps are the offsets in the current token where a camelCase identifier starts a new part.
	humps []int
	// the previous Hangul word's stem and index, for word pairs
	pair     string
	pairWord int
}

func (a *analyzer) emit(text string, kind TermKind, script Script, stop bool) {
	a.fn(Term{Text: text, Kind: kind, Script: script, Word: a.word, Stop: stop})
}

// token analyses one lower-cased token of letters, digits, joiners and inner apostrophes.
func (a *analyzer) token(tok []rune) {
	humps := len(a.humps) > 0 && !strings.ContainsRune(string(tok), '\'')
	scanned := tok
	tok = trimToken(tok)
	if len(tok) == 0 {
		return
	}
	defer func() {
		if humps {
			a.camelParts(scanned)
		}
		a.word++
	}()

	// Classify; a decimal point between digits belongs to the number.
	cls := a.cls[:0]
	split, first := false, classOf(tok[0])
	single := true
	for i, r := range tok {
		c := classOf(r)
		if c == cJoin && r == '.' && i > 0 && i+1 < len(tok) && isDigit(tok[i-1]) && isDigit(tok[i+1]) {
			c = cDigit
		}
		if c == cJoin {
			split = true
		}
		if c != first {
			single = false
		}
		cls = append(cls, c)
	}
	a.cls = cls
	if single {
		a.run(tok, first, KindWord)
		return
	}

	// A compound token: kept whole, then its pieces between joiners, then the runs of each piece.
	pieces := pieces(tok, cls)
	whole := string(tok)
	alphaOnly := true
	for _, c := range cls {
		if c != cAlpha && c != cJoin {
			alphaOnly = false
			break
		}
	}
	if alphaOnly && split {
		// "boundary-layers" → "boundari-layer": stem each piece so that inflections still meet.
		var b strings.Builder
		for i, r := range tok {
			if cls[i] == cJoin {
				b.WriteRune(r)
			}
			for _, p := range pieces {
				if p.start == i {
					b.WriteString(stem(string(tok[p.start:p.end])))
				}
			}
		}
		whole = b.String()
	}
	a.emit(whole, KindWord, ScriptMixed, false)
	if n := len(pieces); alphaOnly && n >= 3 && tok[pieces[n-2].end] == '.' && pieces[n-1].start == pieces[n-2].end+1 {
		// A qualified name "pkg.Type.Method" also gives "type.method", the way code and questions name a
		// method; "pkg.Func" is already whole.
		last := stem(string(tok[pieces[n-2].start:pieces[n-2].end])) + "." + stem(string(tok[pieces[n-1].start:pieces[n-1].end]))
		a.emit(last, KindPart, ScriptMixed, false)
	}
	for _, p := range pieces {
		a.piece(tok[p.start:p.end], cls[p.start:p.end], p.end-p.start < len(tok))
	}
	if initials := joinedLetters(tok, pieces); initials != "" {
		// "A/B", "U.S.", "Q&A"-like initials are also the letters written together ("AB테스트", "US"): their lone
		// letters are dropped as parts, so nothing else would meet the two spellings.
		a.emit(initials, KindPart, ScriptAlpha, false)
	}
}

// joinedLetters returns the letters of tok when it is two or more single letters joined by joiners
// ("a/b", "u.s"), else "".
func joinedLetters(tok []rune, ps []span) string {
	if len(ps) < 2 {
		return ""
	}
	out := make([]rune, 0, len(ps))
	for _, p := range ps {
		if p.end-p.start != 1 || !unicode.IsLetter(tok[p.start]) || tok[p.start] >= unicode.MaxASCII {
			return ""
		}
		out = append(out, tok[p.start])
	}
	return string(out)
}

type span struct{ start, end int }

// pieces returns the spans of tok between joiners. A percent sign after a digit stays with its number
// ("1%" of "1%랑", "1%에서"): a share is not the bare number, which every count and date in a text also gives.
func pieces(tok []rune, cls []class) []span {
	var out []span
	start := -1
	for i := range tok {
		if cls[i] == cJoin {
			if start >= 0 {
				end := i
				if tok[i] == '%' && isDigit(tok[i-1]) {
					end++
				}
				out = append(out, span{start, end})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, span{start, len(tok)})
	}
	return out
}

// piece analyses a joiner-free piece of a compound token; emitWhole says whether the piece differs from
// the token (which was already emitted).
func (a *analyzer) piece(p []rune, cls []class, emitWhole bool) {
	// Runs of one class; Hangul/CJK boundaries always split (Korean counters and units attach to numbers:
	// "1989년", "1000만원"), letter/digit boundaries only when every run is at least two long ("covid19"
	// but not "d80", "mp3").
	type run struct {
		start, end int
		c          class
	}
	var runs []run
	for i := range p {
		if len(runs) > 0 && runs[len(runs)-1].c == cls[i] {
			runs[len(runs)-1].end = i + 1
			continue
		}
		runs = append(runs, run{i, i + 1, cls[i]})
	}
	if len(runs) == 1 {
		if emitWhole {
			a.run(p, runs[0].c, KindPart)
		}
		return
	}
	if emitWhole {
		a.emit(string(p), KindPart, ScriptMixed, false)
	}
	splitAD := true
	for _, r := range runs {
		if (r.c == cAlpha || r.c == cDigit) && r.end-r.start < 2 {
			splitAD = false
		}
	}
	for i := 0; i < len(runs); {
		r := runs[i]
		j := i + 1
		if !splitAD && (r.c == cAlpha || r.c == cDigit) {
			// merge neighbouring letters and digits into one mixed part ("d80" inside "d80급")
			for j < len(runs) && (runs[j].c == cAlpha || runs[j].c == cDigit) {
				j++
			}
		}
		if j == i+1 {
			a.run(p[r.start:r.end], r.c, KindPart)
		} else if runs[j-1].end-r.start < len(p) {
			a.emit(string(p[r.start:runs[j-1].end]), KindPart, ScriptMixed, false)
		}
		i = j
	}
}

// run analyses a run of one class.
func (a *analyzer) run(r []rune, c class, kind TermKind) {
	switch c {
	case cAlpha:
		if kind == KindPart && len(r) == 1 {
			return // a lone letter of a compound ("x" of "x-ray") only adds noise
		}
		w := string(r)
		a.emit(stem(w), kind, ScriptAlpha, englishStop[w])
	case cDigit:
		a.emit(string(r), kind, ScriptNumber, false)
	case cHangul:
		a.syllables(r, kind, ScriptHangul)
	case cCJK:
		a.syllables(r, kind, ScriptCJK)
	}
}

// syllables emits a Hangul (or Han/kana) word: whole, particle-stripped, and as syllable bigrams.
func (a *analyzer) syllables(r []rune, kind TermKind, script Script) {
	w := string(r)
	stripped := w
	if script == ScriptHangul {
		stripped = stripKorean(r)
	}
	stop := script == ScriptHangul && (koreanStop[w] || koreanStop[stripped])
	a.emit(w, kind, script, stop)
	if stripped != w {
		a.emit(stripped, KindStem, script, stop)
		// bigrams of the stem only: "석이" of "임종석이" would match every "…석이" and measured worse
		r = r[:len([]rune(stripped))]
	}
	for i := 0; i+1 < len(r); i++ {
		a.emit(string(r[i:i+2]), KindGram, script, stop)
	}
	if script != ScriptHangul || kind != KindWord || stop {
		return
	}
	// A pair of neighbouring Korean words ("농민_폭력") gives BM25 some phrase evidence; English pairs
	// measured worse on Cranfield, so only Hangul words pair up.
	if a.pairWord == a.word-1 {
		a.emit(a.pair+"_"+stripped, KindPair, script, false)
	}
	a.pair, a.pairWord = stripped, a.word
}

// trimToken drops possessive "'s", inner apostrophes and joiners at the ends, keeping "c++"/"c#" endings of
// short words and a percent sign after a number.
func trimToken(tok []rune) []rune {
	if n := len(tok); n > 2 && tok[n-1] == 's' && tok[n-2] == '\'' {
		tok = tok[:n-2]
	}
	out := tok[:0]
	for _, r := range tok {
		if r != '\'' {
			out = append(out, r)
		}
	}
	tok = out
	for len(tok) > 0 && isJoiner(tok[0]) {
		tok = tok[1:]
	}
	end := len(tok)
	for end > 0 && isJoiner(tok[end-1]) {
		end--
	}
	if end < len(tok) && end > 0 {
		tail := tok[end:]
		switch {
		case tail[0] == '%' && isDigit(tok[end-1]):
			end++
		case (tail[0] == '+' || tail[0] == '#') && end <= 3 && allLetters(tok[:end]):
			for end < len(tok) && tok[end] == tail[0] {
				end++
			}
		}
	}
	return tok[:end]
}

func allLetters(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// stem returns the English Snowball stem of a lower-case word; words of other alphabets are returned as
// they are.
func stem(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	if len(w) <= 2 {
		return w
	}
	stems.RLock()
	st, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return st
	}
	st = english.Stem(w, true)
	stems.Lock()
	if len(stems.m) >= maxStems {
		stems.m = make(map[string]string, maxStems) // a crude bound: vocabularies are Zipfian, it refills fast
	}
	stems.m[w] = st
	stems.Unlock()
	return st
}

// stems caches Snowball stems: stemming is most of the analyzer's time and a corpus repeats its words.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxStems = 100_000

// camelBoundary reports whether rs[i], an ASCII letter inside a token, starts a part of a camelCase or
// PascalCase identifier: an upper-case letter after a lower-case one ("parse|Query"), or the last capital of
// an acronym before a lower-case letter ("HTTP|Server").
func camelBoundary(rs []rune, i int) bool {
	r, p := rs[i], rs[i-1]
	if !unicode.IsUpper(r) {
		return false
	}
	if unicode.IsLower(p) && p < unicode.MaxASCII {
		return true
	}
	return unicode.IsUpper(p) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && rs[i+1] < unicode.MaxASCII
}

// camelParts emits the parts of the identifiers in tok (the token as scanned, lower-cased) that start at
// a.humps, as stemmed KindPart terms: "parseQuery" also gives "pars" and "queri", so that a question
// naming the function and one naming its words both find it. Parts are cut only inside runs of ASCII
// letters; a part of one letter is dropped (a.run does that).
func (a *analyzer) camelParts(tok []rune) {
	letter := func(i int) bool { return tok[i] < unicode.MaxASCII && unicode.IsLetter(tok[i]) }
	h := 0
	for i := 0; i < len(tok); {
		if !letter(i) {
			i++
			continue
		}
		end := i
		for end < len(tok) && letter(end) {
			end++
		}
		for h < len(a.humps) && a.humps[h] <= i {
			h++
		}
		if h < len(a.humps) && a.humps[h] < end {
			start := i
			for ; h < len(a.humps) && a.humps[h] < end; h++ {
				a.run(tok[start:a.humps[h]], cAlpha, KindPart)
				start = a.humps[h]
			}
			a.run(tok[start:end], cAlpha, KindPart)
		}
		i = end
	}
}
