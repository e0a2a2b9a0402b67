package generate_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

func TestSystemPrompt(t *testing.T) {
	t.Parallel()
	p := generate.SystemPrompt("")
	for _, want := range []string{generate.NotFound("en"), generate.NotFound("ko"), "[1]", "language of the question"} {
		if !strings.Contains(p, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Contains(p, "only answer questions about") {
		t.Error("domain rule without a domain")
	}
	if d := generate.SystemPrompt("construction cost estimation (품셈)"); !strings.Contains(d, "You only answer questions about construction cost estimation (품셈)") {
		t.Errorf("domain rule missing:\n%s", d)
	}
}

func TestPassageHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    rag.Passage
		want string
	}{
		{rag.Passage{N: 1, Title: "Paper", PageStart: 3, PageEnd: 4, Section: "2 Methods > 2.1 Data"}, "[1] Paper — pp. 3–4 — 2 Methods > 2.1 Data"},
		{rag.Passage{N: 2, Title: "Paper", PageStart: 5, PageEnd: 5}, "[2] Paper — p. 5"},
		{rag.Passage{N: 3, Title: "notes.md", Section: "Intro"}, "[3] notes.md — Intro"},
		{rag.Passage{N: 4}, "[4] (untitled)"},
	} {
		if got := generate.PassageHeader(tc.p); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func manyPassages(n, chars int) []rag.Passage {
	out := make([]rag.Passage, n)
	for i := range out {
		text := strings.Repeat(fmt.Sprintf("Sentence %d of passage %d about wing loads. ", i, i), chars/40+1)
		out[i] = rag.Passage{N: i + 1, Title: fmt.Sprintf("Doc %d", i+1), PageStart: i + 1, Text: string([]rune(text)[:chars])}
	}
	return out
}

func TestBuildPrompt(t *testing.T) {
	t.Parallel()
	t.Run("Layout", func(t *testing.T) {
		t.Parallel()
		p := generate.BuildPrompt(rag.GenerateRequest{Question: "How heavy are wing loads?", Language: "en",
			Passages: manyPassages(2, 100)}, generate.Budget{})
		if p.System != generate.SystemPrompt("") {
			t.Error("default system prompt not used")
		}
		for _, want := range []string{"Passages:\n\n[1] Doc 1 — p. 1\nSentence 0", "\n\n[2] Doc 2 — p. 2\n", "Question: How heavy are wing loads?", "Answer in English"} {
			if !strings.Contains(p.User, want) {
				t.Errorf("user message lacks %q:\n%s", want, p.User)
			}
		}
		if whole := generate.CountTokens(p.System) + generate.CountTokens(p.User); p.Tokens < whole || p.Tokens > whole+32 {
			t.Errorf("tokens %d", p.Tokens)
		}
	})
	t.Run("KoreanAndOverride", func(t *testing.T) {
		t.Parallel()
		p := generate.BuildPrompt(rag.GenerateRequest{Question: "활주로 길이는?", Language: "ko", SystemPrompt: "Custom.",
			Passages: manyPassages(1, 50)}, generate.Budget{})
		if p.System != "Custom." || !strings.Contains(p.User, "Answer in Korean") {
			t.Errorf("system %q, user %q", p.System, p.User)
		}
	})
	t.Run("MaxPassages", func(t *testing.T) {
		t.Parallel()
		for _, n := range []int{8, 9} {
			p := generate.BuildPrompt(rag.GenerateRequest{Question: "q", Passages: manyPassages(n, 100)}, generate.Budget{MaxPassages: 8})
			if len(p.Passages) != 8 || strings.Contains(p.User, "[9]") {
				t.Errorf("%d given: %d kept", n, len(p.Passages))
			}
		}
	})
	t.Run("MaxPassageChars", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			chars int
			cut   bool
		}{{300, false}, {301, true}} {
			p := generate.BuildPrompt(rag.GenerateRequest{Question: "q", Passages: manyPassages(1, tc.chars)}, generate.Budget{MaxPassageChars: 300})
			text := p.Passages[0].Text
			if n := utf8.RuneCountInString(text); n > 300 {
				t.Errorf("%d chars kept", n)
			}
			if strings.HasSuffix(text, "…") != tc.cut {
				t.Errorf("%d chars: cut %v: %q", tc.chars, !tc.cut, text)
			}
		}
	})
	t.Run("MaxTokens", func(t *testing.T) {
		t.Parallel()
		p := generate.BuildPrompt(rag.GenerateRequest{Question: "q", Passages: manyPassages(8, 2000)}, generate.Budget{MaxTokens: 2000})
		if p.Tokens > 2000 {
			t.Errorf("%d tokens, budget 2000", p.Tokens)
		}
		if len(p.Passages) < 2 || len(p.Passages) == 8 {
			t.Errorf("%d passages kept", len(p.Passages))
		}
		last := p.Passages[len(p.Passages)-1]
		if !strings.HasSuffix(last.Text, "…") {
			t.Errorf("last passage not shortened to fit: %d chars", utf8.RuneCountInString(last.Text))
		}
		// Passages keep their numbers.
		for i, ps := range p.Passages {
			if ps.N != i+1 {
				t.Errorf("passage %d numbered %d", i, ps.N)
			}
		}
	})
	t.Run("FirstPassageAlways", func(t *testing.T) {
		t.Parallel()
		p := generate.BuildPrompt(rag.GenerateRequest{Question: "q", Passages: manyPassages(3, 2000)}, generate.Budget{MaxTokens: 100})
		if len(p.Passages) != 1 || p.Passages[0].N != 1 || len(p.Passages[0].Text) == 0 {
			t.Fatalf("%d passages", len(p.Passages))
		}
	})
	t.Run("NoPassages", func(t *testing.T) {
		t.Parallel()
		p := generate.BuildPrompt(rag.GenerateRequest{Question: "q"}, generate.Budget{})
		if !strings.Contains(p.User, "No passages") {
			t.Errorf("user %q", p.User)
		}
	})
	t.Run("History", func(t *testing.T) {
		t.Parallel()
		var hist []rag.Turn
		for i := range 8 {
			role := rag.RoleUser
			if i%2 == 1 {
				role = rag.RoleAssistant
			}
			hist = append(hist, rag.Turn{Role: role, Content: fmt.Sprintf("turn %d", i)})
		}
		p := generate.BuildPrompt(rag.GenerateRequest{Question: "q", History: hist, Passages: manyPassages(1, 10)}, generate.Budget{})
		if len(p.History) != rag.MaxHistoryTurns || p.History[len(p.History)-1].Content != "turn 7" {
			t.Fatalf("history %+v", p.History)
		}
		turns := p.Turns()
		if turns[0].Role != rag.RoleUser || turns[len(turns)-1].Role != rag.RoleUser || !strings.Contains(turns[len(turns)-1].Content, "Question: q") {
			t.Fatalf("turns %+v", turns)
		}
		for i := 1; i < len(turns); i++ {
			if turns[i].Role == turns[i-1].Role {
				t.Fatalf("turns %d and %d share a role", i-1, i)
			}
		}
		// The history budget drops the oldest turns first.
		long := []rag.Turn{{Role: rag.RoleUser, Content: strings.Repeat("old words ", 150)}, {Role: rag.RoleAssistant, Content: "recent"}}
		p = generate.BuildPrompt(rag.GenerateRequest{Question: "q", History: long}, generate.Budget{MaxHistoryTokens: 100})
		if len(p.History) != 1 || p.History[0].Content != "recent" {
			t.Fatalf("history %+v", p.History)
		}
		if turns := p.Turns(); len(turns) != 1 || turns[0].Role != rag.RoleUser {
			t.Fatalf("a leading assistant turn must be dropped: %+v", turns)
		}
	})
}

func TestCountTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"hello world", 2}, {"The runway is 3 km long.", 8}} {
		if got := generate.CountTokens(tc.s); got != tc.want {
			t.Errorf("CountTokens(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
	ko := "활주로 길이는 3킬로미터이다."
	if got, est := generate.CountTokens(ko), generate.EstimateTokens(ko); got < 5 || est < 5 {
		t.Errorf("Korean: %d tokens, estimate %d", got, est)
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"abcd", 1}, {"abcde", 2}, {"a b c d e f", 6}, {"활주로", 3}} {
		if got := generate.EstimateTokens(tc.s); got != tc.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func BenchmarkCountTokens(b *testing.B) {
	text := strings.Repeat("The main runway of the airport is 3,200 metres long. 활주로 길이는 3,750미터이다. ", 50)
	generate.WarmTokenizer()
	b.ResetTimer()
	for b.Loop() {
		generate.CountTokens(text)
	}
}

func BenchmarkBuildPrompt(b *testing.B) {
	req := rag.GenerateRequest{Question: "How heavy are wing loads?", Passages: manyPassages(8, 2000)}
	generate.WarmTokenizer()
	b.ResetTimer()
	for b.Loop() {
		generate.BuildPrompt(req, generate.Budget{})
	}
}
