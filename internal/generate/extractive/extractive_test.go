package extractive

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

var citeRe = regexp.MustCompile(`\[(\d+)\]`)

// checkGrounded fails unless every piece of text in the answer is a citation or a quote of the passage its
// citation names (ellipses, list markers and white space aside), and returns the cited numbers.
func checkGrounded(t *testing.T, answer string, passages []rag.Passage) []int {
	t.Helper()
	byN := map[int]string{}
	for _, p := range passages {
		byN[p.N] = footnoteRe.ReplaceAllString(p.Text, "")
	}
	var cited []int
	rest := answer
	for {
		loc := citeRe.FindStringSubmatchIndex(rest)
		if loc == nil {
			if strings.TrimSpace(rest) != "" {
				t.Errorf("text after the last citation: %q", rest)
			}
			break
		}
		n, _ := strconv.Atoi(rest[loc[2]:loc[3]])
		src, ok := byN[n]
		if !ok {
			t.Errorf("answer cites [%d], which is no passage", n)
		}
		cited = append(cited, n)
		for _, part := range strings.FieldsFunc(rest[:loc[0]], func(r rune) bool { return r == '…' || r == '\n' }) {
			if part = strings.TrimSpace(part); part != "" && !strings.Contains(src, part) {
				t.Errorf("%q is not in passage [%d]", part, n)
			}
		}
		rest = rest[loc[1]:]
	}
	return cited
}

// generateStreamed runs g and checks that the streamed deltas add up to the answer.
func generateStreamed(t *testing.T, g *Generator, req rag.GenerateRequest) string {
	t.Helper()
	var deltas []string
	gen, err := g.Generate(context.Background(), req, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := strings.Join(deltas, ""); got != gen.Text {
		t.Errorf("deltas %q do not add up to the answer %q", got, gen.Text)
	}
	if gen.Model != "extractive" {
		t.Errorf("Model = %q", gen.Model)
	}
	return gen.Text
}

var enPassages = []rag.Passage{
	{N: 1, Title: "Boundary layers", Text: "The boundary layer on a flat plate grows with distance from the leading edge. " +
		"Transition to turbulence was observed at a Reynolds number of about 500,000. " +
		"Suction through a porous surface delays transition."},
	{N: 2, Title: "Slipstream effects", Text: "An experimental study of a wing in a propeller slipstream was made. " +
		"The lift increase due to the slipstream was largest at high angles of attack. " +
		"The tests were run in the Langley wind tunnel in 1952."},
	{N: 3, Title: "Heat transfer", Text: "Heat transfer at hypersonic speeds depends on the wall temperature. " +
		"Ablation cools the surface of a re-entry vehicle."},
}

var koPassages = []rag.Passage{
	{N: 1, Title: "임종석", Text: "1989년 2월 15일 여의도 농민 폭력 시위를 주도한 혐의로 지명수배되었다. " +
		"1989년 3월 12일 서울지방검찰청 공안부는 임종석의 사전구속영장을 발부받았다. " +
		"같은 해 6월 30일 평양축전에 임수경을 대표로 파견하여 국가보안법위반 혐의가 추가되었다."},
	{N: 2, Title: "탄소중립 기본계획", Text: "정부는 탄소중립 기본계획을 5년마다 수립한다. " +
		"기본계획에는 부문별 온실가스 감축 목표와 이행 수단이 포함된다.\n\n" +
		"| 부문 | 2030년 감축 목표 |\n| --- | --- |\n| 전환 | 45.9% |\n| 산업 | 11.4% |\n| 건물 | 32.8% |"},
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		question  string
		passages  []rag.Passage
		wantCited int    // the passage the first citation must name
		wantText  string // a phrase the answer must quote
	}{
		{"English", "At what Reynolds number was transition to turbulence observed?", enPassages, 1, "about 500,000"},
		{"EnglishSecondPassage", "Where does the slipstream increase lift the most?", enPassages, 2, "largest at high angles of attack"},
		{"EnglishYear", "When were the slipstream tests run?", enPassages, 2, "in 1952"},
		{"Korean", "임수경을 대표로 파견한 곳은?", koPassages, 1, "평양축전"},
		{"KoreanParticles", "지명수배된 혐의는 무엇인가?", koPassages, 1, "여의도 농민 폭력 시위"},
		{"KoreanTable", "산업 부문의 2030년 감축 목표는?", koPassages, 2, "| 산업 | 11.4% |"},
		{"KoreanPlanCycle", "탄소중립 기본계획은 몇 년마다 수립하나요?", koPassages, 2, "5년마다"},
	}
	g := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := generateStreamed(t, g, rag.GenerateRequest{Question: tt.question, Passages: tt.passages})
			if !strings.Contains(text, tt.wantText) {
				t.Errorf("answer %q lacks %q", text, tt.wantText)
			}
			cited := checkGrounded(t, text, tt.passages)
			if len(cited) == 0 || cited[0] != tt.wantCited {
				t.Errorf("answer %q cites %v first, want [%d]", text, cited, tt.wantCited)
			}
			if n := utf8.RuneCountInString(text); n > DefaultMaxChars {
				t.Errorf("answer of %d characters > %d", n, DefaultMaxChars)
			}
		})
	}
}

func TestGenerateTableKeepsHeader(t *testing.T) {
	t.Parallel()
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "건물 부문 감축 목표", Passages: koPassages})
	header := "| 부문 | 2030년 감축 목표 |\n| --- | --- |\n"
	i := strings.Index(text, header)
	if i < 0 {
		t.Fatalf("answer %q does not quote the table's header", text)
	}
	table, _, _ := strings.Cut(text[i:], "\n\n")
	if !strings.Contains(table, "\n| 건물 | 32.8% |") {
		t.Errorf("answer %q does not quote the row under its header", text)
	}
	checkGrounded(t, text, koPassages)
}

func TestGenerateNotFound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, question, lang string
		passages             []rag.Passage
	}{
		{"English", "What is the recipe for kimchi stew?", "", enPassages},
		{"Korean", "김치찌개 끓이는 방법은?", "", koPassages},
		{"KoreanAgainstEnglish", "김치찌개 끓이는 방법은?", "ko", enPassages},
		{"NoPassages", "What is the lift increase?", "en", nil},
		{"OnlyStopWords", "what is it?", "en", enPassages},
	}
	g := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := generateStreamed(t, g, rag.GenerateRequest{Question: tt.question, Language: tt.lang, Passages: tt.passages})
			lang := tt.lang
			if lang == "" {
				lang = map[bool]string{true: "ko", false: "en"}[strings.ContainsAny(tt.question, "김치")]
			}
			if text != generate.NotFound(lang) {
				t.Errorf("answer %q, want the %s not-found reply", text, lang)
			}
		})
	}
}

// TestGenerateMinCoverage checks the not-found limit at its boundary: a sentence holding one of four content
// words (0.25) answers, one of five (0.2) does not. The other words are in another passage, so that the
// limit and not the absence of what the question names decides (see TestGenerateUnasked); one sentence
// is quoted.
func TestGenerateMinCoverage(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Text: "The aircraft landed safely after the storm."},
		{N: 2, Text: "Turbine. Propeller. Rudder. Aileron."}}
	g := New(Options{MinCoverage: 0.25, MaxSentences: 1})
	for _, tc := range []struct {
		question string
		found    bool
	}{
		{"aircraft turbine propeller rudder", true},
		{"aircraft turbine propeller rudder aileron", false},
	} {
		text := generateStreamed(t, g, rag.GenerateRequest{Question: tc.question, Language: "en", Passages: passages})
		if found := text != generate.NotFound("en"); found != tc.found {
			t.Errorf("%q: answer %q, want found=%v", tc.question, text, tc.found)
		}
	}
}

// TestGenerateLimits checks MaxChars and MaxSentences at their boundaries with equally relevant sentences.
func TestGenerateLimits(t *testing.T) {
	t.Parallel()
	s1 := "Flutter of the wing was observed at Mach 0.8."
	s2 := "Flutter of the tail was observed at Mach 0.9."
	s3 := "Flutter of the fin was observed at Mach 0.95."
	passages := []rag.Passage{{N: 1, Text: s1 + " " + s2 + " " + s3}}
	q := "At what Mach number was flutter observed?"
	two := utf8.RuneCountInString(s1) + utf8.RuneCountInString(s2) + 10
	tests := []struct {
		name string
		opt  Options
		want int
	}{
		{"MaxCharsFitsTwo", Options{MaxChars: two}, 2},
		{"MaxCharsOneShort", Options{MaxChars: two - 1}, 1},
		{"MaxSentences1", Options{MaxSentences: 1, MaxChars: 1000}, 1},
		{"MaxSentences2", Options{MaxSentences: 2, MaxChars: 1000}, 2},
		{"MaxSentences3", Options{MaxSentences: 3, MaxChars: 1000}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := generateStreamed(t, New(tt.opt), rag.GenerateRequest{Question: q, Passages: passages})
			if got := len(citeRe.FindAllString(text, -1)); got != tt.want {
				t.Errorf("answer %q quotes %d sentences, want %d", text, got, tt.want)
			}
			if tt.opt.MaxChars < 1000 && utf8.RuneCountInString(text) > tt.opt.MaxChars {
				t.Errorf("answer of %d characters > MaxChars %d", utf8.RuneCountInString(text), tt.opt.MaxChars)
			}
			checkGrounded(t, text, passages)
		})
	}
}

func TestGenerateTrimsLongSentence(t *testing.T) {
	t.Parallel()
	long := "The program began in 1950 with a small staff, grew through the decade as new tunnels opened, " +
		"moved to a larger site near the coast in 1958, added a hypersonic facility for re-entry studies, " +
		"measured the heat transfer to blunt bodies at Mach 7 with thin-skin models, " +
		"and ended in 1965 when the budget was cut and the staff moved to other centres of research."
	passages := []rag.Passage{{N: 1, Text: long}}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "What heat transfer was measured at Mach 7?", Passages: passages})
	if !strings.Contains(text, "heat transfer to blunt bodies at Mach 7") || !strings.Contains(text, "…") {
		t.Errorf("answer %q is not the matching clauses of the long sentence", text)
	}
	if utf8.RuneCountInString(text) >= utf8.RuneCountInString(long) {
		t.Errorf("answer of %d characters is not shorter than the sentence", utf8.RuneCountInString(text))
	}
	checkGrounded(t, text, passages)
}

func TestGenerateDeduplicatesOverlap(t *testing.T) {
	t.Parallel()
	shared := "The wind tunnel reached Mach 3 in 1956."
	passages := []rag.Passage{
		{N: 1, Text: "The tunnel was built in 1954. " + shared},
		{N: 2, Text: shared + " It closed in 1970."},
	}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "When did the wind tunnel reach Mach 3?", Passages: passages})
	if strings.Count(text, shared) != 1 {
		t.Errorf("answer %q quotes the shared sentence %d times", text, strings.Count(text, shared))
	}
	if cited := checkGrounded(t, text, passages); cited[0] != 1 {
		t.Errorf("answer %q cites [%d] first, want [1] (the better-ranked copy)", text, cited[0])
	}
}

func TestGenerateDropsFootnotes(t *testing.T) {
	t.Parallel()
	passages := []rag.Passage{{N: 1, Text: "재규어는 펜더 기타 중 3대 비인기 기타로 유명하지만[2] 인디음악 애호가들 사이에서 인기가 있다.[13]"}}
	text := generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "펜더의 3대 비인기 기타는?", Passages: passages})
	if cited := checkGrounded(t, text, passages); len(cited) != 1 || cited[0] != 1 {
		t.Errorf("answer %q cites %v, want only [1]: footnote marks must go", text, cited)
	}
}

func TestGenerateFollowUp(t *testing.T) {
	t.Parallel()
	req := rag.GenerateRequest{
		Question: "그건 언제였나요?",
		History: []rag.Turn{
			{Role: rag.RoleUser, Content: "임종석의 사전구속영장은 어디서 발부받았나요?"},
			{Role: rag.RoleAssistant, Content: "서울지방검찰청 공안부입니다. [1]"},
		},
		Passages: koPassages,
	}
	text := generateStreamed(t, New(Options{}), req)
	if !strings.Contains(text, "1989년 3월 12일") {
		t.Errorf("follow-up answer %q lacks the date of the warrant", text)
	}
	checkGrounded(t, text, koPassages)
}

func TestGenerateStreamError(t *testing.T) {
	t.Parallel()
	stop := errors.New("client went away")
	calls := 0
	_, err := New(Options{}).Generate(context.Background(), rag.GenerateRequest{
		Question: "Where does the slipstream increase lift the most?", Passages: enPassages,
	}, func(string) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("err = %v after %d deltas, want the delta error after 1", err, calls)
	}
}

func TestGenerateCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(Options{}).Generate(ctx, rag.GenerateRequest{Question: "lift", Passages: enPassages}, nil)
	if rag.ErrorCode(err) != rag.CodeLLMFailed || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want llm_failed wrapping context.Canceled", err)
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	var g rag.Generator = New(Options{})
	if g.Name() != "extractive" {
		t.Errorf("Name() = %q", g.Name())
	}
}

// TestGenerateCranfield answers real English questions from their relevant Cranfield abstracts: every
// answer quotes and cites only the given passages and is not the not-found reply.
func TestGenerateCranfield(t *testing.T) {
	t.Parallel()
	dir := "../../../../shared/eval/cranfield/"
	docs := map[string]string{}
	readJSONL(t, dir+"corpus.jsonl", func(m map[string]any) { docs[m["_id"].(string)] = m["text"].(string) })
	queries := map[string]string{}
	readJSONL(t, dir+"queries.jsonl", func(m map[string]any) { queries[m["_id"].(string)] = m["text"].(string) })
	rel := map[string][]string{}
	f, err := os.ReadFile(dir + "qrels/test.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(f), "\n")[1:] {
		if fs := strings.Fields(line); len(fs) == 3 && fs[2] >= "3" && len(rel[fs[0]]) < 3 {
			rel[fs[0]] = append(rel[fs[0]], fs[1])
		}
	}
	g := New(Options{})
	answered, asked := 0, 0
	for qid, ids := range rel {
		var passages []rag.Passage
		for i, id := range ids {
			passages = append(passages, rag.Passage{N: i + 1, Text: docs[id]})
		}
		text := generateStreamed(t, g, rag.GenerateRequest{Question: queries[qid], Passages: passages})
		asked++
		if text != generate.NotFound("en") {
			answered++
			checkGrounded(t, text, passages)
		}
	}
	// Cranfield's judgements are loose: some relevant abstracts share hardly a word with the question.
	if asked < 50 || float64(answered) < 0.9*float64(asked) {
		t.Errorf("answered %d of %d Cranfield questions from their relevant abstracts", answered, asked)
	}
}

func readJSONL(t *testing.T, path string, fn func(map[string]any)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
	}
}

// TestGenerateMoreChars: once the answer is decided within MaxChars, the sentence that would follow with
// MoreChars more room joins it after its own: a long best sentence no longer leaves out the next one,
// which names the winner. A MaxChars of one's own gets no more room.
func TestGenerateMoreChars(t *testing.T) {
	t.Parallel()
	long := "The 1996 championship in Atlanta drew the largest field of high jumpers the event had seen, " +
		"with the defending champion trying to keep his title after an injury-hit outdoor season, a long wait " +
		"through the qualifying round and two misses at the opening height in the championship final."
	passages := []rag.Passage{{N: 1, Title: "High jump", Text: long + " In the end the championship went to Charles Austin with a jump of 2.39 m."}}
	q := "Who won the 1996 championship in Atlanta?"
	text := answerHolds(t, passages, q, "Charles Austin")
	if !strings.HasPrefix(text, "The 1996 championship") {
		t.Errorf("answer %q does not open with the best sentence", text)
	}
	if text := generateStreamed(t, New(Options{MaxChars: DefaultMaxChars}), rag.GenerateRequest{Question: q, Passages: passages}); strings.Contains(text, "Austin") {
		t.Errorf("answer %q with a MaxChars of its own took more room", text)
	}
}

// TestTermSetShared: a table row's terms are read with its header's for an answer, but the term set kept
// for the row's text (shared by every later answer) stays the row's own, and every set termSet gives is
// what a fresh analysis gives.
func TestTermSetShared(t *testing.T) {
	row := "| 건물 | 32.8% |"
	before := analyseTerms(row)
	termSet(row) // kept from now on
	for range 2 {
		generateStreamed(t, New(Options{}), rag.GenerateRequest{Question: "건물 부문 감축 목표", Passages: koPassages})
	}
	if got := termSet(row); !maps.Equal(got, before) {
		t.Fatalf("the kept terms of %q became %v, want %v", row, got, before)
	}
	for _, p := range koPassages {
		if got, want := termSet(p.Text), analyseTerms(p.Text); !maps.Equal(got, want) {
			t.Fatalf("termSet(%.30q…) = %v, a fresh analysis %v", p.Text, got, want)
		}
	}
}
