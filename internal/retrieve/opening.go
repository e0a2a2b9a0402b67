package retrieve

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// openingCoverage is how much of a question's document phrase (documentPhrase) a named document's naming
// fields must hold (Coverage) for the question to be about that document itself.
const openingCoverage = 0.75

// openingPassages returns the opening passages (index 0: the title page, whose first lines the naming fields
// were read from) of the named documents the question is about as a whole — its document phrase, the words
// it opens with up to its subject ("이 법률안은", "검토보고서의 작성 시점은", "this report"), is held by the
// document's naming fields (title, file name, metadata, opening lines), and its last word is a kind of
// document (namesKind: "법률안", "보고서", "회의", "report") — among each named document's
// passages that match the query (lists, one per named document). The store assigns passage IDs in the order
// a version's passages are written, so the lowest ID of a list is the only one that can be the opening
// passage; only that one is read. A question that opens with a place in the document ("회의록에서 …",
// "in the minutes, …") asks about something inside it and has no document phrase.
func (r *Retriever) openingPassages(ctx context.Context, p rag.Principal, query string, lists [][]rag.Candidate) (map[int64]bool, error) {
	if r.opt.OpeningWeight <= 0 {
		return nil, nil
	}
	phrase := documentPhrase(query)
	if !namesKind(phrase) {
		return nil, nil
	}
	var ids []int64
	for _, l := range lists {
		if len(l) > 0 {
			ids = append(ids, slices.MinFunc(l, func(a, b rag.Candidate) int { return cmp.Compare(a.ChunkID, b.ChunkID) }).ChunkID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	hits, err := r.store.Hits(ctx, p, ids)
	if err != nil {
		return nil, err
	}
	out := map[int64]bool{}
	for _, h := range hits {
		if h.Index == 0 && namingCoverage(phrase, textproc.DocumentText(h.Title, h.Source, h.Metadata, h.Text)) >= openingCoverage {
			out[h.ID] = true
		}
	}
	return out, nil
}

// documentPhrase returns the words a question opens with up to and including its subject, topic, object or
// possessor (a Korean word ending in 은/는/이/가/을/를/의), without a leading demonstrative (이, 그, 해당, 본);
// in English, the word after "this", "that" or "these" ("this report"), unless a stop word. "" when the question
// opens with a place or another adverbial ("회의록에서", "에", "로"), or names no such phrase: it asks about
// something in a document, not about the document.
func documentPhrase(q string) string {
	words := strings.Fields(textproc.Normalize(q))
	for i, w := range words {
		if lw := strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })); lw == "this" || lw == "that" || lw == "these" {
			var out []string
			for _, x := range words[i+1:] {
				x = strings.TrimFunc(x, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
				if x == "" || textproc.EnglishStopWord(strings.ToLower(x)) || len(out) == 1 {
					break
				}
				out = append(out, x)
			}
			return strings.Join(out, " ")
		}
	}
	if ph := englishKindPhrase(words); ph != "" {
		return ph
	}
	var out []string
	pointed := false
	for _, w := range words {
		w = strings.TrimRightFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(out) == 0 && demonstratives[w] {
			pointed = true
			continue
		}
		rs := []rune(w)
		if len(rs) < 2 || !unicode.Is(unicode.Hangul, rs[len(rs)-1]) {
			out = append(out, w)
			continue
		}
		if adverbialEnding(w) && !pointed {
			return ""
		}
		out = append(out, w)
		if pointed && adverbialEnding(w) || strings.ContainsRune("은는이가을를의", rs[len(rs)-1]) {
			return strings.Join(out, " ")
		}
		if len(out) == 4 {
			return ""
		}
	}
	return ""
}

// englishKindPhrase returns the noun phrase of an English question whose head is a kind of document and
// which the definite article opens — "the Chapter 13 standing trustee handbook", or "the Handbook for
// Chapter 13 Standing Trustees" with the capitalised name after "for", "of" or "on" — as its words with the
// kind last ("Chapter 13 Standing Trustees Handbook"), the form namesKind reads; "" when there is none. The
// kind is singular: "the WARN notices" are the notices a report lists, not a document.
func englishKindPhrase(words []string) string {
	clean := func(w string) string {
		return strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	for i, w := range words {
		head := clean(w)
		if head == "" || !slices.Contains(documentKinds, strings.ToLower(head)) {
			continue
		}
		j := i
		for j > 0 && clean(words[j-1]) != "" && !textproc.EnglishStopWord(strings.ToLower(clean(words[j-1]))) {
			j--
		}
		if j == 0 || strings.ToLower(clean(words[j-1])) != "the" {
			continue
		}
		var out []string
		for _, x := range words[j:i] {
			out = append(out, clean(x))
		}
		if i+2 < len(words) && slices.Contains([]string{"for", "of", "on"}, strings.ToLower(clean(words[i+1]))) {
			for _, x := range words[i+2:] {
				c := clean(x)
				if c == "" || !unicode.IsUpper([]rune(c)[0]) && !unicode.IsDigit([]rune(c)[0]) {
					break
				}
				out = append(out, c)
			}
		}
		return strings.Join(append(out, head), " ")
	}
	return ""
}

// demonstratives are the Korean words pointing at a document ("이 법률안", "해당 보고서").
var demonstratives = map[string]bool{"이": true, "그": true, "저": true, "해당": true, "본": true, "위": true}

// adverbialEnding reports whether a Korean word ends in a particle of place, direction, means or company.
func adverbialEnding(w string) bool {
	for _, s := range []string{"에서", "에게", "에는", "에선", "으로", "에", "로", "와", "과", "랑", "부터", "까지"} {
		if strings.HasSuffix(w, s) && len([]rune(w)) > len([]rune(s)) {
			return true
		}
	}
	return false
}

// namingCoverage is the share of phrase's words that naming holds, as Coverage counts them, except that a
// Korean word also counts fully when naming holds its stem inside a longer word: a document kind is the
// end of a compound title ("법률안" in "일부개정법률안", "회의" in "환경노동위원회회의록"), and a stem of four
// syllables or more when naming holds it without its last, a kind's suffix (검토보고서 / 검토보고).
//
// A title page sets its title letter-spaced ("…일부개정법률안검 토 보 고"): the words such runs spell
// (textproc.SpacedWords, with a run glued to the word before it read both ways) are naming words too.
func namingCoverage(phrase, naming string) float64 {
	lower := strings.ToLower(naming)
	if spaced := textproc.SpacedWords(naming, true); len(spaced) > 0 {
		lower += "\n" + strings.Join(spaced, "\n")
	}
	return coverageBy(phrase, naming, func(w queryWord, have map[string]struct{}) float64 {
		for _, t := range w.whole {
			rs := []rune(t)
			if len(rs) < 2 || !unicode.Is(unicode.Hangul, rs[0]) {
				continue
			}
			if strings.Contains(lower, t) || len(rs) >= 4 && strings.Contains(lower, string(rs[:len(rs)-1])) {
				return 1
			}
		}
		return w.degree(have)
	})
}

// documentKinds are the nouns that name a kind of document, as the last word of a question's document
// phrase ends with them: "이 개정법률안은", "검토보고서의", "제1차 회의는", "this report". A phrase that ends
// with a topic instead ("메타 광고는") asks about the topic, which a document's title may name too; its title
// page is no better an answer than the topic's other passages.
var documentKinds = []string{
	"법률안", "법안", "개정안", "의안", "법률", "시행령", "시행규칙", "조례", "규정", "지침", "고시", "보고서", "회의록", "의사록",
	"회의", "공고문", "공고", "공문", "안내문", "안내서", "계약서", "약관", "신청서", "제안서", "계획서", "논문", "보도자료",
	"문서", "매뉴얼", "설명서", "백서", "강의록", "강의", "의견서", "판결문", "명세서",
	"report", "bill", "minutes", "notice", "memo", "memorandum", "handbook", "manual", "guide", "policy", "contract",
	"agreement", "paper", "article", "document", "statute", "act", "regulation", "lecture", "transcript", "proposal",
	"filing", "letter", "brochure", "specification", "register",
}

// namesKind reports whether the last word of phrase, without its particle, ends with a Korean kind of
// document ("개정법률안") or is an English one (or its plural).
func namesKind(phrase string) bool {
	f := strings.Fields(strings.ToLower(phrase))
	if len(f) == 0 {
		return false
	}
	last := f[len(f)-1]
	if rs := []rune(last); len(rs) > 1 && unicode.Is(unicode.Hangul, rs[len(rs)-1]) {
		for _, p := range []string{"에서는", "에서", "에는", "으로", "은", "는", "이", "가", "을", "를", "의", "에", "로"} {
			if t := strings.TrimSuffix(last, p); t != last && len([]rune(t)) >= 2 {
				last = t
				break
			}
		}
	}
	for _, k := range documentKinds {
		if k[0] >= 'a' && k[0] <= 'z' && (last == k || last == k+"s") || k[0] > 'z' && strings.HasSuffix(last, k) {
			return true
		}
	}
	return false
}
