package profile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/profile"
	"github.com/ragd/ragd/internal/rag"
)

const pumsem = `
name: pumsem
description: 건설 품셈
language: ko
system_prompt: 당신은 건설 품셈 전문가입니다.
replies:
  off_topic: 건설 품셈에 관한 질문만 답할 수 있습니다.
  not_covered: 품셈 자료에서 찾지 못했습니다.
  empty_question: 질문을 입력해 주세요.
vocabulary: [일위대가, 품셈]
synonyms:
  - [굴삭기, 백호]
intents:
  - name: cost
    keywords: [단가, 비용, 얼마]
spec_patterns:
  - name: diameter
    pattern: '\b(D\d+)\b'
  - name: size
    pattern: '\d+-\d+-\d+'
context:
  entities: 5
  total_chars: 4000
generation:
  passages: 20
  history_turns: 2
  temperature: 0.2
  max_output_tokens: 1024
`

func TestDecode(t *testing.T) {
	t.Run("YAML", func(t *testing.T) {
		p, err := profile.Decode("pumsem.yaml", []byte(pumsem))
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "pumsem" || p.Replies.NotCovered != "품셈 자료에서 찾지 못했습니다." || p.Generation.Passages != 20 ||
			*p.Generation.HistoryTurns != 2 || *p.Generation.Temperature != 0.2 || len(p.Synonyms) != 1 {
			t.Fatalf("decoded %+v", p)
		}
		if got := p.FiredIntents("굴삭기 D80 단가는 얼마인가요"); fmt.Sprint(got) != "[cost]" {
			t.Errorf("intents = %v", got)
		}
		if got := p.FiredIntents("굴삭기 작업 인원"); got != nil {
			t.Errorf("intents without a keyword = %v", got)
		}
		if got := p.FindSpecs("D80 관 25-180-12 규격"); fmt.Sprint(got) != "[{diameter D80} {size 25-180-12}]" {
			t.Errorf("specs = %v", got)
		}
		d := p.WithDefaults()
		if d.Context.Entities != 5 || d.Context.RelationsPerEntity != profile.DefaultRelationsPerEntity || d.Context.TotalChars != 4000 {
			t.Errorf("defaults: %+v", d.Context)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		p, err := profile.Decode("p.json", []byte(`{"name":"x","replies":{"not_covered":"없음"},"generation":{"history_turns":0}}`))
		if err != nil || p.Replies.NotCovered != "없음" || p.Generation.HistoryTurns == nil || *p.Generation.HistoryTurns != 0 {
			t.Fatalf("%+v, %v", p, err)
		}
	})
}

// TestDecodeErrors checks that every bad document is refused with rag.CodeInvalid and a message naming the
// file, the field and why, at each limit's boundary.
func TestDecodeErrors(t *testing.T) {
	long := func(n int) string { return strings.Repeat("가", n) }
	words := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("w,", n), ",") + "]" }
	for _, tc := range []struct {
		name, doc string
		want      string // "" means valid
	}{
		{"UnknownField", "name: x\nreplys: {}", "c.yaml: invalid YAML: line 2: field replys not found"},
		{"UnknownNestedField", "replies:\n  not_found: x", "field not_found not found"},
		{"UnknownJSONField", `{"context":{"rows":1}}`, `c.yaml: invalid JSON: json: unknown field "rows"`},
		{"Empty", "  \n", "c.yaml: the document is empty"},
		{"TwoDocuments", "name: a\n---\nname: b", "one document per file"},
		{"WrongType", "context:\n  entities: many", "cannot unmarshal"},
		{"Language", "language: ko", ""},
		{"ErrLanguage", "language: kr", `c.yaml: language: unknown language "kr" (want one of auto, ko, en)`},
		{"Name100", "name: " + long(100), ""},
		{"ErrName101", "name: " + long(101), "name: 101 characters, at most 100 allowed"},
		{"Reply2000", "replies:\n  not_covered: " + long(2000), ""},
		{"ErrReply2001", "replies:\n  not_covered: " + long(2001), "replies.not_covered: 2001 characters"},
		{"ErrBadRegex", "spec_patterns:\n  - name: d\n    pattern: '(D\\d+'", "c.yaml: spec_patterns[0].pattern: bad regular expression: missing closing )"},
		{"ErrEmptyMatch", "spec_patterns:\n  - name: d\n    pattern: 'D*'", "spec_patterns[0].pattern: the pattern matches the empty string"},
		{"ErrPatternName", "spec_patterns:\n  - name: Diameter\n    pattern: D", `spec_patterns[0].name: "Diameter" is not a name`},
		{"ErrDuplicateIntent", "intents:\n  - {name: cost, keywords: [a]}\n  - {name: cost, keywords: [b]}", `intents[1].name: "cost" is used twice`},
		{"ErrIntentNoKeywords", "intents:\n  - {name: cost, keywords: []}", "intents[0].keywords: an intent needs at least one keyword"},
		{"Keywords500", "intents:\n  - {name: cost, keywords: " + words(500) + "}", ""},
		{"ErrKeywords501", "intents:\n  - {name: cost, keywords: " + words(501) + "}", "intents[0].keywords: 501 keywords, at most 500"},
		{"ErrEmptyWord", "vocabulary: [a, ' ']", "vocabulary[1]: an empty word"},
		{"ErrSynonymGroupOfOne", "synonyms: [[a]]", "synonyms[0]: a group needs at least two words"},
		{"SynonymGroup32", "synonyms: [" + words(32) + "]", ""},
		{"ErrSynonymGroup33", "synonyms: [" + words(33) + "]", "synonyms[0]: 33 words, at most 32"},
		{"ZeroLimit", "context:\n  table_rows: 0", ""},
		{"ErrNegativeLimit", "context:\n  table_rows: -1", "c.yaml: context.table_rows: -1 is negative"},
		{"Limit1000", "context:\n  relations_per_entity: 1000", ""},
		{"ErrLimit1001", "context:\n  relations_per_entity: 1001", "context.relations_per_entity: 1001 is over the limit of 1000"},
		{"Passages20", "generation:\n  passages: 20", ""},
		{"ErrPassages21", "generation:\n  passages: 21", "generation.passages: 21 is over the limit of 20"},
		{"History5", "generation:\n  history_turns: 5", ""},
		{"ErrHistory6", "generation:\n  history_turns: 6", "generation.history_turns: 6 is over the limit of 5"},
		{"ErrHistoryNegative", "generation:\n  history_turns: -1", "generation.history_turns: -1 is negative"},
		{"Temperature2", "generation:\n  temperature: 2", ""},
		{"ErrTemperature", "generation:\n  temperature: 2.1", "generation.temperature: 2.1 is outside 0..2"},
		{"ErrTemperatureNegative", "generation:\n  temperature: -0.1", "generation.temperature: -0.1 is outside 0..2"},
		{"ErrOutputTokens", "generation:\n  max_output_tokens: 65537", "generation.max_output_tokens: 65537 is over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := profile.Decode("c.yaml", []byte(tc.doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var pe *profile.Error
			if err == nil || rag.ErrorCode(err) != rag.CodeInvalid || !errors.As(err, &pe) || !strings.Contains(rag.ErrorMessage(err), tc.want) {
				t.Fatalf("err = %v, want invalid_request containing %q", err, tc.want)
			}
		})
	}
}

func TestOfLegacySettings(t *testing.T) {
	c := &rag.Collection{Name: "lease", Description: "임대", Settings: map[string]any{
		"system_prompt": " 답하라 ", "domain": "임대주택", "not_found_reply": "공고에 없습니다.",
		"synonyms": map[string]any{"보증금": []any{"deposit"}}, "metadata_types": map[string]any{"deposit": "money"},
	}}
	p, err := profile.Of(c)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "lease" || p.Description != "임대" || p.SystemPrompt != "답하라" || p.Domain != "임대주택" ||
		p.Replies.NotCovered != "공고에 없습니다." || fmt.Sprint(p.Synonyms) != "[[보증금 deposit]]" || p.Language != "auto" {
		t.Fatalf("profile from settings: %+v", p)
	}
	// Applying a profile stores it and drops the settings it replaces, keeping the others.
	next, err := profile.Decode("c.yaml", []byte("description: 임대 공고\nreplies:\n  not_covered: 없음"))
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Apply(c, next); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.Settings) != "map[metadata_types:map[deposit:money]]" || c.Description != "임대 공고" {
		t.Fatalf("after Apply: settings %v, description %q", c.Settings, c.Description)
	}
	p, err = profile.Of(c)
	if err != nil || p.SystemPrompt != "" || p.Replies.NotCovered != "없음" || p.Synonyms != nil || p.Name != "lease" {
		t.Fatalf("after Apply: %+v, %v", p, err)
	}
}

// TestExample: the documented example profile is valid.
func TestExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "collection.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Decode("collection.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "handbook" || len(p.FindSpecs("D100 관 부설 단가")) != 1 || fmt.Sprint(p.FiredIntents("D100 관 부설 단가")) != "[cost]" {
		t.Fatalf("example: %+v", p)
	}
}
