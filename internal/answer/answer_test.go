package answer_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/answer"
	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/config"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
)

const key = "sk-proj-AnswerTestKey0123456789"

type bundle struct {
	app  *app.App
	fake *fakeapi.OpenAI
}

// setup opens a whole ragd on a temporary SQLite store with the offline embedder and the OpenAI generator
// pointed at the fake, and ingests the render-and-commit page into the collections named.
func setup(t *testing.T, collections ...*rag.Collection) *bundle {
	t.Helper()
	fake := fakeapi.NewOpenAI(key)
	t.Cleanup(fake.Close)
	a := open(t, func(cfg *config.Config) {
		cfg.Generator = "openai"
		cfg.OpenAIAPIKey = key
		cfg.OpenAIBaseURL = fake.BaseURL()
	})
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "md", "ko_react_render-and-commit.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range collections {
		if err := a.Store.CreateCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.Ingest.Ingest(ctx, rag.LocalPrincipal, ingest.Request{Collection: c.Name, Name: "render.md", Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	return &bundle{app: a, fake: fake}
}

// open opens a whole ragd on a temporary SQLite store with the defaults changed by set, closed at the end.
func open(t *testing.T, set func(*config.Config)) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	set(&cfg)
	a, err := app.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

const question = "React에서 렌더링이 일어나는 이유는 무엇인가요?"

// systemSent is the system message of the last chat completion the fake received.
func (b *bundle) systemSent(t *testing.T) string {
	t.Helper()
	req, ok := b.fake.LastRequest(fakeapi.EndpointGenerate)
	if !ok {
		if req, ok = b.fake.LastRequest(fakeapi.EndpointStream); !ok {
			t.Fatal("no chat completion was requested")
		}
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := req.JSON(&body); err != nil {
		t.Fatal(err)
	}
	for _, m := range body.Messages {
		if m.Role == "system" || m.Role == "developer" {
			if s, ok := m.Content.(string); ok {
				return s
			}
			b, _ := json.Marshal(m.Content)
			return string(b)
		}
	}
	t.Fatalf("no system message in %s", req.Body)
	return ""
}

func TestPrompt(t *testing.T) {
	t.Parallel()
	b := setup(t,
		&rag.Collection{Name: "plain"},
		&rag.Collection{Name: "react", Settings: map[string]any{"domain": "React"}},
		&rag.Collection{Name: "vue", Settings: map[string]any{"domain": "Vue"}},
		&rag.Collection{Name: "custom", Settings: map[string]any{"system_prompt": "Answer like a pirate [n].", "domain": "ignored"}},
		&rag.Collection{Name: "custom2", Settings: map[string]any{"system_prompt": "Answer like a pirate [n]."}},
		&rag.Collection{Name: "other", Settings: map[string]any{"system_prompt": "Answer in haiku."}},
		&rag.Collection{Name: "odd", Settings: map[string]any{"domain": 42}},
	)
	react, err := b.app.Store.GetCollection(context.Background(), "react")
	if err != nil {
		t.Fatal(err)
	}
	svc := answer.New(b.app.Retriever, b.app.Generator, answer.Options{Collections: b.app.Store, SystemPrompt: "global"})
	for _, tc := range []struct {
		name        string
		collections []string
		want        string
	}{
		{"NoCollectionFilter", nil, "global"},
		{"OneWithoutSettings", []string{"plain"}, "global"},
		{"OneDomain", []string{"react"}, generate.SystemPrompt("React")},
		{"OneDomainByID", []string{react.ID}, generate.SystemPrompt("React")},
		{"OverrideWinsOverDomain", []string{"custom"}, "Answer like a pirate [n]."},
		{"SameOverride", []string{"custom", "custom2"}, "Answer like a pirate [n]."},
		{"SameCollectionTwice", []string{"react", react.ID}, generate.SystemPrompt("React")},
		{"DifferentOverridesFallBackToDomains", []string{"react", "vue"}, generate.SystemPrompt("React; Vue")},
		{"OverrideAndDomainDiffer", []string{"custom2", "react"}, "global"},
		{"DifferentOverridesWithoutDomains", []string{"custom2", "other"}, "global"},
		{"OneWithoutDomain", []string{"react", "plain"}, "global"},
		{"NotAStringIgnored", []string{"odd"}, "global"},
		{"UnknownSkipped", []string{"nope", "react"}, generate.SystemPrompt("React")},
		{"OnlyUnknown", []string{"nope"}, "global"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := svc.Prompt(context.Background(), rag.Filter{Collections: tc.collections})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("prompt %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAskCollectionPrompt(t *testing.T) {
	t.Parallel()
	b := setup(t,
		&rag.Collection{Name: "react", Settings: map[string]any{"domain": "the React library"}},
		&rag.Collection{Name: "custom", Settings: map[string]any{"system_prompt": "You are a terse assistant. Cite [n]."}},
		&rag.Collection{Name: "plain"},
	)
	ctx := context.Background()
	for _, tc := range []struct {
		name, collection string
		want             string
	}{
		{"Domain", "react", generate.SystemPrompt("the React library")},
		{"Override", "custom", "You are a terse assistant. Cite [n]."},
		{"Default", "plain", generate.SystemPrompt("")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := b.app.Answers.Ask(ctx, rag.LocalPrincipal, rag.AskRequest{Question: question,
				Filter: rag.Filter{Collections: []string{tc.collection}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if ans.NotFound || len(ans.Sources) == 0 {
				t.Fatalf("no answer from the fixture: %+v", ans)
			}
			if got := b.systemSent(t); got != tc.want {
				t.Fatalf("system prompt sent:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestAskWeakCitations(t *testing.T) {
	t.Parallel()
	b := setup(t, &rag.Collection{Name: "docs"})
	const weak = "The moon is made of green cheese and orbits Jupiter [1]."
	b.fake.SetAnswer(func(prompt string) string {
		return fakeapi.DefaultAnswer(prompt) + " " + weak + " Nothing cites this [7]."
	})
	var deltas strings.Builder
	ans, err := b.app.Answers.Ask(context.Background(), rag.LocalPrincipal, rag.AskRequest{Question: question},
		func(ev answer.Event) error {
			if ev.Type == answer.EventDelta {
				deltas.WriteString(ev.Delta)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ans.Citations, (rag.CitationCheck{Valid: 2, Removed: 1, WeaklySupported: 1}); got != want {
		t.Fatalf("citations %+v, want %+v (answer %q)", got, want, ans.Text)
	}
	if len(ans.Weak) != 1 {
		t.Fatalf("weak spans %+v", ans.Weak)
	}
	w := ans.Weak[0]
	if got := ans.Text[w.Start:w.End]; got != weak {
		t.Fatalf("weak span %q, want %q", got, weak)
	}
	if len(w.Citations) != 1 || w.Citations[0] != 1 || w.Support >= generate.MinSupport {
		t.Fatalf("weak span %+v", w)
	}
	if strings.Contains(ans.Text, "[7]") || !strings.Contains(deltas.String(), "[7]") {
		t.Fatalf("the streamed text is the model's, the final one is checked: %q / %q", deltas.String(), ans.Text)
	}
	if !strings.HasSuffix(ans.Text, "Nothing cites this.") {
		t.Fatalf("removed citation leaves %q", ans.Text)
	}
}

func TestAskWellSupported(t *testing.T) {
	t.Parallel()
	b := setup(t, &rag.Collection{Name: "docs"})
	ans, err := b.app.Answers.Ask(context.Background(), rag.LocalPrincipal, rag.AskRequest{Question: question}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Citations.Valid != 1 || ans.Citations.WeaklySupported != 0 || ans.Weak != nil {
		t.Fatalf("a sentence quoted from its passage is supported: %+v %+v (%q)", ans.Citations, ans.Weak, ans.Text)
	}
}
