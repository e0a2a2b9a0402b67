package extractive

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// predicateEndings end Korean verbs and adjectives in questions ("걸려요", "좋을까", "하려면", "알려줘"); a
// question word with one of them and no noun stem the analyzer could strip is a predicate: it says what is
// asked about its arguments, and documents rarely repeat it in the same form.
var predicateEndings = []string{"요", "까", "죠", "줘", "니", "냐", "데", "려면", "으면", "하면", "되면", "다면", "해서",
	"돼서", "나서", "려고", "세여", "가여", "해여", "나여", "까여", "되여", "줄래", "할래", "을래", "는지", "은지", "던가"}

// hadaEndings are endings of 하다/되다 verbs and of the copula that the analyzer does not strip; what they
// leave of a word ("대표발의했나요" → "대표발의") is a noun stem to match.
var hadaEndings = []string{"했나요", "하나요", "했어요", "하세요", "했는데", "하는데", "하려는데", "하려면", "하려고",
	"했는지", "하는지", "할까요", "했죠", "하죠", "됐어요", "되나요", "됐나요", "되는지", "됐는지", "됐는데", "되는데",
	"인가여", "이에요", "인데", "해요", "해야", "하면", "해서", "해도", "돼요", "되요", "돼도", "했다", "됐다", "인지", "이죠"}

// fillers are question words that carry no topic of their own: adverbs of degree and manner, requests,
// and colloquial pronouns.
var fillers = map[string]bool{
	"이렇게": true, "그렇게": true, "저렇게": true, "원래": true, "계속": true, "보통": true, "정말": true, "진짜": true,
	"너무": true, "좀": true, "많이": true, "잘": true, "혹시": true, "그냥": true, "딱": true, "꼭": true, "항상": true,
	"자주": true, "제일": true, "가장": true, "더": true, "다": true, "또": true, "이미": true, "아직": true, "벌써": true,
	"정도": true, "거": true, "게": true, "건": true, "걸": true, "뭐": true, "뭘": true, "머": true, "뭔가": true,
	"이거": true, "그거": true, "저거": true, "이런": true, "그런": true, "저런": true, "근데": true, "그럼": true,
	"그래서": true, "제": true, "내": true, "저희": true, "우리": true, "혹은": true, "대략": true, "보통은": true,
	"그건": true, "이건": true, "저건": true, "그게": true, "이게": true, "저게": true, "그걸": true, "이걸": true,
	"거기": true, "여기": true, "그때": true, "이때": true, "당시": true, "처음": true,
	"만약": true, "만일": true, "그중": true, "이중": true, "그중에": true, "이중에": true, "그중에서": true, "이중에서": true,
	"tell": true, "explain": true, "please": true, "know": true, "describe": true, "give": true, "mean": true,
	"means": true, "meaning": true, "like": true, "want": true,
}

// fillerParticles may follow a filler ("머가", "그거는").
const fillerParticles = "가는를도은이을로"

// questionWordPrefixes open Korean question words, which may carry a particle ("어디서", "언제부터", "몇대몇으로").
var questionWordPrefixes = []string{"언제", "어디", "누구", "누가", "무엇", "뭐", "얼마", "몇", "며칠", "어떻", "어떤", "어느", "왜", "무슨"}

// filler reports whether the question word w (lower-cased) carries no topic: a filler, or a question word
// with at most two syllables of particle.
func filler(w string) bool {
	if fillers[w] || jamoOnly(w) {
		return true
	}
	// A filler with a particle: "머가", "이거는".
	if r, size := utf8.DecodeLastRuneInString(w); strings.ContainsRune(fillerParticles, r) && fillers[w[:len(w)-size]] {
		return true
	}
	for _, p := range questionWordPrefixes {
		if rest, ok := strings.CutPrefix(w, p); ok && utf8.RuneCountInString(rest) <= 3 {
			return true
		}
	}
	return false
}

// jamoOnly reports whether w is written in bare Hangul letters (jamo) alone: "ㅠㅠ", "ㅋㅋ" are
// emoticons, not words.
func jamoOnly(w string) bool {
	for _, r := range w {
		if !unicode.In(r, unicode.Hangul) || r >= 0xAC00 && r <= 0xD7A3 {
			return false
		}
	}
	return w != ""
}

// predicate reports whether the question word w (lower-cased) is a Korean predicate: it ends in a verbal
// ending and the analyzer found no noun stem in it.
func predicate(w string, stem string) bool {
	if stem != "" || utf8.RuneCountInString(w) < 2 || !isHangulWord(w) {
		return false
	}
	for _, e := range predicateEndings {
		if strings.HasSuffix(w, e) {
			return true
		}
	}
	return false
}

// conditional reports whether the question word w (lower-cased) may be a verb in the conditional ("빼면",
// "넣으면"): a Hangul word ending in 면 in which the analyzer found no noun stem. It stays a focus word — "빼면
// 어떻게 돼요?" asks what follows from it — and matches the other forms of its verb as a predicate does
// ("빠지면"); a noun ending so ("화면") gives readings no verb form shares.
func conditional(w, stem string) bool {
	return stem == "" && utf8.RuneCountInString(w) >= 2 && isHangulWord(w) && strings.HasSuffix(w, "면")
}

// hadaStem returns the noun a 하다/되다 verb or copula form is built on ("대표발의했나요" → "대표발의"), or "".
func hadaStem(w string) string {
	if !isHangulWord(w) {
		return ""
	}
	for _, e := range hadaEndings {
		if rest, ok := strings.CutSuffix(w, e); ok && utf8.RuneCountInString(rest) >= 2 {
			return rest
		}
	}
	return ""
}

func isHangulWord(w string) bool {
	for _, r := range w {
		if !unicode.Is(unicode.Hangul, r) {
			return false
		}
	}
	return w != ""
}

// Question shapes beyond the answer types of types.go.
var (
	// listCues ask for a set of things: documents, conditions, steps.
	listCues = []string{"서류", "조건", "자격", "요건", "단계", "절차", "순서", "목록", "종류", "항목", "가지", "방법", "기준",
		"준비물", "필요한 것", "steps", "documents", "requirements", "conditions", "list", "stages", "phases", "kinds", "types of"}
	// valueCues ask for one value: who, what, where, which.
	valueCues = []string{"누구", "누가", "무엇", "뭐", "어디", "어느", "무슨", "이름", "몇", "얼마", "언제",
		"who", "whom", "whose", "what", "where", "which", "when", "how many", "how much"}
)

// wantsList reports whether the question asks for a set of things (its answer is a list), and the cue
// that says so ("서류", "steps"). A question asking when does not, whatever it names: "서류제출 대상자에게는
// 언제 안내하나요?" asks for a date, not for the documents.
func wantsList(q string) (string, bool) {
	if answerType(q) == typeTime {
		return "", false
	}
	lq := " " + strings.ToLower(q) + " "
	for _, c := range listCues {
		if hasCue(q, []string{c}) {
			if c[0] < 0x80 && !strings.Contains(lq, " "+c+" ") {
				c = strings.TrimSuffix(c, "s") // "steps?" → the cue as the text may write it
			}
			return c, true
		}
	}
	return "", false
}

// explainCues ask how, why or whether.
var explainCues = []string{"어떻게", "어떡", "어떻해", "왜", "방법", "이유", "원인", "차이", "달라", "되나요", "되요", "돼요",
	"할까요", "해야", "하나요", "있나요", "없나요", "맞나요", "맞죠", "아닌가요", "아니에요", "괜찮",
	"how", "why", "should", "can i", "is it", "do i", "does it"}

// explanatory reports whether the question asks how, why, or whether rather than for one value: its
// answer is the sentence that matches it and the one that follows (a lecture says what is asked, then
// answers it).
func explanatory(q string) bool {
	return answerType(q) == typeNone && !hasCue(q, valueCues) && hasCue(q, explainCues)
}

// remedyCues ask what to do (about a problem the question describes): "어떻해요", "어떻게 해야 하나요",
// "what should I do".
var remedyCues = []string{"어떻게 해", "어떻게 하", "어떡", "어떻해", "어쩌", "어떻게 고치", "해결", "what should i do",
	"what do i do", "how do i fix", "how can i fix"}

// prescriptions end a sentence that tells the reader what to do: "…면 돼요", "…세요", "…야 합니다".
var prescriptions = []string{"면 돼요", "면 됩니다", "면 된다", "면 되죠", "세요", "십시오", "야 합니다", "야 해요", "야 한다",
	"야 돼요", "야 됩니다", "게 좋아요", "게 좋습니다", "게 좋다", "걸 권합니다", "기 바랍니다"}

// prescribes reports whether the sentence tells what to do: a Korean sentence ending in an instruction
// (prescriptions), an English one saying "should", "must" or "need to".
func prescribes(text string) bool {
	t := strings.TrimRight(strings.TrimSpace(text), ".!。 ")
	for _, p := range prescriptions {
		if strings.HasSuffix(t, p) {
			return true
		}
	}
	return hasCue(t, []string{"should", "must", "need to"})
}

func hasCue(question string, cues []string) bool {
	q := " " + strings.ToLower(question) + " "
	for _, c := range cues {
		if c[0] < 0x80 {
			if strings.Contains(q, " "+c+" ") || strings.Contains(q, " "+c+"?") {
				return true
			}
			continue
		}
		if strings.Contains(q, c) {
			return true
		}
	}
	return false
}

// withWords follow "X와" or "X과" when X is what something is done with, compared to or like ("휴잭맨과 함께",
// "전작과 달리"): X is then no thing paired with the next word.
var withWords = []string{"함께", "같이", "달리", "더불어", "마찬가지", "동시에", "비교", "비슷", "유사", "반대"}

// conjunctions join two nouns ("카카오 모먼트랑 메타 광고", "A와 B").
var conjunctions = []string{"이랑", "랑", "하고", "와", "과", "vs", "및"}

// rival reports whether the question pairs something the passages never name with something they do: "X랑
// Y" (X beside or compared with Y: "카카오 모먼트랑 메타 광고", "GA4랑 메타 광고"), or "X Y" where the passages
// qualify Y with other words ("틱톡 픽셀" against their "메타 픽셀") and X is a name (a Latin-script word
// written as one: "TikTok", "GA4") or the bare noun a Korean question opens with (its topic). Such a
// question asks about X, which the documents do not cover, however well they cover Y.
func rival(question string, qw []qword, sents []sentence, passages []rag.Passage) bool {
	words := splitWords(question)
	var vocab, heads []string
	for _, p := range passages {
		vocab = append(vocab, splitWords(p.Text)...)
		heads = append(heads, splitWords(p.Title+"\n"+p.Section)...)
	}
	found := func(w string) bool {
		q := questionWords(w, "")
		if len(q) == 0 || stopWord(w) {
			return true // nothing to find
		}
		for _, s := range sents {
			if degree(q[0], s.terms) >= 0.5 {
				return true
			}
		}
		return abbreviated(w, vocab)
	}
	// A word a passage's title or section names is what the passages are about, whatever their sentences
	// leave out (an article on "테드 번디" rarely repeats his name): no rival, nor is a name spelt one letter
	// off a word of the passages ("도날드" for "도널드", "포물러" for "포뮬러").
	titled := func(w string) bool {
		for _, f := range []string{w, firstNonEmpty(stemOf(w, textproc.IndexTerms(w)), w)} {
			if utf8.RuneCountInString(f) < 2 && isHangulWord(f) {
				continue
			}
			if slices.ContainsFunc(heads, func(h string) bool { return strings.Contains(h, f) || oneLetterOff(f, h) }) ||
				slices.ContainsFunc(vocab, func(v string) bool { return oneLetterOff(f, v) }) {
				return true
			}
		}
		return false
	}
	for i := 0; i+1 < len(words); i++ {
		x, y := words[i], words[i+1]
		yq := questionWords(y, "")
		if len(yq) == 0 || stopWord(y) || !yq[0].focus || yq[0].stem == "" && adnominal(y) || !found(y) {
			continue
		}
		bare, conj := x, false
		for _, c := range conjunctions {
			if rest, ok := strings.CutSuffix(x, c); ok && utf8.RuneCountInString(rest) >= 2 {
				bare, conj = rest, true
				break
			}
		}
		if fillers[bare] || filler(x) || found(x) || found(bare) || titled(x) || titled(bare) {
			continue
		}
		if conj {
			// "X와 Y" pairs two nouns; "죽음과 관련하여" ties a noun to a verb, "휴잭맨과 함께" to what is done
			// with it, and "…에도 불구하고" is no pair.
			if (!isHangulWord(y) || nounLike(yq[0]) && !slices.ContainsFunc(withWords, func(p string) bool { return strings.HasPrefix(y, p) })) &&
				x != "불구하고" {
				return true
			}
			continue
		}
		if unicode.IsDigit([]rune(y)[0]) {
			continue // "그가 1995년에": a date is no thing the passages qualify otherwise
		}
		if (latinName(question, x) || i == 0 && opening(x, firstNonEmpty(yq[0].stem, y), vocab)) && otherQualifiers(x, firstNonEmpty(yq[0].stem, y), vocab) >= 2 {
			return true
		}
	}
	return false
}

// opening reports whether the Korean word x that opens a question, before a word beginning with head,
// reads as a topic the passages do not name at all: a bare noun of two syllables or more ("큰 성공을" opens with an adjective) that no
// word of the passages holds ("모션그래픽스" holds "모션") and that shares no syllable pair with a word the
// passages put before head — a name the question spells otherwise ("바르세롤나 올림픽" against "바르셀로나
// 올림픽", "벤쿠버" against "밴쿠버").
func opening(x, head string, vocab []string) bool {
	if !isHangulWord(x) || !bareWord(x) || utf8.RuneCountInString(x) < 2 {
		return false
	}
	// "잔존해있던 우라가미", "고아인 숙희를": a verb, or a noun the passages hold with the copula, qualifying
	// the next word.
	if strings.HasSuffix(x, "던") {
		return false
	}
	if n, ok := strings.CutSuffix(x, "인"); ok && utf8.RuneCountInString(n) >= 2 &&
		slices.ContainsFunc(vocab, func(v string) bool { return strings.HasPrefix(v, n) }) {
		return false
	}
	grams := hangulBigrams(x, nil)
	for i, v := range vocab {
		if strings.Contains(v, x) {
			return false
		}
		if i+1 < len(vocab) && strings.HasPrefix(vocab[i+1], head) &&
			slices.ContainsFunc(grams, func(g string) bool { return strings.Contains(v, g) }) {
			return false
		}
	}
	return true
}

// stopWord reports whether every analyzer term of w is a stop-word.
func stopWord(w string) bool {
	stop := true
	textproc.Analyze(w, func(t textproc.Term) { stop = stop && t.Stop })
	return stop
}

// adnominal reports whether a Korean word ends in a syllable with a final ㄴ or ㄹ (가까운, 만들): most
// likely a verb or adjective qualifying what follows rather than a noun.
func adnominal(w string) bool {
	r, _ := utf8.DecodeLastRuneInString(w)
	if r < 0xAC00 || r > 0xD7A3 {
		return false
	}
	f := (r - 0xAC00) % 28
	return f == 4 || f == 8
}

// latinName reports whether the question writes the Latin-script word w as a name: with a capital letter
// after its first one, or letters and digits mixed ("TikTok", "GA4"), not as a plain English word.
func latinName(question, w string) bool {
	q := textproc.Normalize(question)
	i := strings.Index(strings.ToLower(q), w)
	if i < 0 || len(q) < i+len(w) {
		return false
	}
	orig := q[i : i+len(w)]
	letters, digits, caps := 0, 0, 0
	for j, r := range orig {
		switch {
		case r >= 0x80:
			return false
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
			if j > 0 && unicode.IsUpper(r) {
				caps++
			}
		}
	}
	return letters > 0 && (caps > 0 || digits > 0)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// otherQualifiers counts the places where the passages' words put a bare word other than x right before a
// word beginning with head.
func otherQualifiers(x, head string, vocab []string) int {
	n := 0
	for i := 1; i < len(vocab); i++ {
		if !strings.HasPrefix(vocab[i], head) {
			continue
		}
		z := vocab[i-1]
		if z != x && !fillers[z] && textproc.QueryTerms(z) != nil && bareWord(z) {
			n++
		}
	}
	return n
}

// bareWord reports whether w carries no particle the analyzer would strip.
func bareWord(w string) bool {
	terms := textproc.IndexTerms(w)
	if !isHangulWord(w) {
		return len(terms) > 0
	}
	return len(terms) > 0 && stemOf(w, terms) == ""
}

// abbreviated reports whether w is a clipped form of a longer word of vocab: a Korean word made of
// syllables of a longer one, in order and from its first ("페북" of "페이스북", "비번" of "비밀번호"), or a Latin
// word holding a word of at least three letters ("capi" holds "api").
func abbreviated(w string, vocab []string) bool {
	rs := []rune(w)
	for _, v := range vocab {
		vr := []rune(v)
		if isHangulWord(w) {
			if len(vr) <= len(rs) || vr[0] != rs[0] {
				continue
			}
			j := 0
			for _, r := range vr {
				if j < len(rs) && r == rs[j] {
					j++
				}
			}
			if j == len(rs) {
				return true
			}
			continue
		}
		if len(v) >= 3 && len(v) < len(w) && strings.Contains(w, v) {
			return true
		}
	}
	return false
}

// splitWords returns the lower-cased words of text, split as the question is.
func splitWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(textproc.Normalize(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(wordJoiners, r)
	})
}
