package extractive

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/rag"
)

// counterAliases are the other ways documents write a Korean counter (keyed by its first syllable): a
// question's "몇 명" is answered by "10인", "몇 살" by "25세", "몇 번" by "3회", "몇 위" by "세 번째", "몇
// 미터" by "2.33m".
var counterAliases = map[string][]string{
	"명": {"명", "인"}, "인": {"인", "명"}, "살": {"살", "세"}, "번": {"번", "회", "차"}, "회": {"회", "번", "차"},
	"년": {"년", "해"}, "위": {"위", "번째", "등"},
	"퍼": {"%", "퍼센트", "프로"}, "프": {"%", "프로", "퍼센트"}, "미": {"미터", "m"}, "밀": {"밀리", "mm"},
	"센": {"센티", "cm"}, "킬": {"킬로", "km", "kg"}, "달": {"달러", "$"},
}

// rateUnits state a rate: what a question asking for a "…률/…율" ("인상률", "비율") is answered in.
var rateUnits = []string{"%", "퍼센트", "프로", "배", "할", ":"}

// numberBefore matches what reads as a number right before a unit: digits, or a Korean numeral word ("두",
// "세", "열", "스무", "백").
var numberBefore = regexp.MustCompile(`(?:[0-9]|(?:^|[^\p{Hangul}])[한두세네열백천만억십]|다섯|여섯|일곱|여덟|아홉|스무|서른|마흔|수십|수백)\s?$`)

// unitFollowers may follow a Korean counter inside its word: particles, the copula and the words that
// bound a count ("10표로", "10표였다", "3명의", "0점부터", "10점까지", "3개씩").
const unitFollowers = "이가은는을를의로와과도만씩였에다입며으부까쯤째짜여정"

// missingUnit reports whether a Korean question asks for a count or a rate that neither the answer nor the
// passages it quotes give. "몇" followed by a counter ("찬성 몇 표였나요") asks for a number in that counter
// (or its aliases, counterAliases); a noun ending in 률 or 율 right before "얼마" or "몇" ("인상률은 얼마로")
// asks for a rate (rateUnits) of what the noun names without 률 ("인상"; a bare "비율" names none). Both conditions must hold: no number in that unit in the passages quoted, and
// the focus word right before the question word — what is counted ("찬성"), the rate itself ("인상률"), and
// for a rate what it is of ("인상") — in none of the shown sentences, their neighbours or their passages' titles. Documents count in other words
// ("8 사이클" for "몇 주기", "4관왕" for "상은 몇 개"), so a missing unit alone refuses nothing; with what
// is counted missing too, the answer is about something else: the minutes name the bill but not its vote.
func missingUnit(question string, r ranking, shown []sentence, passages []rag.Passage) bool {
	if len(shown) == 0 {
		return false
	}
	words := splitWords(question)
	for j := 1; j < len(words); j++ {
		var units []string
		base := "" // what a rate is of: "인상" of "인상률"
		switch {
		case words[j] == "몇" && j+1 < len(words) && isHangulWord(words[j+1]):
			counter := []rune(words[j+1])
			first := string(counter[0])
			if generalCounter(first) || strings.HasPrefix(words[j+1], strings.TrimRight(words[j-1], "은는이가을를")) {
				continue // "등급은 몇 등급으로": the counter names what is counted, and the answer may count it otherwise ("5개")
			}
			// The counter, or the longer word it opens ("관왕" of "몇 관왕을", "세대" of "몇 세대로").
			units = append(slices.Clone(counterAliases[first]), first)
			for n := 2; n <= len(counter); n++ {
				units = append(units, string(counter[:n]))
			}
		case strings.HasPrefix(words[j], "얼마") || words[j] == "몇":
			stem := []rune(strings.TrimRight(words[j-1], "은는이가을를"))
			if n := len(stem); n >= 3 && (stem[n-1] == '률' || stem[n-1] == '율') {
				units, base = rateUnits, string(stem[:n-1])
			}
		}
		if len(units) == 0 || base != "" && slices.ContainsFunc(shown, func(s sentence) bool { return strings.Contains(s.text, base) }) {
			continue
		}
		k := slices.IndexFunc(r.qw, func(w qword) bool { return w.terms[0] == words[j-1] && !w.history })
		if k < 0 || !r.qw[k].focus || r.qw[k].given || !isHangulWord(words[j-1]) ||
			slices.ContainsFunc(shown, func(s sentence) bool { return holdsWord(k, r, s, passages) }) {
			continue
		}
		if !slices.ContainsFunc(shown, func(s sentence) bool {
			return s.rank < len(passages) && statesUnit(passages[s.rank].Text, units)
		}) {
			return true
		}
	}
	return false
}

// askedUnits returns the units a Korean how-many question asks its number in: the counter after "몇", as a
// word of its own or joined to it ("몇 명인가", "몇가구로", "몇 개의 동으로": the noun after a general
// counter), with its aliases (counterAliases) and the longer words it opens; nil for another question.
func askedUnits(question string) []string {
	words := splitWords(question)
	for j, w := range words {
		rest, ok := strings.CutPrefix(w, "몇")
		if !ok {
			continue
		}
		if rest == "" && j+1 < len(words) {
			rest = words[j+1]
			if generalCounter(string([]rune(rest)[0])) && j+2 < len(words) {
				rest = words[j+2] // "몇 개의 동으로": counted in 동
			}
		}
		rest = strings.TrimRight(rest, unitFollowers+"인나요")
		counter := []rune(rest)
		if len(counter) == 0 || !isHangulWord(rest) {
			return nil
		}
		units := slices.Clone(counterAliases[string(counter[0])])
		for n := 1; n <= len(counter); n++ {
			units = append(units, string(counter[:n]))
		}
		return units
	}
	return nil
}

// generalCounter reports whether the Korean counter (its first syllable) counts anything ("몇 개", "몇
// 가지"): documents count the same things in their own counters ("50회", "4관왕", "3기"), so no unit tells
// an answer from another.
func generalCounter(c string) bool {
	return c == "개" || c == "가"
}

// statesUnit reports whether text holds a number followed by one of units: the unit right after the number
// or one space on, and not the opening of a longer word ("7 표결" is no count of votes; "10표로" is).
func statesUnit(text string, units []string) bool {
	for _, u := range units {
		for at := 0; ; {
			i := strings.Index(text[at:], u)
			if i < 0 {
				break
			}
			i += at
			at = i + len(u)
			if !numberBefore.MatchString(text[max(0, i-16):i]) {
				continue
			}
			next, _ := utf8.DecodeRuneInString(text[at:])
			if at == len(text) || !unicode.IsLetter(next) || strings.ContainsRune(unitFollowers, next) ||
				!unicode.Is(unicode.Hangul, next) && !isLatin(u) && u != "m" {
				return true
			}
		}
	}
	return false
}

// attributeStops end the attribute an English question names: prepositions, conjunctions and the words
// that open a clause.
var attributeStops = map[string]bool{"for": true, "of": true, "in": true, "on": true, "at": true, "to": true,
	"from": true, "by": true, "with": true, "during": true, "that": true, "which": true, "who": true,
	"when": true, "where": true, "and": true, "or": true, "as": true, "per": true, "between": true,
	"about": true, "after": true, "before": true, "since": true, "under": true, "than": true, "if": true}

// lightHeads name the kind of answer rather than a thing the documents must state ("the effect of …",
// "the number of …"): they are no attribute (the words after them are the question's topic).
var lightHeads = map[string]bool{"effect": true, "effects": true, "problem": true, "problems": true,
	"difference": true, "differences": true, "relation": true, "relationship": true, "role": true,
	"purpose": true, "meaning": true, "reason": true, "reasons": true, "way": true, "ways": true,
	"kind": true, "kinds": true, "type": true, "types": true, "number": true, "amount": true, "value": true,
	"values": true, "status": true, "result": true, "results": true, "significance": true, "nature": true,
	"cause": true, "causes": true, "method": true, "methods": true, "name": true, "main": true, "best": true,
	"current": true, "new": true, "first": true, "last": true, "most": true, "least": true, "total": true,
	"exact": true, "approximate": true, "average": true, "general": true, "basic": true, "typical": true,
	"primary": true, "key": true, "different": true, "other": true, "following": true, "same": true,
	"deadline": true, "deadlines": true, "date": true, "dates": true}

// missingAttribute reports whether an English question about a named thing asks for an attribute that none
// of the answer's sentences names. Only a question giving a name or number (givenNames) is read so: its
// passages were found by the name, and the attribute is what tells an answer from another fact about it;
// a question in common words ("what is the heat transfer to a cone …") is found by the attribute itself,
// and its answer may word it otherwise. The attribute is the noun phrase a "what is/was …" question asks for, after a possessive
// ("What was X's net revenue for …" → net revenue), or the object of "which N had …" ("Which senator had the
// largest office budget" → office budget), up to a preposition or clause word; capitalised names and
// numbers are the question's entity (missingName), superlatives and light heads (lightHeads) name the
// answer's kind. Every attribute word must be held by one of the sentences (half its terms), with its
// neighbours in its passage and its passage's title and section: "Compensation must be paid with current year
// revenues." shares "revenue" but not "net" with the question and is about another thing.
func missingAttribute(question string, r ranking, picked []sentence, passages []rag.Passage) bool {
	fields := strings.Fields(strings.TrimSpace(question))
	if len(fields) < 3 || strings.ContainsFunc(question, func(c rune) bool { return unicode.Is(unicode.Hangul, c) }) {
		return false
	}
	lower := func(i int) string {
		return strings.ToLower(strings.TrimRight(fields[i], "?.,!:;"))
	}
	start := -1
	switch first := lower(0); {
	case (first == "what" || first == "which") && slices.Contains([]string{"is", "was", "are", "were"}, lower(1)):
		start = 2
	case first == "which" && len(fields) > 3 && slices.Contains([]string{"has", "had", "have"}, lower(2)):
		start = 3
	}
	if start < 0 || !slices.ContainsFunc(r.qw, func(w qword) bool { return w.name && !w.history }) {
		return false
	}
	if first, _ := utf8.DecodeRuneInString(fields[start]); unicode.IsUpper(first) && !strings.HasSuffix(lower(start), "'s") &&
		!strings.HasSuffix(lower(start), "’s") && (start+1 >= len(fields) || !strings.HasSuffix(lower(start+1), "'s")) {
		return false // "What was Firefox originally called?" asks what the named thing is called, not its attribute
	}
	var attr []string
	for i := start; i < len(fields) && len(attr) < 4; i++ {
		w, raw := lower(i), strings.TrimRight(fields[i], "?.,!:;")
		if attributeStops[w] || strings.ContainsAny(fields[i], "?.,!:;") && i+1 < len(fields) {
			break
		}
		if strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "’s") {
			// X's Y: X is whom the question asks about; Y is what it asks.
			attr = attr[:0]
			continue
		}
		first, _ := utf8.DecodeRuneInString(raw)
		if w == "the" || w == "a" || w == "an" || unicode.IsUpper(first) || unicode.IsDigit(first) ||
			lightHeads[w] || len(w) > 5 && strings.HasSuffix(w, "est") {
			continue
		}
		attr = append(attr, w)
		if strings.ContainsAny(fields[i], "?.,!:;") {
			break
		}
	}
	var ks []int
	for _, a := range attr {
		if k := wordIndex(r.qw, a); k >= 0 && r.qw[k].focus && !r.qw[k].given && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return false
	}
	// The attribute is one thing: a sentence (with its neighbours and its passage's headings) names it
	// whole, not "net" in one document's table and "revenue" in another's sentence.
	return !slices.ContainsFunc(picked, func(s sentence) bool {
		return !slices.ContainsFunc(ks, func(k int) bool { return !holdsWord(k, r, s, passages) })
	})
}

// wordIndex returns the index in qw of the question's own word w (lower-cased), or -1.
func wordIndex(qw []qword, w string) int {
	one := questionWords(w, "")
	if len(one) == 0 {
		return -1
	}
	return slices.IndexFunc(qw, func(q qword) bool { return !q.history && q.terms[0] == one[0].terms[0] })
}

// holdsWord reports whether the sentence s holds the question word qw[k] (askFound), or a neighbour of it
// in its passage, or its passage's title or section.
func holdsWord(k int, r ranking, s sentence, passages []rag.Passage) bool {
	if s.deg[k] >= askFound || s.rank < len(passages) &&
		degree(r.qw[k], termSet(passages[s.rank].Title+"\n"+passages[s.rank].Section)) >= askFound {
		return true
	}
	for _, d := range []int{-1, 1} {
		if o, ok := r.at[[2]int{s.rank, s.pos + d}]; ok && o.deg != nil && o.deg[k] >= askFound {
			return true
		}
	}
	return false
}

// generalNouns ask for what is said about a thing rather than name one ("주차장 정보", "신청 방법").
var generalNouns = []string{"정보", "내용", "관련", "자료", "안내", "방법", "기준", "사항", "설명"}

// tellWords open the predicate of a Korean question that asks whether the documents say something or to be
// told it ("있어?", "있나요?", "알려줘", "없나요?").
var tellWords = []string{"있", "없", "알려", "가르쳐"}

// absentThing reports whether a Korean question that asks to be told of something ("부천 춘의동
// 영구임대주택 주차장 정보 있어?") names as that thing a noun none of the passages hold in any close form
// (inPassages): the thing is the last noun among its focus words before the closing predicate, general
// nouns (generalNouns) aside, and the predicate asks whether there is something or to tell it (tellWords; not "수 있다", which says what
// may be, nor a verb's "-어 있다" or "-고 있다", which say how a thing stands or goes on: "세워져 있는가", "믿고
// 있었는가"); a question with a question word ("누구의 도움으로 … 설이 있었는가?") asks for something else.
// The passages were found by the words naming what it is asked of (the notice), and say other things of it.
// Absent means from every passage given, not only the answer's: a passage naming it in a close form lets the
// answer be tried.
func absentThing(question string, r ranking, passages []rag.Passage) bool {
	words := splitWords(question)
	if len(words) < 2 || !isHangulWord(words[len(words)-1]) ||
		!slices.ContainsFunc(tellWords, func(t string) bool { return strings.HasPrefix(words[len(words)-1], t) }) ||
		words[len(words)-2] == "수" || connective(words[len(words)-2]) || strings.HasSuffix(words[len(words)-2], "고") ||
		slices.ContainsFunc(words, func(w string) bool {
			return slices.ContainsFunc(questionWordPrefixes, func(p string) bool { return strings.HasPrefix(w, p) })
		}) {
		// "생길 수 있나?" asks what may happen, "세워져 있는가?" and "믿고 있었는가?" how a thing stands or
		// goes on: neither whether the documents say something. A question word asks for something else
		// (unasked reads those).
		return false
	}
	last := -1
	for i, w := range r.qw {
		if w.history || w.terms[0] == words[len(words)-1] {
			continue
		}
		if w.focus && !w.given && nounLike(w) && !slices.ContainsFunc(generalNouns, func(g string) bool {
			return strings.HasPrefix(w.terms[0], g)
		}) {
			last = i
		}
	}
	return last >= 0 && !inPassages(r, last, passageWords(passages))
}

// connective reports whether the Korean word ends in the connective -아/-어 of a verb ("세워져", "되어",
// "남아"), which makes a following "있다" say how something stands: its last syllable has no final consonant
// and the vowel ㅏ, ㅓ, ㅕ, ㅐ, ㅘ, ㅙ or ㅝ. (A noun with such a particle, "자료가", reads so too: the rule then
// stays silent, which refuses nothing.)
func connective(w string) bool {
	last, _ := utf8.DecodeLastRuneInString(w)
	_, vowel, final, ok := syllable(last)
	return ok && final == 0 && slices.Contains([]int{0, 1, 4, 6, 9, 10, 14}, vowel)
}

// missingValue reports whether a question asking for a count or a price (countQuestion: "몇 명", "how
// many", "…은 얼마예요?") is answered by sentences none of which, nor their neighbours in their paragraphs,
// states a number in any form: digits or a Korean or English numeral word ("세 가지", "이틀", "two"). The
// sentences then say other things of what the question names ("How many users does Thunderbird have?" over
// "Gecko is also used by Thunderbird …"; "메타 픽셀은 설치 비용이 얼마예요?" over "설치는 이벤트 관리자에서
// 시작합니다."). A number the question itself gives is no answer either. Other value questions are answered
// in words often enough to be left alone: "입찰가는 얼마부터 시작하나요?" by "목표 CPA 근처에서", "언제
// 받아들이나요?" by "By exercising the Licensed Rights".
func missingValue(question string, r ranking, shown []sentence) bool {
	if r.want != typeNumber || len(shown) == 0 || !countQuestion.MatchString(strings.ToLower(question)) {
		return false
	}
	seen := typedTokens(question)
	// A date is no count of people or things ("몇 명인가요?" over "2023년 11월 9일 … 회부되었음"). Other
	// counters may be answered by one: "몇 개월", and "몇대 대통령 선거" by "2016년 대통령 선거".
	dates := slices.ContainsFunc(askedUnits(question), thingCounter)
	states := func(s sentence) bool {
		return hasNewCount(s.text, seen, dates) || numeralWord.MatchString(s.text)
	}
	for _, s := range shown {
		if states(s) {
			return false
		}
		if slices.ContainsFunc(r.lineNeighbours(s), states) {
			return false
		}
	}
	return true
}

var (
	// numeralWord matches a number written in words: a Korean numeral before a counter, a native count
	// word standing as a word of its own ("이틀", "셋이", not the "넷" of "인터넷"), or an English number word.
	numeralWord = regexp.MustCompile(`(?i)(?:^|[^\p{Hangul}])(?:한|두|세|네|다섯|여섯|일곱|여덟|아홉|열|스무|서른|마흔|쉰|백|천|만|억|수십|수백|수천|수만|첫)\s?(?:가지|개|명|분|번|차례|살|시간|달|해|주|날|곳|사람|권|대|배|층|채|건|초|종|군데|마리|장|잔|병|벌|쌍|척|그루|포기|송이|켤레|줄|편|통|표|점|위|번째|째)|(?:^|[^\p{Hangul}])(?:하루|이틀|사흘|나흘|닷새|엿새|이레|여드레|아흐레|열흘|보름|하나|둘|셋|넷|절반|반나절)(?:[^\p{Hangul}]|$|[이가은는을를의도만씩에])|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundreds?|thousands?|millions?|billions?|dozens?|half|twice|once|single|double|triple|first|second|third)\b`)
	// countQuestion matches a question asking how many or what price: "몇" before a counter, "how many",
	// "how much does/is … cost", or "얼마" as the closing predicate ("얼마예요?", "얼마인가요", "얼마나 드나요").
	countQuestion = regexp.MustCompile(`몇\s?(?:명|개|가지|번|회|대|곳|건|권|살|세|표|석|채|마리|배|층|위|시간|분|초|일|주|달|개월|퍼센트|%|미터|킬로|원|달러)|\bhow many\b|\bhow much\b.*\bcost|\bwhat (?:is|was) the (?:price|cost|fee)\b|얼마(?:예요|에요|인가요|인가|입니까|야|죠|지요|나\s?(?:드나요|들어요|하나요|해요|돼요|되나요))`)
)
