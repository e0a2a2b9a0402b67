package answer_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/fakeapi"
)

// TestLLMFilter reads questions over the housing collection with a hosted generator, against the OpenAI and
// Anthropic wire-format fakes: the model is asked for the filter with the JSON schema derived from the
// collection's schema (which the fakes accept as the providers' strict structured output), its reading
// corrects the rules where they left words unread, and a model that fails leaves the rules' reading.
func TestLLMFilter(t *testing.T) {
	for _, tc := range []struct {
		name string
		fake fakeapi.Fake
		set  func(cfg *config.Config, f fakeapi.Fake)
	}{
		{"OpenAI", fakeapi.NewOpenAI("sk-filter"), func(cfg *config.Config, f fakeapi.Fake) {
			cfg.Generator, cfg.OpenAIAPIKey, cfg.OpenAIBaseURL = "openai", f.Key(), f.BaseURL()
		}},
		{"Anthropic", fakeapi.NewAnthropic("sk-ant-filter"), func(cfg *config.Config, f fakeapi.Fake) {
			cfg.Generator, cfg.AnthropicAPIKey, cfg.AnthropicBaseURL = "anthropic", f.Key(), f.BaseURL()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.fake
			t.Cleanup(f.Close)
			a := housingWith(t, func(cfg *config.Config) { tc.set(cfg, f) })
			offline := housing(t, 0)
			// The model reads 넘지 않는 as "at most"; anything else as nothing of the table.
			f.SetStructured(func(prompt string, schema map[string]any) string {
				if strings.Contains(prompt, "천만 원을 넘지 않는") {
					return `{"kind":"list","named":[],"conditions":[{"field":"deposit","op":"lte","values":["10000000"]},{"field":"colour","op":"eq","values":["red"]}]}`
				}
				return `{"kind":"none","named":[],"conditions":[]}`
			})
			q := "보증금이 천만 원을 넘지 않는 곳 알려줘"
			want := sourceKeys(ask(t, offline, "보증금 1000만원 이하 공고 알려줘"))
			ans := ask(t, a, q)
			if ans.Route != "list" || !slices.Equal(sourceKeys(ans), want) || f.StructuredCalls() != 1 {
				t.Fatalf("with the model: route %q, rows %v (want %v), %d structured calls\n%s", ans.Route, sourceKeys(ans), want, f.StructuredCalls(), ans.Text)
			}
			if v := f.Violations(); len(v) > 0 {
				t.Fatalf("the fake refused the filter schema: %v", v)
			}
			req, _ := f.LastRequest(fakeapi.EndpointGenerate)
			if !strings.Contains(string(req.Body), "record_filter") && !strings.Contains(string(req.Body), `"conditions"`) {
				t.Errorf("no filter schema in the request: %s", req.Body)
			}
			rules := sourceKeys(ask(t, offline, q))
			if slices.Equal(rules, want) {
				t.Fatalf("the rules read the question alone (pick another wording): %v", rules)
			}

			// A model that answers no JSON, or is down: the rules' reading stands.
			f.SetStructured(func(string, map[string]any) string { return "deposit ≤ 10,000,000" })
			if got := sourceKeys(ask(t, a, q+" ")); !slices.Equal(got, rules) {
				t.Errorf("a model answering no JSON: rows %v, want the rules' %v", got, rules)
			}
			f.SetDown(true)
			if got := sourceKeys(ask(t, a, q+"  ")); !slices.Equal(got, rules) {
				t.Errorf("a model that is down: rows %v, want the rules' %v", got, rules)
			}
			f.SetDown(false)
			// A question the rules read whole is not changed by the model's "nothing".
			f.SetStructured(func(string, map[string]any) string { return `{"kind":"none","named":[],"conditions":[]}` })
			if got := sourceKeys(ask(t, a, "보증금 1000만원 이하 공고 알려줘")); !slices.Equal(got, want) {
				t.Errorf("a whole reading with the model: %v, want %v", got, want)
			}
		})
	}
}
