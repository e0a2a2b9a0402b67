package meta_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/rag"
)

// TestParseLLMFilter checks the validation of a model's reading against the housing schema: what fits is
// typed as the rules type it, the rest is dropped and counted.
func TestParseLLMFilter(t *testing.T) {
	s, rows := housing(t)
	r, err := s.ParseLLMFilter([]byte(`{"kind":"list","named":["공덕동","서울","없는 단지"],"conditions":[
		{"field":"deposit","op":"lte","values":["10,000,000"]},
		{"field":"status","op":"eq","values":["접수중"]},
		{"field":"region","op":"eq","values":["인천"]},
		{"field":"application_end","op":"gte","values":["2026-12-01"]},
		{"field":"parking","op":"eq","values":["1"]},
		{"field":"provider","op":"eq","values":["KH"]},
		{"field":"provider","op":"gt","values":["LH"]},
		{"field":"total_units","op":"gte","values":["many"]},
		{"field":"id","op":"eq","values":["LH_lease_01"]}]}`), rows)
	if err != nil {
		t.Fatal(err)
	}
	q := r.Query
	// parking (no such field), KH (not a provider), gt on an enum, "many", the key; 서울 (several titles)
	// and 없는 단지 (none).
	if r.Dropped != 7 {
		t.Errorf("dropped %d, want 7: %+v", r.Dropped, q)
	}
	if len(q.Named) != 1 || !strings.HasPrefix(q.Named[0], "LH_") || q.Kind != meta.KindList {
		t.Errorf("named %v, kind %q", q.Named, q.Kind)
	}
	want := map[string]rag.MetaCond{
		"deposit":         {Key: "deposit", Op: rag.OpLte, Values: []any{1e7}},
		"status":          {Key: "status", Op: rag.OpEq, Values: []any{"접수중"}},
		"application_end": {Key: "application_end", Op: rag.OpGte, Values: []any{"2026-12-01"}},
	}
	for _, c := range q.Conds {
		if c.Key == "region" {
			if c.Op != rag.OpIn || len(c.Values) < 2 || !slices.ContainsFunc(c.Values, func(v any) bool { return strings.HasPrefix(v.(string), "인천광역시") }) {
				t.Errorf("a word of a region stands for its regions: %+v", c)
			}
			continue
		}
		if w, ok := want[c.Key]; !ok || c.Op != w.Op || !slices.Equal(c.Values, w.Values) {
			t.Errorf("condition %+v, want %+v", c, w)
		}
		delete(want, c.Key)
	}
	if len(want) > 0 {
		t.Errorf("conditions missing: %v", want)
	}
	if _, err := s.ParseLLMFilter([]byte("deposit under 10 million"), rows); err == nil {
		t.Error("an answer that is not JSON was accepted")
	}
	if r, err := s.ParseLLMFilter([]byte(`{"kind":"fact","named":[],"conditions":[]}`), rows); err != nil || r.Query.Kind != meta.KindNone {
		t.Errorf("a reading with nothing of the table: %+v, %v", r, err)
	}
}

// TestMergeLLM checks how a model's reading merges with the rules': it corrects what the rules misread
// when they left words unread, and changes nothing the rules read whole.
func TestMergeLLM(t *testing.T) {
	s, rows := housing(t)
	read := func(answer string) *meta.Query {
		r, err := s.ParseLLMFilter([]byte(answer), rows)
		if err != nil {
			t.Fatal(err)
		}
		return r.Query
	}
	atMost10M := selected(s, rows, s.Extract("보증금 1000만원 이하 공고", rows, asOf))
	if len(atMost10M) < 5 {
		t.Fatalf("the rules' reading of the plain wording: %v", atMost10M)
	}
	lte := `{"kind":"list","named":[],"conditions":[{"field":"deposit","op":"lte","values":["10000000"]}]}`

	// 넘지 않는 (does not exceed) is not one of the rules' comparators: they read deposit = 10,000,000 and
	// leave the words; the model's reading replaces theirs.
	q := s.Extract("보증금이 천만 원을 넘지 않는 곳 알려줘", rows, asOf)
	if len(q.Focus) == 0 || slices.Equal(selected(s, rows, q), atMost10M) {
		t.Fatalf("the rules now read it (pick another wording): %+v", q)
	}
	if !q.MergeLLM(read(lte)) || !slices.Equal(selected(s, rows, q), atMost10M) || q.Kind != meta.KindList {
		t.Errorf("merged reading %+v selects %v, want %v", q, selected(s, rows, q), atMost10M)
	}

	// In English the rules see a comparison by deposit and no amount.
	q = s.Extract("which announcements have a deposit no higher than ten million won?", rows, asOf)
	q.MergeLLM(read(lte))
	if q.Kind != meta.KindList || q.Order != "" || !slices.Equal(selected(s, rows, q), atMost10M) {
		t.Errorf("English wording merged: %+v", q)
	}

	// A question the rules read whole: a model that disagrees does not change it, one that adds a field
	// does.
	q = s.Extract("보증금 1000만원 이하 공고", rows, asOf)
	if q.MergeLLM(read(`{"kind":"list","named":[],"conditions":[{"field":"deposit","op":"eq","values":["5000000"]}]}`)) ||
		!slices.Equal(selected(s, rows, q), atMost10M) {
		t.Errorf("the model overrode a whole reading: %+v", q)
	}
	if !q.MergeLLM(read(`{"kind":"list","named":[],"conditions":[{"field":"provider","op":"eq","values":["LH"]}]}`)) ||
		len(selected(s, rows, q)) >= len(atMost10M) {
		t.Errorf("the model's added field: %+v", q)
	}
	// A model that found nothing of the table changes nothing.
	q = s.Extract("보증금이 천만 원을 넘지 않는 곳 알려줘", rows, asOf)
	before := selected(s, rows, q)
	if q.MergeLLM(read(`{"kind":"none","named":[],"conditions":[]}`)) || !slices.Equal(selected(s, rows, q), before) {
		t.Errorf("an empty reading changed the rules': %+v", q)
	}
}

// TestLLMFilterPrompt checks what the model is told: the as-of date, the fields with their aliases and
// values, and the rows' titles.
func TestLLMFilterPrompt(t *testing.T) {
	s, rows := housing(t)
	system, user := s.LLMFilterPrompt("마감 임박 공고", rows, asOf)
	for _, want := range []string{"Today is 2026-11-22", "- deposit (money)", "보증금", "접수중", "공덕동"} {
		if !strings.Contains(system, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, system)
		}
	}
	if user != "Question: 마감 임박 공고" {
		t.Errorf("user message %q", user)
	}
	sch := s.LLMFilterSchema()
	props := sch.Schema["properties"].(map[string]any)
	field := props["conditions"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["field"].(map[string]any)
	if enum := field["enum"].([]any); !slices.Contains(enum, any("deposit")) || slices.Contains(enum, any("id")) {
		t.Errorf("field enum %v", enum)
	}
}
