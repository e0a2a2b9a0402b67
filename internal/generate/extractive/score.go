package extractive

import (
	"cmp"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/chunk"
	"github.com/ragd/ragd/internal/memo"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// params are the scoring weights, chosen by measurement on KorQuAD and the project question sets (see
// docs/retrieval.md, "Answers").
type params struct {
	rankDecay   float64 // a passage's sentences are weighted 1/(1+rankDecay·rank)
	secondRatio float64 // a further sentence must score at least this share of the best one
	context     float64 // a question word found only in a neighbouring sentence counts this much
	title       float64 // … only in the passage's title or section path
	frame       float64 // weight of words that frame the question ("이름", "name") rather than its content
	history     float64 // weight of words of the previous question that the question itself lacks
	typeBonus   float64 // added when a sentence holds what the question asks for (a year, a number) anew
	dfCut       float64 // a sentence counts toward a word's document frequency from this degree on
	trimAt      int     // sentences longer than this are cut to the clauses that match the question
	margin      int     // clauses kept on each side of the matching ones
	listBonus   float64 // added to a lead-in when the question asks for a list
	listChars   int     // a list under a lead-in is shown up to this many characters
	given       float64 // weight of words every passage's title holds (the subject a filter chose)
	minWords    float64 // matching this many focus words is enough, whatever MinCoverage says
	// window is how many sentences before or after the best one, in its paragraph, may complete it.
	window int
	// topicBonus is added to a sentence opening with the topic of a how/why question (the word its topic
	// or subject particle marks).
	topicBonus float64
	// otherDoc is the share of the best sentence's score that a sentence of another document needs when it
	// holds no focus word the chosen sentences lack.
	otherDoc float64
	// phrase weighs the longest run of the question's letters a sentence repeats, as a share of the
	// question's letters, when it is at least minRun letters long.
	phrase float64
	// remedyReach is how many sentences away from the best one, in its paragraph, the instruction a
	// what-to-do question needs may stand.
	remedyReach int
	// valueShare is the share of the best sentence's score that a sentence of its document giving what a
	// when/how-many question asks for needs to answer in its place, when the best one gives none.
	valueShare float64
}

// wordJoiners may join letters and digits into one word ("25-180-12", "0.7m", "c++"), as in the analyzer.
const wordJoiners = ".-/_+#%"

// howWords ask how or why; the predicate after one is what the question is about.
var howWords = []string{"어떻게", "어떡", "왜"}

// maxFollowUpWords is the most content words a question may have and still be read as a follow-up.
const maxFollowUpWords = 3

var defaultParams = params{rankDecay: 0.1, secondRatio: 0.4, context: 0.5, title: 0.5, frame: 0.3,
	history: 0.3, typeBonus: 0.1, dfCut: 0.5, trimAt: 200, margin: 1, listBonus: 0.25, listChars: 600, given: 0.1, minWords: 1.5, otherDoc: 0.7, topicBonus: 0.15,
	remedyReach: 5, window: 2, phrase: 0.1, valueShare: 0.8}

// qword is a content word of the question with its analyzer terms.
type qword struct {
	terms   []string // distinct, non-stop; terms[0] is the whole word
	stem    string   // the Hangul word without its particle or ending, if the analyzer found one
	frame   bool     // the word frames the question rather than saying what it is about
	history bool     // the word comes from the previous question, not this one
	topic   bool     // the word comes from the topic a follow-up refers to (followup.go)
	// focus marks a word that says what the question is about: not a frame word, filler or predicate.
	focus bool
	// given marks a focus word that every passage's title or section holds: the documents' subject (a
	// filter picked them), which tells nothing about whether they answer the question.
	given bool
	fill  bool    // a filler: no topic of its own
	idf   float64 // weight: inverse sentence frequency among the passages, times frame/history weights
	// verbs are the stems a predicate may have (verbStems): a sentence with another form of the verb
	// ("푸는" for "풀어요") holds the word.
	verbs []string
	// how marks a predicate right after "어떻게" or "왜": what is asked about ("어떻게 풀어요?"), weighed as a
	// focus word.
	how bool
	// name marks a focus word the question writes as a name or number (givenNames): the answer must hold
	// it when the passages do (covered).
	name bool
	// joined is the analyzer's term for this Latin word written together with the next word of the question
	// ("code name" → "codename"), or "": a sentence holding it ("codenamed") holds both words.
	joined string
	next   string // the word after it in the question, when joined is set
}

// sentence is a candidate sentence (or table row) of a passage.
type sentence struct {
	n      int // the passage's citation number
	rank   int // the passage's position in the request (0 = best retrieved)
	pos    int // the sentence's position in its passage
	text   string
	header string // for a table row: the table's header and separator rows
	terms  map[string]bool
	deg    []float64 // how well each question word matches, 0..1
	score  float64

	line    int   // the line of the passage it is on
	item    bool  // it is (on) a list item
	heading bool  // it is a heading
	lineEnd bool  // it ends its line
	whole   bool  // it is its line's only sentence
	lead    bool  // it introduces the list or section in block
	block   []int // positions of the units a lead-in or heading introduces
	row     bool  // shown as a line of the block under the picked lead-in (a table row, a line of a form)
	cite    bool  // it is (on) an entry of a reference list (refs.go)
	code    bool  // it is a line of code (code.go)
	// value marks a sentence holding what a when/how-many question asks for: a date or number the
	// question does not.
	value bool
	// keep is 1 + the byte offset in text of what the question asks for, which trimming keeps; 0 for none.
	keep int
}

// questionWords splits the question into words and keeps those with non-stop terms. A short question may be
// a follow-up that leans on the previous one ("그건 언제야?"): the previous question's words are then added,
// marked, where the question lacks them.
func questionWords(question, previous string) []qword {
	var out []qword
	seen := map[string]bool{}
	add := func(text string, history bool) {
		keep := map[string]bool{}
		names := givenNames(text)
		for _, t := range textproc.QueryTerms(text) {
			keep[t] = true
		}
		prev := ""
		words := strings.FieldsFunc(strings.ToLower(textproc.Normalize(text)), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(wordJoiners, r)
		})
		for k, w := range words {
			before := prev
			prev = w
			if seen[w] {
				continue
			}
			seen[w] = true
			raw := textproc.IndexTerms(w)
			var terms []string
			for _, t := range raw {
				if keep[t] && !slices.Contains(terms, t) {
					terms = append(terms, t)
				}
			}
			if len(terms) == 0 {
				continue // a stop-word
			}
			for _, t := range hangulBigrams(w, nil) {
				if !slices.Contains(terms, t) {
					terms = append(terms, t)
				}
			}
			stem := stemOf(w, raw)
			if stem == "" {
				stem = hadaStem(w)
			}
			if latin, ok := latinWithParticle(w); ok {
				// "roas는", "1%랑", "event_id는": the analyzer keeps the particle as a term of its own
				// ("는"), which no sentence should be matched by; the word is its Latin part.
				terms = append([]string{w}, textproc.IndexTerms(latin)...)
				stem = terms[1]
			}
			next := ""
			if k+1 < len(words) {
				next = words[k+1]
			}
			if c := textproc.CountTerm(w, next); c != "" {
				// A count is its number and counter ("2배로", "두 배로" → "2배"): a sentence giving another
				// amount of the number ("2만 원") holds only part of it.
				terms = slices.Insert(terms, 1, c)
				stem = c
			}
			// "크기 비율은 어느 정도로 …?": the word right before the question word of a how-many question, naming
			// the kind of amount it asks for, frames the question as "숫자" and "날짜" do; the answer gives the
			// amount ("1%에서 10%"), not always that word.
			asksKind := stem != "" && k+1 < len(words) && valueKind(w) && answerType(text) == typeNumber &&
				slices.ContainsFunc(questionWordPrefixes, func(p string) bool { return strings.HasPrefix(words[k+1], p) })
			q := qword{terms: terms, stem: stem, frame: isFrame(w) || englishFrame(w) || asksKind, history: history}
			if k+1 < len(words) && isLatin(w) && isLatin(words[k+1]) {
				if t := textproc.IndexTerms(w + words[k+1]); len(t) > 0 {
					q.joined, q.next = t[0], words[k+1]
				}
			}
			q.fill = filler(w)
			q.focus = !q.frame && !q.fill && !predicate(w, stem)
			q.name = q.focus && names[w]
			if !q.focus && !q.frame && !q.fill || q.focus && conditional(w, stem) {
				q.verbs = verbStems(w)
				q.how = len(q.verbs) > 0 && slices.ContainsFunc(howWords, func(h string) bool { return strings.HasPrefix(before, h) })
			}
			out = append(out, q)
		}
	}
	add(question, false)
	if previous != "" && len(out) <= maxFollowUpWords {
		add(previous, true)
	}
	return out
}

// stemOf returns the particle-free stem the analyzer gave a Hangul word besides its syllable bigrams, or "".
// raw are the word's terms with repeats: whole word, stem, bigrams, where a two-syllable stem repeats the
// first bigram.
func stemOf(word string, raw []string) string {
	rs := []rune(word)
	if len(rs) < 3 || len(raw) < 2 {
		return ""
	}
	grams := map[string]int{}
	for i := 0; i+1 < len(rs); i++ {
		if !unicode.Is(unicode.Hangul, rs[i]) || !unicode.Is(unicode.Hangul, rs[i+1]) {
			return ""
		}
		grams[string(rs[i:i+2])]++
	}
	for _, t := range raw[1:] {
		if grams[t] > 0 {
			grams[t]--
			continue
		}
		if utf8.RuneCountInString(t) >= 2 && strings.HasPrefix(word, t) {
			return t
		}
	}
	return ""
}

// degree is how well the question word w is matched by a text with the given terms: 1 for the whole word
// or its stem, else the share of its terms (syllable bigrams, parts of a compound) found.
func degree(w qword, terms map[string]bool) float64 {
	if terms[w.terms[0]] || (w.stem != "" && terms[w.stem]) {
		return 1
	}
	for _, v := range w.verbs {
		if terms[verbPrefix+v] {
			return 1
		}
	}
	hit := 0
	for _, t := range w.terms {
		if terms[t] {
			hit++
		}
	}
	return float64(hit) / float64(len(w.terms))
}

// latinWithParticle splits a word of Latin letters or digits followed by a Korean particle of one or two
// syllables ("roas는", "1%랑", "ga4랑") and returns its Latin part.
func latinWithParticle(w string) (string, bool) {
	i := strings.IndexFunc(w, func(r rune) bool { return unicode.Is(unicode.Hangul, r) })
	if i <= 0 || !isHangulWord(w[i:]) || utf8.RuneCountInString(w[i:]) > 2 {
		return "", false
	}
	latin := w[:i]
	if !strings.ContainsFunc(latin, func(r rune) bool { return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }) ||
		strings.ContainsFunc(latin, func(r rune) bool { return r >= 0x80 }) || len(textproc.IndexTerms(latin)) == 0 {
		return "", false
	}
	return latin, true
}

// termSets holds the term sets of the texts termSet read lately: an answer reads every sentence of its
// passages, and the same passages come back question after question (8 % of the server's CPU under the
// HTTP load test, docs/performance.md).
var termSets = memo.New(8<<20, func(key string, v map[string]bool) int {
	n := len(key) + 64
	for t := range v {
		n += len(t) + 48
	}
	return n
})

// termSet returns the distinct terms of text: the analyzer's, plus the syllable bigrams of its Hangul runs,
// which the answerer needs to match a Korean word inside its particles and endings whether or not the
// analyzer indexes them. The set is shared: do not modify it.
func termSet(text string) map[string]bool { return termSets.Get(text, analyseTerms) }

// analyseTerms is termSet without the memo.
func analyseTerms(text string) map[string]bool {
	terms := map[string]bool{}
	textproc.Analyze(text, func(t textproc.Term) { terms[t.Text] = true })
	for _, t := range hangulBigrams(text, nil) {
		terms[t] = true
	}
	verbTerms(text, terms)
	for _, t := range textproc.CountTerms(text) {
		terms[t] = true // "두 배로" and "2배로" are one count, "2배"
	}
	// The words text writes letter-spaced, as forms and reports set their labels ("문 의 처" → "문의처"), read
	// as the index reads them (textproc.SpacedWords) but without the reading that glues a run to the word
	// before it: a title line's guessed word would outweigh the sentence that answers.
	for _, w := range textproc.SpacedWords(text, false) {
		for _, t := range textproc.IndexTerms(w) {
			terms[t] = true
		}
	}
	for _, w := range strings.Fields(text) {
		// "1%가", "ROAS는": the Latin word without its particle, as a question's word is read.
		if latin, ok := latinWithParticle(strings.ToLower(strings.Trim(w, ".,;:!?()[]'\"“”‘’"))); ok {
			for _, t := range textproc.IndexTerms(latin) {
				terms[t] = true
			}
		}
	}
	return terms
}

// hangulBigrams appends the syllable bigrams of the Hangul runs of text to out.
func hangulBigrams(text string, out []string) []string {
	var prev rune
	for _, r := range text {
		if !unicode.Is(unicode.Hangul, r) {
			prev = 0
			continue
		}
		if prev != 0 {
			out = append(out, string([]rune{prev, r}))
		}
		prev = r
	}
	return out
}

var footnoteRe = regexp.MustCompile(`\[\d{1,3}\]`)

func isSeparatorRow(l string) bool {
	l = strings.TrimSpace(l)
	return strings.HasPrefix(l, "|") && strings.Contains(l, "-") && strings.Trim(l, "|-: ") == ""
}

// ranking is the scored sentences of the passages, best first, with the question words they were scored by
// and every unit by passage and position, for a picked sentence's block and continuation.
type ranking struct {
	sents []sentence
	qw    []qword
	at    map[[2]int]sentence // by passage rank and position
	want  ansType             // what the question asks for, when it asks for a value
	price bool                // the value is a sum of money (asksPrice)
}

// rank scores the passages' sentences for the question.
func (g *Generator) rank(question, previous string, passages []rag.Passage) ranking {
	return g.rankTopic(question, previous, "", passages)
}

// rankTopic is rank for a follow-up made standalone, whose words from followTopic weigh as one (shareTopic).
func (g *Generator) rankTopic(question, previous, followTopic string, passages []rag.Passage) ranking {
	qw := questionWords(question, previous)
	if len(qw) == 0 {
		return ranking{}
	}
	markTopic(qw, followTopic)
	want := answerType(question)
	price := want == typeNumber && asksPrice(question) // a sum of money is the value it asks for
	cue, list := wantsList(question)
	formula := hasCue(question, formulaCues)
	topic := -1
	if explanatory(question) {
		topic = topicWord(question, qw)
	}
	qTypes := typedTokens(question)
	counted := englishCounted(question) // "how many people": what is counted
	labels, form := askedLabels(question), asksForm(question)
	korean := proseKorean(question)
	asksIn := askedUnits(question)
	qLetters := letters(question)
	class, enClass := "", ""
	if want == typeNone {
		class, enClass = askedClass(question, qw), englishClass(question, qw)
	}
	var sents, repeats []sentence
	seen := map[string]bool{}
	titles := make([][]float64, len(passages))
	given := make([]bool, len(qw))
	for i := range given {
		given[i] = len(passages) > 1
	}
	for rank, p := range passages {
		tt := termSet(p.Title + "\n" + p.Section)
		pt := topicTerms(qw, p)
		titles[rank] = make([]float64, len(qw))
		for i, w := range qw {
			titles[rank][i] = max(degree(w, tt), topicDegree(w, pt))
			if titles[rank][i] < 1 && spacedIn(p.Title+"\n"+p.Section, w) {
				titles[rank][i] = 1
			}
			given[i] = given[i] && titles[rank][i] >= 1
		}
		for pos, s := range units(p.Text) {
			s.n, s.rank, s.pos = p.N, rank, pos
			if seen[s.text] {
				// Overlapping chunks repeat sentences: one copy is scored, but a list shown whole
				// needs every item.
				s.deg = make([]float64, len(qw))
				repeats = append(repeats, s)
				continue
			}
			seen[s.text] = true
			s.terms = termSet(s.text)
			if s.header != "" {
				// A row means what its header says: "| 산업 | 11.4% |" under "| 부문 | 감축 목표 |".
				s.terms = maps.Clone(s.terms)
				for t := range termSet(s.header) {
					s.terms[t] = true
				}
			}
			s.deg = make([]float64, len(qw))
			for i, w := range qw {
				s.deg[i] = max(s.deg[i], degree(w, s.terms))
				if s.deg[i] < 1 && spacedIn(s.text, w) {
					s.deg[i] = 1
				}
				if class != "" && classWord(w, class) && s.deg[i] < 1 && namesInstance(s.text, class, question) {
					// "한명숙의 출신 대학교는?" is answered by "이화여자대학교 …": the sentence names a 대학교.
					s.deg[i] = 1
				}
				if s.deg[i] < 1 && abbreviates(w, s.text) {
					// "Docket No. FAA–2020–0686" gives the docket number.
					s.deg[i] = 1
				}
				if w.joined != "" && s.terms[w.joined] {
					// "codenamed" holds "code name": both words, the second when the question kept it.
					s.deg[i] = 1
					if i+1 < len(qw) && qw[i+1].terms[0] == w.next {
						s.deg[i+1] = 1
					}
				}
			}
			sents = append(sents, s)
		}
	}
	if len(sents) == 0 {
		return ranking{}
	}
	at := make(map[[2]int]int, len(sents))
	for j, s := range sents {
		at[[2]int{s.rank, s.pos}] = j
	}
	// A word's weight is its inverse frequency over the sentences: a word every sentence has (the topic of
	// the passages) tells them apart least, and one that none has counts most in deciding whether they
	// answer the question.
	n := float64(len(sents))
	total := 0.0
	for i := range qw {
		df := 0.0
		for _, s := range sents {
			if s.deg[i] >= g.p.dfCut {
				df++
			}
		}
		qw[i].idf = math.Log(1 + (n-df+0.5)/(df+0.5))
		if qw[i].frame {
			qw[i].idf *= g.p.frame
		}
		if qw[i].history {
			qw[i].idf *= g.p.history
		}
		switch {
		case qw[i].fill:
			qw[i].idf = 0 // "이렇게", "원래", "please": matching them says nothing
		case !qw[i].focus && !qw[i].frame && !qw[i].how:
			qw[i].idf *= g.p.frame // a predicate: documents say it in other forms
		}
		qw[i].given = qw[i].focus && given[i]
		if qw[i].given {
			qw[i].idf *= g.p.given
		}
		total += qw[i].idf
	}
	total = shareTopic(qw, total)
	for j := range sents {
		s := &sents[j]
		ctx := 0.0
		for i, w := range qw {
			// Korean drops subjects that the previous sentence or the title named: a word found only there
			// counts in part; so does a word of the list a lead-in introduces.
			c := s.deg[i]
			if j > 0 && sents[j-1].rank == s.rank {
				if refersBack(s.text) && sents[j-1].pos == s.pos-1 {
					// "Rhino is an open source JavaScript engine … It is developed entirely in Java.": the
					// pronoun is the previous sentence's subject, whose words the sentence holds.
					c = max(c, sents[j-1].deg[i])
				}
				c = max(c, g.p.context*sents[j-1].deg[i])
			}
			if j+1 < len(sents) && sents[j+1].rank == s.rank {
				c = max(c, g.p.context*sents[j+1].deg[i])
			}
			for _, pos := range s.block {
				if k, ok := at[[2]int{s.rank, pos}]; ok {
					c = max(c, g.p.context*sents[k].deg[i])
				}
			}
			if i != topic {
				// A how/why question's topic must be in the sentence or its neighbours: every sentence of a
				// page titled "CTR, CPC, CPM …" is not about CPM.
				c = max(c, g.p.title*titles[s.rank][i])
			}
			ctx += w.idf * c
		}
		if total > 0 {
			s.score = ctx / total
		}
		if at := newTypeAt(s.text, want, qTypes); want != typeNone && at >= 0 && (!price || holdsMoney(s.text)) &&
			(counted == "" || countsIn(s.text, qTypes, "")) {
			s.value = true
			s.score += g.p.typeBonus
			s.keep = at + 1
			if at := countAt(s.text, qTypes, counted); counted != "" && at >= 0 {
				// "How many people died …?" is answered by a number of something: "189 fatalities",
				// which a trimmed sentence keeps.
				s.score += g.p.typeBonus
				s.keep = at + 1
			}
		}
		if labelsValue(s.text, labels) {
			// "장 소 환경노동위원회회의실" says where (labels.go).
			s.score += g.p.listBonus
		}
		if form != nil && form(s.text) {
			s.score += g.p.listBonus // "… from Soekarno-Hatta International Airport" says where (labels.go)
		}
		if g.p.phrase > 0 && korean {
			// KorQuAD-style questions are written from their answer sentence: the longest run of the
			// question's letters that a sentence repeats ("16강에서만난") tells it from one that shares the
			// words scattered.
			if run := commonRun(qLetters, letters(s.text)); run >= minRun {
				s.score += g.p.phrase * float64(run) / float64(max(1, len(qLetters)))
			}
		}
		if class != "" && matchesFocus(*s, qw) && namesInstance(s.text, class, question) {
			// "강정호의 출신 고등학교는?" asks for a 고등학교: "광주제일고등학교" names one.
			s.score += g.p.typeBonus
		}
		if enClass != "" && namesEnglishInstance(s.text, enClass, question) {
			// "Which office publishes …?" asks for an office: "Executive Office for United States Trustees"
			// names one, which the lines round it ("Handbook for", "Chapter 13") only echo the question.
			s.score += 2 * g.p.typeBonus
		}
		if len(asksIn) > 0 && matchesFocus(*s, qw) && statesUnit(s.text, asksIn) {
			// "몇 개의 동으로 구성되었나?" asks for a number of 동: "24개동" states one.
			s.score += g.p.typeBonus
		}
		if formula && strings.ContainsAny(s.text, "=÷×") {
			// "어떻게 계산하나요?" asks for the formula: "CPM, 1,000회 노출당 비용 = 지출 금액 ÷ 노출 수 × 1,000".
			s.score += g.p.typeBonus
		}
		if topic >= 0 && opensWith(s.text, qw[topic]) {
			// "CPM은 어떻게 계산하나요?" is about CPM: "CPM, 1,000회 노출당 비용 = …" says it, "예시로 계산해 볼게요"
			// only shares the verb, and "손익분기 ROAS는 …" is about another thing.
			s.score += g.p.topicBonus
		}
		if list && s.lead && !s.heading && matchesFocus(*s, qw) {
			// A lead-in that names what the question asks for ("다음 서류를 내야 합니다") introduces its answer.
			s.score += g.p.listBonus
			if strings.Contains(strings.ToLower(s.text), cue) {
				s.score += g.p.listBonus
			}
		}
		s.score /= 1 + g.p.rankDecay*float64(s.rank)
		if korean && s.code {
			s.score = 0 // a line of code answers no Korean question in prose (code.go)
		}
	}
	byPos := make(map[[2]int]sentence, len(sents)+len(repeats))
	for _, s := range append(repeats, sents...) {
		byPos[[2]int{s.rank, s.pos}] = s
	}
	slices.SortStableFunc(sents, func(a, b sentence) int { return cmp.Compare(b.score, a.score) })
	return ranking{sents: sents, qw: qw, at: byPos, want: want, price: price}
}

// pick chooses the sentences of the answer, best first: the best one with the list it introduces or,
// for a question asking how or why, the sentence that continues it; then the next best while they score at
// least secondRatio of it and fit in MaxChars. It returns nothing when the chosen sentences do not hold
// enough of the question's focus words (covered).
//
// reserve are further passages (rag.GenerateRequest.Reserve): once passages cover the question, the
// sentences are chosen from both, ranked by their search scores, so that the sentence a passage the per-document cap kept
// out holds can answer; the decision itself reads passages only.
func (g *Generator) pick(question, previous string, passages, reserve []rag.Passage) []sentence {
	question, topic := standalone(question, previous)
	r, shown, picked := g.choose(question, previous, topic, passages)
	if len(shown) == 0 || g.refusal(question, r, picked, shown, passages) != "" {
		return nil
	}
	if len(reserve) > 0 {
		// Ranked by their search scores (rag.Passage.Score), uncapped: a reserve passage the cap moved below
		// other documents' weaker passages is weighed where its score puts it.
		all := append(slices.Clip(passages), reserve...)
		slices.SortStableFunc(all, func(a, b rag.Passage) int { return cmp.Compare(b.Score, a.Score) })
		if r2, s, _ := g.choose(question, previous, topic, all); len(s) > 0 {
			r, shown, passages = r2, s, all
		}
	}
	if otherEvent(question, r, shown) {
		return nil // decided on what is shown, the reserve's sentences included
	}
	if g.opt.MoreChars > 0 {
		shown = g.more(question, previous, topic, passages, shown)
	}
	return shown
}

// more adds to shown, an answer decided within MaxChars, the sentences the answer would quote given
// MoreChars more room (one more sentence at most), after its own: a long best sentence often leaves no
// room for the next one, which holds the answer ("… 시도를 하였다." before "결국 미국의 찰스 오스틴이 …
// 우승을 한다."). They are not weighed in deciding whether the passages cover the question, and a
// sentence that the narrow answer chose keeps its place, so the wider choice only adds.
func (g *Generator) more(question, previous, topic string, passages []rag.Passage, shown []sentence) []sentence {
	wide := *g
	wide.opt.MaxChars += g.opt.MoreChars
	_, extra, _ := wide.choose(question, previous, topic, passages)
	used := 0
	for _, s := range shown {
		used += length(s)
	}
	for _, s := range extra {
		if len(shown) > g.opt.MaxSentences {
			break
		}
		if slices.ContainsFunc(shown, func(o sentence) bool { return o.rank == s.rank && o.pos == s.pos }) ||
			used+length(s) > wide.opt.MaxChars {
			continue
		}
		shown = append(shown, s)
		used += length(s)
	}
	return shown
}

// choose ranks the passages' sentences for the question (a follow-up made standalone, with the topic it
// refers to) and chooses those of the answer (pick): shown are the sentences the answer quotes, picked those with the ones it weighs without showing them (the not-covered decision,
// refusal, reads both). Both are empty when no sentence can answer.
func (g *Generator) choose(question, previous, topic string, passages []rag.Passage) (r ranking, shown, picked []sentence) {
	r = g.rankTopic(question, previous, topic, passages)
	if len(r.sents) == 0 {
		return r, nil, nil
	}
	explain := explanatory(question)
	remedy := explain && hasCue(question, remedyCues)
	_, list := wantsList(question)
	// A heading that holds none of the question's focus words scored by its section and title; it is no
	// answer, nor is a line without words or a piece of a table cell (answerable).
	i := slices.IndexFunc(r.sents, func(s sentence) bool { return (!s.heading || matchesFocus(s, r.qw)) && answerable(s, r.want) })
	if i < 0 {
		return r, nil, nil
	}
	best, ref := r.sents[i], r.sents[i].score
	if best.heading && !(best.lead && list) && echoes(best.text, r.qw) {
		// A heading that says no more than the question leads the list it heads for a list question;
		// otherwise what it names is said by the first sentence of its section ("III. 검토의견" → "개정안은 …
		// 규정하려는 것임"), or failing one in its passage, by the next best sentence. A heading that says more
		// ("수석전문위원 오창석") may be the answer.
		if first, ok := r.opening(best); ok {
			best = first
		} else if j := slices.IndexFunc(r.sents, func(s sentence) bool { return !s.heading && answerable(s, r.want) }); j >= 0 {
			best = r.sents[j]
		} else {
			return r, nil, nil
		}
	}
	var displaced []sentence // at most one
	if r.want != typeNone && !best.value {
		// "환경노동위원회 회의는 언제 열렸나요?": the minutes' title line names the committee and the meeting, the
		// line under it gives the date ("일 시 2024년5월7일(화)"). A sentence of the best one's document that
		// gives what the question asks for, scoring near it, answers in its place; the one it displaces still
		// counts in deciding whether the passages cover the question.
		if j := slices.IndexFunc(r.sents, func(s sentence) bool {
			return s.value && passages[s.rank].Title == passages[best.rank].Title && !s.heading && answerable(s, r.want) &&
				s.score >= g.p.valueShare*best.score
		}); j >= 0 {
			displaced, best = []sentence{best}, r.sents[j]
		}
	}
	// A when/how-many question whose best sentence gives a value is answered by it; another sentence joins
	// only when it gives a value too and holds the words around the question word that the best one holds
	// (another answer to the same question: "언제부터 시행되나요?" asks when the law takes effect, not when
	// it was referred), or stands in the best one's list.
	value := r.want != typeNone && best.value
	siblings := r.list(best)
	ask := askWords(question, r.qw)
	var unshown []sentence
	taken := map[[2]int]bool{}
	take := func(s sentence) {
		picked = append(picked, s)
		taken[[2]int{s.rank, s.pos}] = true
	}
	take(g.trim(best, r.qw))
	used := length(best)
	if r.price && !best.value {
		// "신림 도담마을의 월세는 얼마인가요?": the sentence naming the estate says nothing of money; the
		// notice's line a few lines on does, in its own words ("임대조건: … 월 임대료 15만원"). The nearest
		// sentence of its section that states a sum, before the next heading, joins it.
		if u, ok := r.nearest(best, g.p.window+1, func(u sentence) bool { return u.value }); ok {
			take(g.trim(u, r.qw))
			used += length(u)
		}
	}
	// takeBlock takes what lead introduces, each unit shown as a line of its block, up to listChars.
	takeBlock := func(lead sentence) {
		for _, pos := range lead.block {
			u, ok := r.at[[2]int{lead.rank, pos}]
			if !ok || used+length(u) > g.p.listChars {
				break
			}
			if !taken[[2]int{u.rank, u.pos}] {
				u.row = !u.item
				take(u)
				used += length(u)
			}
		}
	}
	if best.lead {
		// The list under a lead-in or heading is the answer to "what documents", "which steps".
		takeBlock(best)
	} else if next, ok := r.at[[2]int{best.rank, best.pos + 1}]; ok && !next.heading && !value &&
		(next.line == best.line && explain || strings.HasSuffix(best.text, "?")) {
		// A question in the text is followed by its answer; so is what a lecture says before it explains.
		next = g.trim(next, r.qw)
		if used+length(next) <= g.opt.MaxChars || strings.HasSuffix(best.text, "?") {
			take(next)
			used += length(next)
			if next.lead && announcesList(next.text) {
				takeBlock(next) // "… 이동하려면 세 가지 단계가 있습니다." and its steps
			}
			// The explanation goes on in its paragraph: "이유는 여러 가지입니다. 메타는 기본적으로 …"; so does the
			// answer to a question the text asks itself ("그럼 예산은 얼마로 잡아야 할까요? 여기서 … 가져올게요.
			// … 그래서 제가 쓰는 공식은 …").
			goesOn := explain || strings.HasSuffix(best.text, "?")
			for pos := next.pos + 1; goesOn && next.line == best.line && len(picked) < g.opt.MaxSentences; pos++ {
				s, ok := r.at[[2]int{best.rank, pos}]
				if !ok || s.line != best.line || used+length(s) > g.opt.MaxChars {
					break
				}
				take(g.trim(s, r.qw))
				used += length(s)
				if s.lead && announcesList(s.text) {
					takeBlock(s) // "… 이동하려면 세 가지 단계가 있습니다." and its steps
				}
			}
			if last := picked[len(picked)-1]; explain {
				// A paragraph that ends by naming what the question needs ("그래서 필요한 게 중복 제거 …") is
				// answered by the next one, which opens with that name ("중복 제거의 원리는 간단해요. …"); so is
				// one that describes a problem by the next, which draws the conclusion ("그래서 …를 권합니다").
				// Like a list, the two paragraphs may take more room than one answer's sentences: the next one's
				// first sentences, as many as an answer quotes.
				budget := min(g.p.listChars, 2*g.opt.MaxChars)
				para, ok := r.at[[2]int{best.rank, last.pos + 1}]
				if ok && !para.heading && para.line != last.line && (introduces(last, para, r.qw) || concludes(para.text)) {
					for pos := para.pos; pos < para.pos+g.opt.MaxSentences; pos++ {
						s, ok := r.at[[2]int{best.rank, pos}]
						if !ok || s.line != para.line || used+length(s) > budget {
							break
						}
						take(g.trim(s, r.qw))
						used += length(s)
					}
				}
			}
		}
	}
	// around counts the sentences the window below adds: read with the best one as one passage, they do not
	// take the place of the further sentences an answer quotes (MaxSentences), only their room.
	around := 0
	if !best.lead {
		// The best sentence's paragraph often says the rest of the answer in the sentences around it: the
		// rule before its consequence ("구매 이벤트에는 꼭 금액과 통화를 같이 보내야 해요. … 금액이 빠지면 …"), a
		// value and the advice on it ("… 1%에서 10% 사이로 크기를 정해요. … 처음에는 1%로 시작하고 …"). A
		// sentence near it that holds what it lacks joins with those between, as written, before sentences
		// of other paragraphs.
		for _, pos := range r.window(question, best, value, g.p.window) {
			s := r.at[[2]int{best.rank, pos}]
			if taken[[2]int{s.rank, s.pos}] {
				continue
			}
			s = g.trim(s, r.qw)
			if used+length(s) > g.opt.MaxChars {
				break
			}
			take(s)
			used += length(s)
			around++
		}
	}
	if remedy && !slices.ContainsFunc(picked, func(s sentence) bool { return prescribes(s.text) }) {
		// A question asking what to do about a problem ("구매가 2배로 잡혀요 ㅠㅠ 어떻해요") matches the
		// sentence that describes it; what to do is the instruction its paragraph gives ("… event_id 필드에 같은
		// 주문 번호를 넣으면 돼요"): the nearest one, before or after it.
	near:
		for d := 1; d < g.p.remedyReach; d++ {
			for _, pos := range []int{best.pos - d, best.pos + d} {
				s, ok := r.at[[2]int{best.rank, pos}]
				if !ok || s.line != best.line || s.heading || taken[[2]int{s.rank, pos}] || !prescribes(s.text) {
					continue
				}
				if s = g.trim(s, r.qw); used+length(s) <= g.opt.MaxChars {
					take(s)
					used += length(s)
				}
				break near
			}
		}
	}
	for _, s := range r.sents {
		if len(picked)+len(unshown)-around >= g.opt.MaxSentences || s.score < g.p.secondRatio*ref {
			break
		}
		if taken[[2]int{s.rank, s.pos}] || slices.ContainsFunc(picked, func(o sentence) bool { return similar(o.terms, s.terms) }) {
			continue // already shown, or the same sentence in another chunk or version of the document
		}
		if s.heading {
			continue // a heading alone says nothing of the question
		}
		if passages[s.rank].Title != passages[best.rank].Title && !addsFocus(s, picked, r.qw) && s.score < g.p.otherDoc*ref {
			continue // another document's sentence that repeats what is already matched (table-cell debris)
		}
		// Sentences the answer does not show though they would have joined it: they still count in
		// deciding whether the passages cover the question (covered), which weighs the sentences an answer
		// of this length quotes.
		hide := !answerable(s, r.want) || // a contact line, table debris
			// A sentence that matched through its passage's title or section alone joins only beside a chosen
			// one that holds a focus word (it may drop the subject that one names): every line of a section
			// titled "검토의견" scores by the title.
			!matchesFocus(s, r.qw) && !slices.ContainsFunc(picked, func(o sentence) bool {
				return o.rank == s.rank && (o.pos == s.pos-1 || o.pos == s.pos+1) && matchesFocus(o, r.qw)
			}) ||
			// Another document's sentence adds nothing to a list that answers with every focus word.
			(best.lead || len(siblings) > 0) && passages[s.rank].Title != passages[best.rank].Title &&
				!addsFocus(s, picked, r.qw) && holdsAllFocus(picked, r.qw) ||
			value && !valueAnswer(s, best, siblings, ask)
		s = g.trim(s, r.qw)
		if l := length(s); used+l <= g.opt.MaxChars && hide {
			unshown = append(unshown, s)
			used += l
		} else if used+l <= g.opt.MaxChars {
			take(s)
			used += l
			if strings.HasSuffix(s.text, ":") || s.lead && announcesList(s.text) {
				// What a sentence announces with a colon, or by naming its count ("… 세 가지 단계가
				// 있습니다"), is what it says: the list or table after it (code.go).
				takeBlock(s)
			}
		}
	}
	shown = picked
	picked = append(slices.Clip(picked), unshown...)
	if len(displaced) > 0 && !taken[[2]int{displaced[0].rank, displaced[0].pos}] {
		picked = append(picked, displaced[0])
	}
	return r, shown, picked
}

// nearest returns the sentence of best's passage nearest to it, at most reach positions away and with no
// heading between, for which ok holds; after it before before it at the same distance.
func (r ranking) nearest(best sentence, reach int, ok func(sentence) bool) (sentence, bool) {
	open := [2]bool{true, true} // the way after, and before, is not closed by a heading
	for d := 1; d <= reach; d++ {
		for i, sign := range []int{1, -1} {
			if !open[i] {
				continue
			}
			u, found := r.at[[2]int{best.rank, best.pos + sign*d}]
			if !found || u.heading {
				open[i] = false
				continue
			}
			if ok(u) {
				return u, true
			}
		}
	}
	return sentence{}, false
}

// refusal names the rule by which the chosen sentences do not cover the question (package doc, "Not
// covered"), or returns "" when they do.
func (g *Generator) refusal(question string, r ranking, picked, shown []sentence, passages []rag.Passage) string {
	switch share, words := g.covered(picked, r, passages); {
	case missingName(picked, r, passages):
		return "missingName"
	case share < g.opt.MinCoverage && words < g.p.minWords:
		return "share"
	case rival(question, r.qw, r.sents, passages):
		return "rival"
	case unasked(question, r, passages):
		return "unasked"
	case unnamedTopic(question, r, passages):
		return "unnamedTopic"
	case r.want == typeTime && otherValue(question, r, shown, passages):
		return "otherValue"
	case missingUnit(question, r, shown, passages):
		return "missingUnit"
	case missingValue(question, r, shown):
		return "missingValue"
	case missingAttribute(question, r, picked, passages):
		return "missingAttribute"
	case absentThing(question, r, passages):
		return "absentThing"
	}
	return ""
}

// window returns the positions of the sentences around best, in its paragraph, that complete it, nearest
// first. On either side, for a question asking how, why or whether or asking two things, the farthest
// sentence within reach that holds a focus word best lacks, with every sentence between; after it, when
// best gives the amount a how-many question asks for, the sentences that each give one of its amounts
// again ("1%에서 10% …" → "1%가 …" → "처음에는 1%로 시작하고 …"; an amount the question gives is no answer).
// Headings and lines that cannot answer end the window.
func (r ranking) window(question string, best sentence, value bool, reach int) []int {
	bestValues := quantities(best.text)
	for t := range quantities(question) {
		delete(bestValues, t) // "결과의 7가지 지분 중 …"
	}
	// A question for one fact has it in one sentence; one asking how, why or whether, or two things ("… 꼭
	// 넣어야 되나요? 빼면 어떻게 되요?"), is answered by what surrounds it.
	complete := explanatory(question) || len(closingWords(question)) > 1
	adds := func(s sentence) bool {
		for i, w := range r.qw {
			if w.focus && !w.given && !w.history && s.deg != nil && s.deg[i] >= 0.5 && best.deg[i] < 0.5 {
				return true
			}
		}
		return false
	}
	repeats := func(s sentence) bool {
		for t := range quantities(s.text) {
			if bestValues[t] {
				return true
			}
		}
		return false
	}
	var out []int
	for _, d := range []int{-1, 1} {
		far := 0
		chain := value && d > 0 && r.want == typeNumber
		for k := 1; k <= reach; k++ {
			s, ok := r.at[[2]int{best.rank, best.pos + d*k}]
			if !ok || s.line != best.line || s.heading || !answerable(s, r.want) {
				break
			}
			chain = chain && repeats(s)
			if chain || complete && adds(s) {
				far = k
			}
		}
		for k := 1; k <= far; k++ {
			out = append(out, best.pos+d*k)
		}
	}
	return out
}

// quantityRe matches an amount: a number with a percent sign or a Korean counter or unit joined to it
// ("1%", "100명", "5만", "3일"), not one inside a name ("S7", "A1024").
var quantityRe = regexp.MustCompile(`(?:^|[^\p{L}\d.,])(\d[\d,.]*(?:%|\p{Hangul}))`)

// quantities returns the amounts text gives (quantityRe), each with its unit.
func quantities(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range quantityRe.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// introduces reports whether the paragraph opening with s goes on from last, the sentence before it: s's first
// word is a focus word that last holds and the question does not (the name last gave what it explains).
func introduces(last, s sentence, qw []qword) bool {
	words := splitWords(s.text)
	if len(words) == 0 {
		return false
	}
	first := questionWords(words[0], "")
	if len(first) == 0 || !first[0].focus || degree(first[0], last.terms) < 1 {
		return false
	}
	for _, w := range qw {
		if degree(first[0], termSet(strings.Join(w.terms, " "))) >= 0.5 {
			return false
		}
	}
	return true
}

// otherValue reports whether the answer to a when question gives the date of something else: the Korean
// noun that is the topic or subject right before the question word — what the question asks the time of
// ("임기는 몇 년", "시행일은 언제") — is held by none of the shown sentences, their neighbours in their
// passages, nor their passages' titles and sections. A date beside the question's other words ("위원회에
// 회부되었음" for the term of a committee's members) does not answer it. A noun that names the kind of value
// ("기간은 몇 년", "날짜는 언제") is no such noun, nor is a bare word. Only a question of one sentence is
// read so (one that goes on asks more than that value), and only against Korean sentences: an English
// passage cannot hold the Korean noun. (Amounts are left alone: documents name what they count in other
// words — "임대료" for a question's "월세", "기록" for "신기록" — where a date is stated with its event;
// docs/retrieval.md, "Answers".)
func otherValue(question string, r ranking, shown []sentence, passages []rag.Passage) bool {
	if len(closingWords(question)) > 1 || !slices.ContainsFunc(shown, func(s sentence) bool {
		return strings.ContainsFunc(s.text, func(c rune) bool { return unicode.Is(unicode.Hangul, c) })
	}) {
		return false
	}
	words := splitWords(question)
	at := slices.IndexFunc(words, func(w string) bool {
		return slices.ContainsFunc(questionWordPrefixes, func(p string) bool { return strings.HasPrefix(w, p) })
	})
	if at < 1 {
		return false
	}
	word := words[at-1]
	i := slices.IndexFunc(r.qw, func(w qword) bool { return w.terms[0] == word && !w.history })
	if i < 0 {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(word)
	if w := r.qw[i]; !w.focus || w.given || !isHangulWord(word) || utf8.RuneCountInString(word) < 3 ||
		!strings.ContainsRune("은는이가", last) || valueKind(word) || timeKind(word) {
		return false
	}
	tc := topicCache{}
	for _, s := range shown {
		if s.deg[i] >= askFound || degree(r.qw[i], termSet(passages[s.rank].Title+"\n"+passages[s.rank].Section)) >= askFound ||
			topicDegree(r.qw[i], tc.of(r.qw, passages, s.rank)) >= askFound {
			return false // a follow-up's topic may be named anywhere in the passage (topicTerms)
		}
		for _, d := range []int{-1, 1} {
			if o, ok := r.at[[2]int{s.rank, s.pos + d}]; ok && o.deg != nil && o.deg[i] >= askFound {
				return false
			}
		}
	}
	return true
}

// timeKinds name a kind of time ("보도한 시간은 언제", "내린 것은 언제"), as the cues of answerType do: no
// event whose date the answer must name.
var timeKinds = []string{"시간", "시각", "일시", "일자", "날", "해", "때", "연도", "년도", "시기", "시점", "날짜", "기간", "것"}

// timeKind reports whether the Korean word is a time kind (timeKinds) with its particle, alone or closing a
// word ("내린것은").
func timeKind(word string) bool {
	_, n := utf8.DecodeLastRuneInString(word)
	noun := word[:len(word)-n]
	return slices.ContainsFunc(timeKinds, func(k string) bool { return noun == k || k == "것" && strings.HasSuffix(noun, k) })
}

// conclusions open a sentence that draws the conclusion of what came before ("그래서 A/B 테스트 기능을 쓰는 걸
// 권합니다", "So, …").
var conclusions = []string{"그래서", "따라서", "그러므로", "그러니까", "결국", "so", "therefore", "thus"}

// concludes reports whether text opens with a conclusion word.
func concludes(text string) bool {
	words := splitWords(text)
	return len(words) > 0 && slices.Contains(conclusions, words[0])
}

// valueKind reports whether the Korean word names a kind of value, as the question cues of answerType do
// ("비율은", "기간이", "금액은").
func valueKind(word string) bool {
	_, n := utf8.DecodeLastRuneInString(word)
	noun := word[:len(word)-n] // without its particle
	for _, c := range typeCues {
		for _, cue := range c.cues {
			if cue[0] >= 0x80 && strings.TrimRight(cue, "은는") == noun {
				return true
			}
		}
	}
	return false
}

// list returns the positions of the list the item s stands in: the items around it and the lead-in that
// introduces them, or nil when s is no item.
func (r ranking) list(s sentence) []int {
	if !s.item {
		return nil
	}
	out := []int{s.pos}
	for _, d := range []int{-1, 1} {
		for pos := s.pos + d; ; pos += d {
			u, ok := r.at[[2]int{s.rank, pos}]
			if !ok {
				break
			}
			if u.item || d < 0 && u.lead && slices.Contains(u.block, s.pos) {
				out = append(out, pos)
			}
			if !u.item {
				break
			}
		}
	}
	return out
}

// askWords returns the indexes in qw of the focus words nearest the question's question word ("언제",
// "몇", "얼마"): the last before it and the first after it. They name what is asked ("임대보증금은 얼마",
// "언제부터 시행되나요"); the words further away name what it is asked of.
func askWords(question string, qw []qword) []int {
	words := splitWords(question)
	at := slices.IndexFunc(words, func(w string) bool {
		return slices.ContainsFunc(questionWordPrefixes, func(p string) bool { return strings.HasPrefix(w, p) })
	})
	if at < 0 {
		return nil
	}
	index := func(w string) int {
		return slices.IndexFunc(qw, func(q qword) bool { return q.terms[0] == w && !q.history && (q.focus || q.how) })
	}
	var out []int
	for i := at - 1; i >= 0; i-- {
		if k := index(words[i]); k >= 0 {
			out = append(out, k)
			break
		}
	}
	for i := at + 1; i < len(words); i++ {
		if k := index(words[i]); k >= 0 {
			out = append(out, k)
			break
		}
	}
	return out
}

// valueAnswer reports whether s may join the answer to a when/how-many question whose best sentence gives
// a value: it stands in the best one's list, or follows it in its paragraph ("그래서 이를 … 일컫는다"), or
// gives a value too — in another passage only while holding the ask words the best one holds (the
// referral date of a bill is no answer to when the law takes effect).
func valueAnswer(s, best sentence, siblings []int, ask []int) bool {
	if s.rank == best.rank && (slices.Contains(siblings, s.pos) || s.pos == best.pos+1 && s.line == best.line) {
		return true
	}
	return s.value && (s.rank == best.rank || holdsAsk(s, best, ask))
}

// holdsAsk reports whether s holds each of the ask words (askWords) that best holds.
func holdsAsk(s, best sentence, ask []int) bool {
	for _, i := range ask {
		if best.deg[i] >= 0.5 && s.deg[i] < 0.5 {
			return false
		}
	}
	return true
}

// holdsAllFocus reports whether the picked sentences together hold every focus word of the question (words
// every passage's title holds aside).
func holdsAllFocus(picked []sentence, qw []qword) bool {
	for i, w := range qw {
		if w.focus && !w.given && !w.history && !slices.ContainsFunc(picked, func(o sentence) bool { return o.deg[i] >= 0.5 }) {
			return false
		}
	}
	return true
}

// echoes reports whether every word of the heading h is one of the question's words: it names what the
// question asks about and says nothing of it ("III. 검토의견" for "검토의견은 무엇인가요?").
func echoes(h string, qw []qword) bool {
	h = romanNumeral.ReplaceAllString(h, "")
	if n, _ := listMarker(h); n > 0 {
		h = h[n:]
	}
	for _, w := range splitWords(h) {
		terms := termSet(w)
		if !strings.ContainsFunc(w, unicode.IsLetter) {
			continue
		}
		if !slices.ContainsFunc(qw, func(q qword) bool { return degree(q, terms) >= 0.5 }) {
			return false
		}
	}
	return true
}

// romanNumeral matches the Roman numeral that numbers a heading ("III. 검토의견").
var romanNumeral = regexp.MustCompile(`^[IVXivx]{1,4}\.\s+`)

// opening returns the best sentence of the section the heading h opens, in h's passage (the first of
// those that score best): the sentences after it up to the next heading, sub-headings right after it
// skipped, lines that answer nothing (answerable) left out.
func (r ranking) opening(h sentence) (sentence, bool) {
	var section []string
	for pos := h.pos + 1; ; pos++ {
		u, ok := r.at[[2]int{h.rank, pos}]
		if !ok || u.heading && len(section) > 0 {
			break
		}
		if !u.heading && answerable(u, r.want) {
			section = append(section, u.text)
		}
	}
	// A sentence an overlapping chunk repeats is scored in its first copy.
	if k := slices.IndexFunc(r.sents, func(s sentence) bool { return slices.Contains(section, s.text) }); k >= 0 {
		return r.sents[k], true
	}
	return sentence{}, false
}

// covered is the weighted share of the question's focus words that the picked sentences hold (a word
// found only in a sentence's title or section counts in part), and how many of them. Words every passage's
// title holds are left out, and so are frame words, fillers, predicates and quantifiers ("how many") unless
// the question has nothing else. A focus word that no passage holds weighs most: a question about
// something the documents never name is not covered, however many of its other words they share.
//
// A question that gives a name or number a passage holds but the answer does not (missingName) is not
// covered at all (0, 0), whatever the share: the answer is about another thing or year ("What is
// Mozilla's revenue for 2020?" answered with 2011's, "Who founded the Thunderbird project in 2003?" with
// what the Mozilla Foundation became in 2003).
func (g *Generator) covered(picked []sentence, r ranking, passages []rag.Passage) (share, words float64) {
	qw := r.qw
	// The question's own focus words; for a follow-up without any ("그건 언제였나요?"), those of the
	// previous question it carries or of the topic it refers to (followup.go: the topic is what the
	// passages were found by, not what is asked of it); failing both, every word.
	var use func(qword) bool
	for _, u := range []func(qword) bool{
		func(w qword) bool { return w.focus && !w.given && !w.history && !w.topic && !quantifier(w) },
		func(w qword) bool { return w.focus && !w.given },
		func(w qword) bool { return !w.history },
		func(qword) bool { return true },
	} {
		if slices.ContainsFunc(qw, u) {
			use = u
			break
		}
	}
	titles := map[int]map[string]bool{}
	for _, s := range picked {
		if titles[s.rank] == nil && s.rank < len(passages) {
			titles[s.rank] = termSet(passages[s.rank].Title + "\n" + passages[s.rank].Section)
		}
	}
	if missingName(picked, r, passages) {
		return 0, 0
	}
	have, total := 0.0, 0.0
	topics, tc := topicWords(qw), topicCache{}
	for i, w := range qw {
		if !use(w) {
			continue
		}
		d := 0.0
		for _, s := range picked {
			d = max(d, s.deg[i], g.p.title*degree(w, titles[s.rank]), formulaHolds(w, s.text))
			if w.topic && s.rank < len(passages) {
				d = max(d, g.p.title*topicDegree(w, tc.of(qw, passages, s.rank)))
			}
		}
		c := coverageWeight(w, topics)
		have += c * d
		total += c
	}
	if total == 0 {
		return 0, 0
	}
	return have / total, have
}

// quantifiers follow "how" in English questions ("how many", "how much", "how often"): they ask for an
// amount, which the answer states as a number, not in these words.
var quantifiers = map[string]bool{}

func init() {
	for _, w := range []string{"many", "much", "often"} {
		for _, t := range textproc.IndexTerms(w) {
			quantifiers[t] = true
		}
	}
}

// quantifier reports whether w is one of the quantifiers.
func quantifier(w qword) bool {
	return len(w.terms) == 1 && quantifiers[w.terms[0]]
}

// missingName reports whether a name or number the question gives (givenNames) is held by one of the
// passages (whole, or half its terms) but not by the answer: by none of the picked sentences nor the
// title or section of their passages. A Latin-script name in a Korean question is held by the whole
// passage a picked sentence comes from: Korean sentences leave out the subject their passage has named
// ("React" of a page on React's rendering), English ones name it. A name no passage holds is left to the
// share: the question may spell it otherwise — except a year, which a document writes as the question
// does: one that no picked sentence's passage holds makes the answer one about another year, whatever the
// other passages hold. A sentence of another document than the best one's (picked[0]) that holds nothing
// of the question but its names does not hold them for the answer: a notice's "Issued on August 3, 2020."
// weighed beside Mozilla's revenue for 2011 does not make it the revenue of 2020.
func missingName(picked []sentence, r ranking, passages []rag.Passage) bool {
	qw := r.qw
	if len(picked) > 0 && picked[0].rank < len(passages) {
		doc := passages[picked[0].rank].Title
		picked = slices.DeleteFunc(slices.Clone(picked), func(s sentence) bool {
			return s.rank < len(passages) && passages[s.rank].Title != doc && !holdsMoreThanNames(s, qw)
		})
	}
	korean := slices.ContainsFunc(qw, func(w qword) bool { return !w.history && isHangulWord(w.terms[0]) })
	// heads[rank] are the terms of a passage's title and section, whole[rank] those with its text.
	heads, whole := map[int]map[string]bool{}, map[int]map[string]bool{}
	holds := func(rank int, w qword, text bool) bool {
		sets, s := heads, passages[rank].Title+"\n"+passages[rank].Section
		if text {
			sets, s = whole, s+"\n"+passages[rank].Text
		}
		if sets[rank] == nil {
			sets[rank] = termSet(s)
		}
		return degree(w, sets[rank]) >= askFound
	}
	for i, w := range qw {
		if !w.name || w.given || w.history || w.topic || scopeName(w) {
			continue
		}
		latinInKorean := korean && !strings.ContainsFunc(w.terms[0], unicode.IsDigit)
		if slices.ContainsFunc(picked, func(s sentence) bool {
			return s.deg[i] >= askFound || holds(s.rank, w, latinInKorean) || korean && neighbourHolds(r, s, i)
		}) {
			continue
		}
		if isYear(w.terms[0]) && !strings.ContainsFunc(w.terms[0], notDigit) && !slices.ContainsFunc(picked, func(s sentence) bool { return holds(s.rank, w, true) }) {
			return true // the year is no other spelling of a word the passages hold: the answer is of another year
		}
		for rank := range passages {
			if holds(rank, w, true) {
				return true
			}
		}
	}
	return false
}

// holdsMoreThanNames reports whether s holds a focus word of the question other than the names and
// numbers it gives.
func holdsMoreThanNames(s sentence, qw []qword) bool {
	for i, w := range qw {
		if w.focus && !w.name && !w.given && !w.history && i < len(s.deg) && s.deg[i] >= askFound {
			return true
		}
	}
	return false
}

// notDigit reports whether r is no ASCII digit.
func notDigit(r rune) bool { return r < '0' || r > '9' }

// neighbourHolds reports whether a sentence next to s in its paragraph holds the question word r.qw[i]: a
// Korean text states the year or name once, and the sentence after it goes on without it ("2018년 … 수상했다.
// 특히 베스트 팬덤상은 …").
func neighbourHolds(r ranking, s sentence, i int) bool {
	return slices.ContainsFunc(r.lineNeighbours(s), func(o sentence) bool { return o.deg != nil && o.deg[i] >= askFound })
}

// lineNeighbours returns the sentences just before and after s on its line of its passage.
func (r ranking) lineNeighbours(s sentence) []sentence {
	var out []sentence
	for _, d := range []int{-1, 1} {
		if o, ok := r.at[[2]int{s.rank, s.pos + d}]; ok && o.line == s.line {
			out = append(out, o)
		}
	}
	return out
}

// givenNames returns the words (lower-cased, as questionWords splits them) that the question writes as
// names or numbers: in an English question a word opening with a capital letter that does not open a
// sentence ("Thunderbird", "FAA"), and in any question a word of digits ("2020", "737", "2018-23-51") or
// one of Latin letters inside Korean text ("CPM이", "GA4랑"). Korean words carry no such mark.
func givenNames(text string) map[string]bool {
	names := map[string]bool{}
	text = textproc.Normalize(text)
	korean := strings.ContainsFunc(text, func(r rune) bool { return unicode.Is(unicode.Hangul, r) })
	opening := true
	for _, field := range strings.Fields(text) {
		for j, w := range strings.FieldsFunc(field, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(wordJoiners, r)
		}) {
			first, _ := utf8.DecodeRuneInString(w)
			hangul := strings.ContainsFunc(w, func(r rune) bool { return unicode.Is(unicode.Hangul, r) })
			lw := strings.ToLower(w)
			switch {
			case hangul:
				if _, ok := latinWithParticle(lw); ok && korean && !unicode.IsDigit(first) {
					names[lw] = true
				}
			case unicode.IsDigit(first):
				names[lw] = true
			case korean || unicode.IsUpper(first) && !(opening && j == 0):
				names[lw] = true
			}
		}
		opening = strings.ContainsAny(field[len(field)-1:], ".?!")
	}
	return names
}

// addsFocus reports whether s holds a focus word of the question that none of picked holds: a sentence of
// another passage joins the answer only when it holds another part of it.
func addsFocus(s sentence, picked []sentence, qw []qword) bool {
	for i, w := range qw {
		if !w.focus || w.given || s.deg[i] < 0.5 {
			continue
		}
		if !slices.ContainsFunc(picked, func(o sentence) bool { return o.deg[i] >= 0.5 }) {
			return true
		}
	}
	return false
}

// matchesFocus reports whether s itself holds one of the question's focus words (or, for a question without
// any, one of its words).
func matchesFocus(s sentence, qw []qword) bool {
	anyFocus := slices.ContainsFunc(qw, func(w qword) bool { return w.focus && !w.given })
	for i, w := range qw {
		if (w.focus && !w.given || !anyFocus) && s.deg[i] >= 0.5 {
			return true
		}
	}
	return false
}

// similar reports whether two sentences share most of their terms (Jaccard similarity over 0.8).
func similar(a, b map[string]bool) bool {
	common := 0
	for t := range a {
		if b[t] {
			common++
		}
	}
	union := len(a) + len(b) - common
	return union > 0 && float64(common) > 0.8*float64(union)
}

// length is about how many characters s adds to an answer: its text, a citation and a space, and for a
// table row its table's header.
func length(s sentence) int {
	n := utf8.RuneCountInString(s.text) + 5
	if s.header != "" {
		n += utf8.RuneCountInString(s.header) + 1
	}
	return n
}

// clauses splits a sentence at commas and semicolons followed by a space, outside brackets and quotes; each
// clause keeps its punctuation.
func clauses(text string) []chunk.Span {
	var out []chunk.Span
	depth, start := 0, 0
	for i, r := range text {
		switch r {
		case '(', '[', '{', '「', '『', '《', '〈', '“':
			depth++
		case ')', ']', '}', '」', '』', '》', '〉', '”':
			depth = max(0, depth-1)
		case ',', ';', '，':
			end := i + utf8.RuneLen(r)
			if depth == 0 && end < len(text) && text[end] == ' ' {
				out = append(out, chunk.Span{Start: start, End: end})
				start = end + 1
			}
		}
	}
	if start < len(text) {
		out = append(out, chunk.Span{Start: start, End: len(text)})
	}
	return out
}

// trim cuts a sentence longer than trimAt down to the clauses that match the question's content words and the
// one holding what it asks for (sentence.keep), with margin clauses around them, and marks each cut with an
// ellipsis. Table rows stay whole.
func (g *Generator) trim(s sentence, qw []qword) sentence {
	if g.p.trimAt > 0 && utf8.RuneCountInString(s.text) > g.p.trimAt && !strings.HasPrefix(s.text, "|") {
		s.text = g.trimText(s.text, qw, s.keep-1)
	}
	return s
}

func (g *Generator) trimText(text string, qw []qword, keep int) string {
	cl := clauses(text)
	if len(cl) < 2 {
		return text
	}
	first, last := -1, -1
	for i, c := range cl {
		if keep >= c.Start && keep < c.End {
			if first < 0 {
				first = i // the clause of what the question asks for
			}
			last = i
			continue
		}
		terms := termSet(text[c.Start:c.End])
		for _, w := range qw {
			if !w.frame && !w.history && w.idf > 0 && degree(w, terms) >= 0.5 {
				if first < 0 {
					first = i
				}
				last = i
				break
			}
		}
	}
	if first < 0 {
		return text
	}
	a, b := max(0, first-g.p.margin), min(len(cl)-1, last+g.p.margin)
	if a == 0 && b == len(cl)-1 {
		return text
	}
	out := text[cl[a].Start:cl[b].End]
	if b < len(cl)-1 {
		out = strings.TrimRight(out, ",;， ") + " …"
	}
	if a > 0 {
		out = "… " + out
	}
	return out
}

// unasked reports whether the passages miss what the question asks about: its ask word — the last of its
// focus words that reads as a noun, the attribute a Korean question names just before its question word
// ("탄소중립위원회 위원의 임기는 몇 년인가요?") — is in none of their sentences, neither whole nor in a close
// form (half its terms, a longer word it clips: "비번" of "비밀번호", or a compound holding it: "법률안" in
// "일부개정법률안"), and neither are at least half of its
// focus words. The topic words before it (the entity the passages were retrieved by) do not make up for
// it: the documents name the thing but not what is asked of it. Reworded questions keep their ask word or
// a close form more often than they lose half their focus words, and the words they lose are mostly verbs,
// which are not ask words; nor is the counter after "몇" ("몇 대야"). The rule holds only when a question word
// follows the ask word (asked). Apart from the ask word, a question more than half of whose focus words are
// in none of the passages in any of those forms, among them all but one of its Korean nouns (two at least),
// or all but one of whose English focus words (three at least) are not, is not covered either. Every focus
// word counts among the missing ones ("한국어" of "…의 한국어 번역본은 언제 나왔나요?", "부가세", "환급"), not
// only the nouns, except the counter after "몇", a word of one syllable (oneSyllable), a verb qualifying a
// noun (verbForm) and the predicate closing a sentence of the question (closingWords), which is left out
// of the focus words the absent ones are measured against.
func unasked(question string, r ranking, passages []rag.Passage) bool {
	// A word right after "몇" or "얼마" is a counter or unit ("몇 대야", "몇 명인가요"), not an ask word.
	counters := map[string]bool{}
	words := splitWords(question)
	for i := 1; i < len(words); i++ {
		if words[i-1] == "몇" || words[i-1] == "얼마" {
			counters[words[i]] = true
		}
	}
	// A verb before "수 있다/없다" ("받을 수 있어요") says what may be done, not what it is done to: it counts
	// neither found nor missing.
	modal := map[string]bool{}
	for i := 0; i+2 < len(words); i++ {
		if words[i+1] == "수" && (strings.HasPrefix(words[i+2], "있") || strings.HasPrefix(words[i+2], "없")) {
			modal[words[i]] = true
		}
	}
	vocab := passageWords(passages)
	found := func(i int) bool { return inPassages(r, i, vocab) }
	focus, missing, absent, predicates := 0, 0, 0, 0
	closing := closingWords(question)
	nouns, latin, absentLatin := 0, 0, 0
	ask := -1
	carried := 0 // focus words a follow-up carries from the previous question, found in the passages
	for i, w := range r.qw {
		if (w.history || w.topic) && w.focus && !w.given && found(i) {
			carried++
		}
		if !w.focus || w.given || w.history || w.topic || modal[w.terms[0]] {
			continue
		}
		focus++
		// The question's closing predicate ("불렀는가") and verbs qualifying a noun ("굳힌") are what a reworded
		// question changes first: they count neither found nor missing.
		closes := closing[w.terms[0]] && !nounLike(w)
		if closes {
			predicates++
		}

		if !found(i) && !counters[w.terms[0]] && !oneSyllable(w.terms[0]) && !closes && !verbForm(w) {
			absent++
		}
		if isLatin(w.terms[0]) {
			latin++
			if !found(i) {
				absentLatin++
			}
		}
		if !nounLike(w) || counters[w.terms[0]] {
			continue
		}
		nouns++
		ask = i
		if !found(i) {
			missing++
		}
	}
	// None of the things the question names is in the passages in any form ("맛있는 김치찌개 레시피
	// 알려줘" over a page that says "맛있는 요리"; "the best recipe for chocolate cake" over "Best
	// Practices …"): the one shared word is a coincidence. A question asking for a thing by its kind
	// (entityQuestion) names the answer's class, which the passages need not name.
	entity := ask >= 0 && entityQuestion(words, r.qw[ask].terms[0])
	if nouns >= 2 && missing >= nouns-1 && 2*absent > focus-predicates && !entity || latin >= 3 && absentLatin >= latin-1 {
		return true
	}
	if ask < 0 || found(ask) || !asked(words, r.qw[ask].terms[0]) || entity {
		return false
	}
	// A follow-up ("그 법안은 누가 대표발의했나요?") names its topic through the previous question: the words
	// it carries that the passages hold count among its focus words.
	return float64(absent) >= askMissing*float64(focus+carried)
}

// passageWords returns the words of the passages' titles and text, as inPassages looks them up: a title
// names the subject its passage's sentences leave out ("강완구" of "…에 태어났다"). A section heading does not:
// it names what its part of the document is about, which its passage need not say ("…컴포넌트를 한 단계 더
// 분리하기" over a stylesheet's lines is no answer about rendering steps).
func passageWords(passages []rag.Passage) []string {
	var vocab []string
	for _, p := range passages {
		vocab = append(vocab, splitWords(p.Title+"\n"+p.Text)...)
	}
	return vocab
}

// inPassages reports whether the question word r.qw[i] is in the passages in a close form: held by one of
// their sentences (askFound), or clipped ("비번" of "비밀번호"), or heading a compound ("법률안" of
// "일부개정법률안") among their words (vocab, passageWords).
func inPassages(r ranking, i int, vocab []string) bool {
	w := r.qw[i]
	if slices.ContainsFunc(r.sents, func(s sentence) bool { return s.deg[i] >= askFound }) {
		return true
	}
	for _, f := range []string{w.terms[0], w.stem} {
		if f != "" && (abbreviated(f, vocab) || slices.ContainsFunc(vocab, func(v string) bool { return strings.Contains(v, f) })) {
			return true
		}
	}
	return false
}

// closingWords returns the last word of each sentence of the question: its predicate ("불렀는가",
// "하였나"), which a reworded question changes first and documents say in other forms.
func closingWords(question string) map[string]bool {
	out := map[string]bool{}
	for _, s := range strings.FieldsFunc(question, func(r rune) bool { return strings.ContainsRune(".?!\n", r) }) {
		if words := splitWords(s); len(words) > 0 {
			out[words[len(words)-1]] = true
		}
	}
	return out
}

// verbForm reports whether the Korean question word w reads as a verb qualifying the noun after it
// ("굳힌", "느낀", "만든"): no noun stem, and a last syllable closed by ㄴ or ㄹ.
func verbForm(w qword) bool {
	return w.stem == "" && isHangulWord(w.terms[0]) && adnominal(w.terms[0])
}

// oneSyllable reports whether w is a Korean word of one syllable ("연", "돈"): it has no syllable pair to be
// found by in another form ("연" of "열었다"), so unasked does not count it missing.
func oneSyllable(w string) bool {
	return isHangulWord(w) && utf8.RuneCountInString(w) == 1
}

// asked reports whether one of the two words after w in the question is a question word ("수강료는
// 얼마인가요", "관리비는 한 달에 얼마"): then w is what is asked. A question without one ("…가짜 이름은?")
// names its answer's kind, which the passages may well state in other words.
func asked(words []string, w string) bool {
	for i, x := range words {
		if x != w {
			continue
		}
		for _, y := range words[i+1 : min(i+3, len(words))] {
			if slices.ContainsFunc(questionWordPrefixes, func(p string) bool { return strings.HasPrefix(y, p) }) {
				return true
			}
		}
	}
	return false
}

// askFound is the degree from which a sentence holds a question word in a close form (unasked), and
// askMissing the share of the question's focus words that must be missing with its ask word.
const (
	askFound   = 0.5
	askMissing = 0.5
)

// adnominalEndings end Korean verbs and copulas that qualify the noun after them ("소개한", "쓰이는",
// "위기였을"), which the analyzer may read as a noun with a particle.
var adnominalEndings = []string{"하는", "되는", "한", "된", "할", "될", "인가", "을", "는가", "이는", "기는", "지은", "린", "운"}

// verbEndings are last syllables of Korean verb forms ("펴내며", "보고", "만들어야되요", "키워도").
const verbEndings = "며고서게지나니다요까어아여해돼도"

// nounLike reports whether the question word reads as a Korean noun (with or without its particle): the
// only words unasked takes for what a question asks about. Question words with their particles
// ("몇대몇으로") are not.
func nounLike(w qword) bool {
	word := w.terms[0]
	if utf8.RuneCountInString(word) < 2 || strings.ContainsFunc(word, func(r rune) bool { return r < 0xAC00 || r > 0xD7A3 }) {
		return false
	}
	for _, p := range questionWordPrefixes {
		if strings.HasPrefix(word, p) {
			return false
		}
	}
	r, _ := utf8.DecodeLastRuneInString(word)
	if strings.ContainsRune(verbEndings, r) || w.stem == "" && adnominal(word) {
		return false
	}
	for _, e := range adnominalEndings {
		if strings.HasSuffix(word, e) {
			return false
		}
	}
	return true
}

// isLatin reports whether w is a word of Latin letters at least three long (an English focus word).
func isLatin(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}

// unnamedTopic reports whether a Korean question opens with a topic the passages never name: its first two
// words are focus words, the first a noun or a Latin-script name ("네이버 검색광고 …", "구글 애즈 …",
// "Next.js 서버 컴포넌트 …"), and neither is in the passages' text, titles or sections in any form that
// unasked accepts. A question's opening names what it is about; retrieval found passages for its other
// words ("키워드 입찰가", "캠페인 설정"), which answer the same question about another thing. A reworded question
// keeps its topic or a form of it; the words it changes are verbs and modifiers ("용감한 형제가" is no noun).
func unnamedTopic(question string, r ranking, passages []rag.Passage) bool {
	if textproc.DetectLanguage(question) != "ko" || len(r.qw) < 2 {
		return false
	}
	words := splitWords(question)
	first, second := r.qw[0], r.qw[1]
	if len(words) < 2 || words[0] != first.terms[0] || words[1] != second.terms[0] || !first.focus || !second.focus ||
		first.history || second.history || first.given || second.given {
		return false
	}
	if isHangulWord(first.terms[0]) && !nounLike(first) {
		return false
	}
	var vocab []string
	for _, p := range passages {
		vocab = append(vocab, splitWords(p.Title+"\n"+p.Section+"\n"+p.Text)...)
	}
	for i := range 2 {
		if slices.ContainsFunc(r.sents, func(s sentence) bool { return s.deg[i] >= askFound }) {
			return false
		}
		for _, f := range []string{r.qw[i].terms[0], r.qw[i].stem} {
			if f != "" && (abbreviated(f, vocab) || slices.ContainsFunc(vocab, func(v string) bool {
				return strings.Contains(v, f) || oneLetterOff(f, v)
			})) {
				return false
			}
		}
	}
	return true
}

// oneLetterOff reports whether the Korean word a is the opening of b but for one letter (jamo) of one
// syllable: a misspelt name ("쇼화 천왕" for "쇼와 천황", "앵겨스" for "앵거스") names what the passages do.
func oneLetterOff(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < 2 || len(rb) < len(ra) || !isHangulWord(a) {
		return false
	}
	diff := 0
	for i, x := range ra {
		y := rb[i]
		if x == y {
			continue
		}
		xi, xv, xf, ok1 := syllable(x)
		yi, yv, yf, ok2 := syllable(y)
		if !ok1 || !ok2 {
			return false
		}
		for _, d := range [][2]int{{xi, yi}, {xv, yv}, {xf, yf}} {
			if d[0] != d[1] {
				diff++
			}
		}
		if diff > 1 {
			return false
		}
	}
	return diff == 1
}

// topicParticles mark a Korean question's topic or subject ("CPM은", "학습 제한이").
var topicParticles = []string{"은", "는", "이", "가"}

// topicWord returns the index in qw of the question's topic: its first focus word, when it carries a topic or
// subject particle ("ROAS는 어떻게 계산하는 거예요?"), else -1.
func topicWord(question string, qw []qword) int {
	for i, w := range qw {
		if w.history || !w.focus {
			continue
		}
		word := w.terms[0]
		if latin, ok := latinWithParticle(word); ok {
			word = strings.TrimPrefix(word, latin)
		} else if w.stem == "" || !strings.HasPrefix(word, w.stem) {
			return -1
		} else {
			word = strings.TrimPrefix(word, w.stem)
		}
		if slices.Contains(topicParticles, word) {
			return i
		}
		return -1
	}
	return -1
}

// opensWith reports whether text's first word (after a list marker) is the question word w, with or without
// its particle.
func opensWith(text string, w qword) bool {
	if n, _ := listMarker(text); n > 0 {
		text = text[n:]
	}
	words := splitWords(text)
	return len(words) > 0 && degree(w, termSet(words[0])) >= 1
}

// formulaCues ask how something is calculated; its answer is a formula.
var formulaCues = []string{"계산", "공식", "산출", "구하", "산정", "calculate", "calculated", "computed", "formula"}

// entityQuestion reports whether the question asks for a thing by its kind, with ask as its ask word
// (unasked): "…제정한 법안은 무엇인가?", "…묘사한 신문은 어디인가?" (a who/what/where word closing it), "어떤
// 학문에 …" (the ask word right after which), or no question word and a verb qualifying its last noun
// ("…헌신했던 종교는?"). The ask word then names the answer's class ("법안", "종교"), which documents name by
// the instance ("행정소송법", "기독교"), not an attribute they must state. A question word that is a verb's
// argument ("수당은 누가 정하나요?") or asks for a value ("얼마", "몇", "언제", "어떻게") leaves the ask word
// what is asked of; so does an ask word naming an attribute of the things the question names ("렌더링과 커밋
// 단계의 차이는 무엇인가요?", "…의 장점은 무엇인가?"): the passages must name those things.
func entityQuestion(words []string, ask string) bool {
	n := len(words)
	opens := func(w string, prefixes []string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(w, p) })
	}
	if opens(ask, attributeNouns) || n >= 2 && opens(words[n-2], attributeNouns) {
		return false
	}
	entity, value := false, false
	for i, w := range words {
		switch {
		case !opens(w, questionWordPrefixes):
		case opens(w, copulaEntityWords) && i == n-1, opens(w, whichWords) && i+1 < n && words[i+1] == ask:
			entity = true
		case opens(w, copulaEntityWords) || opens(w, whichWords):
		default:
			value = true
		}
	}
	if value || entity {
		return entity && !value
	}
	for _, w := range words {
		if opens(w, questionWordPrefixes) {
			return false
		}
	}
	return n >= 2 && isHangulWord(words[n-2]) && adnominal(words[n-2])
}

// copulaEntityWords ask who, what or where as the predicate ("…무엇인가?", "누구?"); whichWords ask which
// kind of the noun after them.
var (
	copulaEntityWords = []string{"누구", "무엇", "어디", "뭐"}
	whichWords        = []string{"어느", "어떤", "무슨"}
	// attributeNouns name what is asked of a thing, not a kind of thing (entityQuestion).
	attributeNouns = []string{"차이", "공통점", "이유", "원인", "방법", "의미", "뜻", "장점", "단점", "특징", "역할", "목적",
		"효과", "영향", "관계", "기준", "조건", "절차", "원리", "정의", "개념"}
)

// askedClass returns the noun (its stem) naming the kind of thing a Korean question asks for, when it asks
// for a thing by its kind: the noun before a closing who/what/where word ("…고등학교는 어디인가?"), after
// 어떤/무슨/어느 ("어떤 병을"), or closing a question without a question word ("출신 고등학교는?"); "" for
// another question, and for frame words ("사람", "이름"), which name no class a word of the text ends with.
func askedClass(question string, qw []qword) string {
	words := splitWords(question)
	n := len(words)
	if n < 2 {
		return ""
	}
	opens := func(w string, prefixes []string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(w, p) })
	}
	at := -1
	switch {
	case opens(words[n-1], copulaEntityWords):
		at = n - 2
	case !slices.ContainsFunc(words, func(w string) bool { return opens(w, questionWordPrefixes) }):
		at = n - 1
	default:
		for i, w := range words[:n-1] {
			if opens(w, whichWords) {
				at = i + 1
			}
		}
	}
	if at < 0 || opens(words[at], questionWordPrefixes) {
		return ""
	}
	i := slices.IndexFunc(qw, func(q qword) bool { return q.terms[0] == words[at] && !q.history })
	if i < 0 || qw[i].frame || qw[i].fill || !isHangulWord(words[at]) {
		return ""
	}
	bare := strings.TrimRight(words[at], classParticles)
	if oneNoun := utf8.RuneCountInString(words[at]) == 2 && utf8.RuneCountInString(bare) == 1; !nounLike(qw[i]) && qw[i].stem == "" && !oneNoun {
		return "" // a verb, not a noun of one syllable with its particle ("병을")
	}
	return firstNonEmpty(qw[i].stem, bare)
}

// abbreviations are English words that documents write abbreviated before what they name: "No. 152",
// "Vol. 85". The analyzer drops "no" as a stop word, so the abbreviation is read from the text.
var abbreviations = map[string]*regexp.Regexp{
	"number": regexp.MustCompile(`\bN[Oo]s?\.\s?\S*\d`),
	"volum":  regexp.MustCompile(`\bVol\.\s?\d`),
}

// abbreviates reports whether text writes the question word w abbreviated before a number or code.
func abbreviates(w qword, text string) bool {
	re, ok := abbreviations[w.terms[0]]
	return ok && re.MatchString(text)
}

// pronouns are the English subject pronouns (and possessives) by which a sentence goes on about what the
// sentence before it named.
var pronouns = []string{"It", "He", "She", "They", "Its", "His", "Her", "Their"}

// refersBack reports whether an English sentence opens with a pronoun standing for the previous sentence's
// subject ("It is developed entirely in Java.", "He stepped down on April 3.").
func refersBack(text string) bool {
	first, _, ok := strings.Cut(text, " ")
	return ok && slices.Contains(pronouns, first)
}

// classWord reports whether w is the question word naming class: by its stem, or for a noun of one syllable,
// which the analyzer leaves without one ("병을", "법에"), by the word without its particle.
func classWord(w qword, class string) bool {
	return firstNonEmpty(w.stem, strings.TrimRight(w.terms[0], classParticles)) == class
}

// classParticles end a noun naming a class in a question ("고등학교는", "병을").
const classParticles = "은는이가을를의에"

// namesInstance reports whether text holds a word naming a thing of the class ("광주제일고등학교" of
// 고등학교, "심장병" of 병): a longer word in which the class noun follows other syllables, and which the
// question does not hold itself ("1388년 우왕을 내쫓으며 세운 왕은?" is not answered by 우왕).
func namesInstance(text, class, question string) bool {
	asked := splitWords(question)
	for _, w := range splitWords(text) {
		if i := strings.Index(w, class); i > 0 && isHangulWord(w[:i]) &&
			!slices.ContainsFunc(asked, func(q string) bool { return strings.HasPrefix(q, w[:i+len(class)]) }) {
			return true
		}
	}
	return false
}

// minRun is the shortest run of a question's letters that counts as its phrase: two or three letters are
// one word or an ending any sentence may share ("광고", "이에요").
const minRun = 4

// spacedIn reports whether text writes the question word's Korean stem of three syllables or more as two
// words ("테드 번디는" for "테드번디가", "선거 유세를" for "선거유세는"): the compound the question joins.
func spacedIn(text string, w qword) bool {
	stem := []rune(w.stem)
	if len(stem) < 3 || !isHangulWord(w.stem) {
		return false
	}
	for i := 1; i < len(stem); i++ {
		if strings.Contains(text, string(stem[:i])+" "+string(stem[i:])) {
			return true
		}
	}
	return false
}

// letters returns the letters and digits of text, lower-cased, without the spaces and punctuation between
// them.
func letters(text string) []rune {
	var out []rune
	for _, r := range strings.ToLower(text) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, r)
		}
	}
	return out
}

// commonRun returns the length of the longest run of letters a and b share.
func commonRun(a, b []rune) int {
	best := 0
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
				best = max(best, cur[j+1])
			} else {
				cur[j+1] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}
