// Package extractive is the offline answerer: it answers from the retrieved passages themselves, quoting the
// sentences that best answer the question, each followed by its passage's [n]. It never writes text of its
// own besides citations, spaces, line breaks, list bullets and an ellipsis where it cut a long sentence;
// when the passages do not cover the question it gives generate.NotFound in the question's language.
//
// # Reading the passages
//
// Passages are split into lines and lines into sentences (chunk.Sentences); a markdown table row is one unit
// and keeps its table's header. Each unit knows its layout (units.go): a list item ("- …", "• …", "1. …"
// among other numbered lines), a heading ("# …", or a short line without closing punctuation that a
// paragraph follows, such as "4. 제출 서류"), and a lead-in — a sentence ending its line before a list, or
// ending in ":" — with the list items it introduces (for a sentence ending in ":", every line after it up
// to the first heading that opens prose, so that a table read as lines or items without bullets stay with
// it). The answer service appends a document's next chunk to a passage that ends in such a lead-in, and
// the rest of the paragraph to a passage whose last paragraph the chunker cut. A date written with periods
// ("2023. 11. 9.") is one sentence, not three. A label written one syllable apart, as forms and reports set
// them ("문 의 처 02)6788-5533", "검 토 보 고": three or more one-syllable words standing apart from Korean
// words, textproc.SpacedWords, the keyword index's reader too), is read as its word too; a run glued to the
// word before it is not, as the index may guess it. A Korean sentence whose last word a page break cut
// ("… 기회를 주신 것을 감사드" / "립니다.": a prose line ending in Hangul, the rest closing with 다, 요, 까, 죠 or
// 네) is put back together (broken.go).
//
// # Reading the question
//
// The question is split into words; each word keeps its non-stop analyzer terms (textproc), so that a Korean
// word matches a sentence wholly through its form or particle-free stem (or the noun of a 하다/되다 form the
// analyzer leaves whole: "대표발의했나요" → "대표발의"), and in part through its syllable bigrams; a Latin
// word with a Korean particle ("ROAS는", "1%랑") is its Latin part, in the question and in the passages. A
// Korean predicate also matches the other forms of its verb (verb.go): "풀어요" and "푸는" are both 풀다,
// "뜨는데" and "떴다고" both 뜨다 (ㄹ, ㅂ, ㄷ and 르 irregulars, vowels fused with 어/았), and a stem in 애 the
// intransitive 아-지다 verb it is the causative of ("빼면" (빼다) and "빠지면" (빠지다)); light verbs (하다,
// 되다, 있다) are left out. A focus word in the conditional ("빼면 어떻게 돼요?") stays a focus word and
// matches its verb's other forms too. A count is its number and counter in either spelling
// (textproc.CountTerm): "2배로" and "두 배로" are both "2배", which "2만 원" holds only in part (the digit),
// and "3가지" is "세 가지". A compound the text (or a title) writes in two words ("테드 번디는", "선거 유세를")
// holds the word a question writes joined ("테드번디가", "선거유세는": its stem split by one space).
// Words are classed (focus.go): fillers ("이렇게", "원래", "please", with a particle "머가", and bare
// Hangul letters such as "ㅠㅠ") and question words with their particles
// ("어디서", "언제부터") carry no topic and weigh nothing; Korean predicates ("걸려요", "좋을까요") weigh 0.3,
// except the one right after "어떻게" or "왜", which is what is asked ("어떻게 풀어요?") and weighs as a focus
// word;
// frame words that name what is asked ("이름", "필요한", "name", and right before the question word of a
// how-many question the kind of amount: "크기 비율은 어느 정도", whose answer gives "1%에서 10%") weigh 0.3;
// the rest are focus words; an English frame word counts in its inflected forms too ("called", "named":
// "What was Firefox originally called?" asks for a name, which "originally" singles out). A word
// that every passage's title holds (the subject a filter chose: the notice's complex name) weighs 0.1.
//
// A follow-up is read made standalone against the previous question of its history (followup.go,
// package followup): a word referring back — 그건, 그걸, 거기서, 그때, 그중, "그 보고서는" (a determiner and a
// noun the previous question's topic holds, or one that ends a word of it), it, he, its, their — is
// replaced by the previous question's topic phrase ("CPM이 뭔가요?" then "그건 어떻게 계산해요?" is "CPM은
// 어떻게 계산해요?"; "Who is Brendan Eich?" then "When did he step down?" is about Brendan Eich). The
// previous question is itself first read standalone against the one before it. The topic's words are
// focus words that weigh together as the one word they replaced (each its weight over their count, so that
// "Lion Air Flight 610" weighs as "CPM"), held by a sentence when its passage holds them anywhere (Korean
// sentences leave out the topic their passage names); in deciding whether the answer covers the question
// they count, like a filter's subject, only when the follow-up has no focus word of its own — the topic is
// what the passages were found by, not what is asked of it. A follow-up that names its own topic or leaves
// it out ("월 임대료는 얼마예요?") is read as before: the previous question's words join it at 0.3 when it has
// at most three words.
//
// # How sentences are chosen
//
// A sentence's score is the sum, over question words, of how well the sentence matches the word times the
// word's weight (its inverse frequency over the given sentences, times the class weights above), divided
// by the total weight. A word found only in a neighbouring sentence, in the list a lead-in introduces, or in
// the passage's title or section counts half; a question asking when or how many gets 0.1 for a sentence
// holding a date or number the question does not (types.go: "…지어진 해는?" asks for a year; "수는" and
// "규모" ask for an amount only opening a word, not in "선수는" or "대규모"; a question closing with who, what
// or where asks for a thing, whatever cue it holds on the way, unless it asks 몇, 얼마 or 언제), and a
// how-many question 0.1 more for a sentence holding a focus word and a number in the counter after "몇"
// ("몇 명", "몇가구로", "몇 개의 동으로": "27명", "3786가구", "24개동"); a question asking for a thing by its
// kind — the noun before a closing who/what/where word, after 어떤/무슨/어느, or closing a question without a
// question word, frame words aside ("출신 고등학교는?", "어떤 병을") — gives 0.1 to a sentence holding a focus
// word and a word naming one of that kind, the noun after other syllables ("광주제일고등학교", "심장병"; not
// one the question names itself), which holds the noun wholly; a Korean question gives each sentence 0.1
// times the share of its letters in the longest run of them the sentence repeats, spaces and punctuation
// aside, of four letters at least ("16강에서만난": KorQuAD-style questions are written from their answer
// sentence, and the others share their words scattered; a shorter run is one word or an ending); a question asking for a set ("서류", "조건", "단계",
// "steps") gets 0.25 for a lead-in that holds a focus word and 0.25 more when it names what is asked; a
// question asking how something is calculated ("계산", "공식", "formula") gives a line with "=", "÷" or "×"
// the 0.1 as well (and such a line holds the calculation word in deciding coverage, formula.go); a question asking where or when (어디, 언제, where, when) gives 0.25 to a line whose
// label names that kind of fact — letter-spaced as forms and title pages set labels, or before a colon:
// "장 소 환경노동위원회회의실", "일 시 2024년5월7일(화)", "DATES: …" (labels.go) — and an English where
// question 0.25 to a sentence naming a place it does not, a capitalised name after "from", "in", "at" or
// "near" ("… after takeoff from Soekarno-Hatta International Airport"); in a how/why question the topic — the first focus word, when its particle marks the
// topic or subject ("CPM은 어떻게 계산하나요?") — gets no credit from a passage's title, and a sentence
// opening with it gets 0.15 (a page titled "CTR, CPC, CPM …" is not about CPM in every sentence);
// sentences of lower-ranked passages are weighted 1/(1 + 0.1·rank).
//
// The answer opens with the best sentence that can answer (units.go, answerable): not a line without
// words ("02)6788-5533") unless the question asks for a value, nor a fragment — a line closing a bracket it
// never opened ("위원회의 설치) 1 ∼ 4 (생 략)", a table cell read as a line), a table of contents' line
// (numbered or not), a single word a page break cut off; nor an entry of a reference list (refs.go: a line
// of at most 300 characters opening with its author's date and quoted title or with its title and a site,
// or holding "Retrieved 2014-04-28"), nor a line that is
// itself a question ("state를 교체한 후 업데이트하면 어떻게 되나요?", a heading; one inside a paragraph leads
// into its answer), and for a Korean question in prose without code a line of code scores nothing
// (code.go: "import { useState } from 'react';"). A heading is the best sentence only when it holds a focus word; when
// it says no more than the question ("III. 검토의견" for "검토의견은 무엇인가요?") it leads the list it heads
// for a list question, and otherwise gives way to the first sentence of its section (sub-headings
// skipped) or, failing one in its passage, to the next best sentence; a heading that says more
// ("수석전문위원 오창석") may answer. With the best sentence come
// the whole list it introduces, when it is a lead-in (up to 600 characters; a heading's section only for a
// list question); else the sentence that follows it on its line when the question asks how, why or whether
// ("어떻게", "왜", "…되나요?", "how"; a lecture states what is asked, then answers it) or when it is itself
// a question — and for how, why or whether, or after a question the text asks itself ("그럼 예산은 얼마로
// 잡아야 할까요?"), the rest of that paragraph while it fits; and for how, why or whether, when that paragraph
// is quoted to its end and ends by naming what the next one opens with ("그래서 필요한 게 중복 제거 …" before
// "중복 제거의 원리는 …"), or the next one draws its conclusion ("그래서 …를 권합니다", "So, …"), the next
// paragraph's first sentences too (as many as MaxSentences, within the 600 characters of a list: like a
// list, an explanation over two paragraphs takes more room). Then the sentences around the best one in
// its paragraph that complete it, as written: for a how/why/whether question or one asking two things
// ("… 꼭 넣어야 되나요? 빼면 어떻게 되요?"), the farthest sentence within two on either side holding a focus
// word the best one lacks, with those between (the rule before its consequence); for a how-many question
// whose best sentence gives an amount, the sentences right after it that each give one of its amounts
// again, the question's own aside ("1%에서 10% 사이로 …" → "1%가 …" → "처음에는 1%로 시작하고 …"). They
// take room in MaxChars but not the place of the further sentences. A question asking what to do ("… 두 배로
// 잡혀요 ㅠㅠ 어떻해요", "어떻게 해야 하나요", "what should I do") matches the sentence describing its
// problem; when no chosen sentence gives an instruction ("…면 돼요", "…세요", "…야 합니다", "should"), the
// nearest one of the best sentence's paragraph that does joins it (within four sentences, when it fits
// MaxChars). Further sentences
// follow in score order — from any passage, so that two or three passages each holding part of the answer
// are combined, though a sentence of another document than the best one's only when it holds a focus
// word the chosen ones lack or scores 0.7 of the best — while they score at least 0.4 of the best, are
// not headings, fit in
// Options.MaxChars (or GenerateRequest.MaxChars: a comparison's parts share one answer's length) and are
// not near-copies of one already chosen (overlapping chunks). Some that pass are not shown, though they
// count in deciding whether the passages cover the question (as the sentences an answer of this length
// would quote): a line that cannot answer (above); a sentence matching the question only through its
// passage's title or section, unless it stands beside a chosen one holding a focus word (every line of a
// section titled "검토의견" scores by the title); another document's sentence that adds no focus word to a
// list that answers holding them all; and for a when/how-many question whose best sentence gives a value
// (a date, a duration, "5500만 년", a number — a bare year before a Korean noun, "2050 탄소중립위원회",
// is a name), any sentence that gives none — but the best one's list and the sentence going on from it in
// its paragraph — and another passage's that lacks a word around the question word the best one holds
// ("개정법률은 언제부터 시행되나요?" is answered by "제1조(시행일) … 공포 후 6개월이 경과한 날부터 시행한다."
// alone, not by the next article or the sentence saying when the bill was referred). Two Latin question
// words the text writes as one ("code name", "codenamed") are held by a sentence that does; so is
// "number" by "No." before a code ("Docket No. FAA–2020–0686") and "volume" by "Vol. 85". An English
// sentence opening with a pronoun ("It is developed entirely in Java.") holds the words of the sentence
// before it, whose subject the pronoun is. A class noun of one syllable ("어느 법에", "어떤 병을") is held
// by a sentence naming one ("「비영리민간단체 지원법」"), as a longer one is. A
// chosen sentence ending in ":", or a lead-in naming the count of what follows ("… 이동하려면 세 가지 단계가
// 있습니다", "다음과 같습니다"), brings its block, within 600 characters. A sentence longer
// than 200 characters is cut to the comma-separated clauses that hold question words, with one clause on
// either side. Sentences of one passage that are neighbours are shown in their own order, list items one a
// line with the list cited after its last item, table rows under their header.
//
// Once the answer is decided (below), the sentences it would quote with Options.MoreChars (160) more
// characters join after its own, one past MaxSentences at most: a long best sentence often leaves no room
// for the next one, which holds the answer. They do not count in deciding whether the passages cover the
// question, and an answer with a MaxChars of its own (a comparison's part) gets no more room.
//
// # Not covered
//
// The answer is given only when its sentences hold enough of the question's focus words: at least
// Options.MinCoverage (0.25) of them, a word matched only in a sentence's title counting half, or 1.5 of
// them whatever the share. A question that pairs something no passage names with something they do is not
// covered however much else matches: "X랑 Y" ("GA4랑 메타 광고") with X nowhere in the passages, or "X Y"
// where the passages qualify Y with other words ("메타 픽셀" against a question's "틱톡 픽셀") and X is a
// name written in Latin letters ("TikTok", "GA4") or the bare noun a Korean question opens with. A word the
// passages hold in a longer form ("페북" of "페이스북", "capi" holding "api") counts as found there; an
// opening noun the passages write joined to the next word ("모션그래픽스") or spell otherwise before Y (a
// word there shares a syllable pair with it: "바르셀로나 올림픽" for "바르세롤나 올림픽") is no rival, nor is
// "X과 Y" where Y is a verb ("죽음과 관련하여") or says what is done with X ("휴잭맨과 함께", "전작과 달리"), nor
// "…에도 불구하고". Nor is an X a passage's title or section names (an article on "테드 번디" or "삼성 갤럭시
// S8" leaves the name out of its sentences), one spelt one letter off a word of the passages ("도날드" for
// "도널드", "포물러" for "포뮬러"), a question word ("몇대 대통령"), a verb or a noun the passages hold with the
// copula qualifying Y ("잔존해있던 우라가미", "고아인 숙희를"), or any X before a date ("그가 1995년에").
//
// Nor is a Korean question that opens with a topic the passages never name: its first two words are focus
// words, the first a noun or a Latin-script name ("네이버 검색광고 …", "Next.js 서버 컴포넌트 …"), and
// neither is in the passages' text, titles or sections in any of the forms below. Retrieval found passages
// for its other words, which answer the same question about another thing.
//
// Nor is a question whose ask word is in none of the passages' sentences while at least half of its focus
// words are missing too: the ask word is the last focus word that reads as a Korean noun (not a verb or
// adnominal form, a question word with its particle, or the counter after "몇"), the attribute named just
// before a question word ("행복주택 관리비는 한 달에 얼마…", "강의 수강료는 얼마인가요?"; a question with no
// question word after it has none), found when a sentence holds half its terms, or the passages a longer
// word it clips or a compound it heads ("일부개정법률안"), in their text, titles or sections (a title names
// the subject its passage's sentences leave out: "강완구는 몇년도에 태어났는가?"). The passages name the topic
// the question was retrieved by, not what is asked of it. A question asking for a thing by its kind is not
// read so, by this rule nor the one above: a who/what/where word closing it ("…제정한 법안은 무엇인가?"), or
// its ask word right after 어떤/무슨/어느 ("어떤 학문에"), or no question word and a verb qualifying its last
// noun ("…할아버지가 헌신했던 종교는?"), with no question word asking for a value (얼마, 몇, 언제, 어떻게, 왜).
// Its ask word names the answer's class ("법안", "종교"), which documents name by the instance
// ("행정소송법", "기독교"); a question word that is a verb's argument ("수당은 누가 정하나요?") or a
// possessive attribute without one ("위원 수당 지급액은?") still asks what the passages must state. A reworded question usually keeps its ask word or most of its
// focus words (what it loses are verbs), so it is still answered. A follow-up ("그 법안은 누가
// 대표발의했나요?") names its topic through the previous question: the words it carries from there, or the
// words of the topic its reference was resolved to (below), that the passages hold count among its focus
// words. Every focus word counts among the missing ones, verbs and
// adverbs too ("…의 한국어 번역본은 언제 나왔나요?", "세금계산서 발행 되나요? 부가세 환급…"), but for the counter
// after "몇", a word of one syllable, which has no other form to be found in ("연" of "열었다"), a verb
// qualifying a noun ("지어준", "굳힌") and the predicate closing a sentence of the question ("불렀는가"),
// which reworded questions change first (the closing predicate counts for neither side), nor a verb before
// "수 있다/없다" ("언제 받을 수 있어요?"), which counts neither missing nor found.
//
// Nor is a Korean when question of one sentence whose topic before the question word ("임기는 몇 년",
// "시행일은 언제") is held by none of the Korean sentences shown, their neighbours, nor their passages'
// titles and sections: a date there is the date of something else ("…2023년 11월 10일 우리 위원회에
// 회부되었음" for the term of the committee's members). A topic naming the kind of value ("기간은", "날짜는",
// "시간은", or a word closing in "것": "위헌판정을 내린것은 언제") does not count. How-many questions are not
// read so: documents name an amount in other words ("임대료" for "월세").
//
// Nor is a question that gives a name or number — in English a capitalised word not opening a sentence
// ("FAA", "Thunderbird"), in any question a number ("2020", "737") or a Latin word inside Korean ("GA4") —
// that a passage holds but the answer does not: none of its sentences, nor its passages' titles and
// sections (for a Latin word in a Korean question, nor the whole passage it quotes, since Korean drops the
// subject its passage named; for a number in a Korean question, nor a sentence next to one of them in its
// paragraph, which states the year once: "2018년 … 특히 베스트 팬덤상은 …"). The answer is about another
// year or thing ("What is Mozilla's revenue for 2020?" answered with 2011's). A Latin name the question is
// asked in ("React에서 …", scope.go) and the topic a follow-up refers to are not read so: a page of React's
// documentation need not say React in every passage. "How many", "how much" and "how often" ask for an
// amount: "many", "much"
// and "often" are not focus words.
//
// Nor is an answer that leaves out what the question asks for, read from the question's wording (asked.go):
//   - A Korean count or rate: "몇" and a counter ("찬성 몇 표였나요") asks for a number in that counter or its
//     aliases ("명"/"인", "번"/"회", "위"/"번째", "미터"/"m"), a noun in 률/율 before "얼마" ("인상률은 얼마로")
//     for a rate ("%", "배", "퍼센트") of what the noun names without it ("인상"). The answer is refused when
//     the passages it quotes state no number in that unit and its sentences (with their neighbours and
//     headings) do not name what is counted or the rate's base: the minutes name the bill, not its vote. A
//     general counter ("몇 개", "몇 가지") and a bare "비율" are not read so: documents count in their own
//     words ("50회", "4관왕", "8 사이클" for "몇 주기").
//   - An English question's attribute: the noun phrase a "what is/was …" question asks for (after a
//     possessive: "What was X's net revenue for …" → net revenue) or the object of "which N had …" ("the
//     largest office budget" → office budget), superlatives, names and light heads ("the effect of",
//     "the number of") aside, must be named whole by one of the answer's sentences with its neighbours and
//     headings. Only a question giving a name or number is read so; one in common words ("what is the
//     heat transfer to a cone") was found by the attribute itself and may be answered in other words.
//   - A Korean question asking to be told of something ("… 주차장 정보 있어?", "… 알려줘"): the last noun
//     among its focus words before the closing predicate, general nouns ("정보", "방법", "내용") aside, must
//     be in some passage in a close form; "수 있나" asks what may be and is not read so.
//   - A count or a price: a question asking how many ("몇" and a counter, "how many") or what something costs
//     ("…은 얼마예요?", "how much does … cost") is refused when none of the answer's sentences, nor their
//     neighbours in their paragraphs, states a number in any form (digits, or a numeral word: "세 가지",
//     "이틀", "twenty") other than the question's own: "How many users does Thunderbird have?" over "Gecko is
//     also used by Thunderbird …". Other value questions are answered in words often enough ("입찰가는 얼마부터
//     시작하나요?" by "목표 CPA 근처에서") to be left alone.
//
// The unit and attribute rules look only at the sentences the answer shows and the passages they quote:
// what passages the answer does not use say cannot refuse it. The absent-thing rule looks at every passage
// given, where a passage holding the word lets the answer through.
//
// # Measured
//
// See docs/retrieval.md ("Answers"): `ragd eval ../shared/eval/korquad/KorQuAD_v1.0_dev.json --answers`,
// `ragd eval testdata/eval/fixtures --answers` and `test/answers/samples.sh` (the lectures and housing
// samples through the real binary).
package extractive
