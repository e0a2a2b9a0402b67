package providers

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/fakeapi"
)

// statusView is the part of GET /api/status the tests read.
type statusView struct {
	Embedder struct {
		Space   string `json:"space"`
		Lexical bool   `json:"lexical"`
	} `json:"embedder"`
	Generator string `json:"generator"`
	Chunks    int    `json:"chunks"`
	Embedding struct {
		Configured string `json:"configured"`
		Search     string `json:"search"`
		Mode       string `json:"mode"`
		Reason     string `json:"reason"`
		Spaces     []struct {
			ID         string  `json:"id"`
			Chunks     int     `json:"chunks"`
			Percent    float64 `json:"percent"`
			Configured bool    `json:"configured"`
			Search     bool    `json:"search"`
		} `json:"spaces"`
		Reembed struct {
			State   string  `json:"state"`
			Done    int     `json:"done"`
			Total   int     `json:"total"`
			Percent float64 `json:"percent"`
		} `json:"reembed"`
	} `json:"embedding"`
}

func status(t *testing.T, base string) statusView {
	t.Helper()
	resp, body := do(t, "GET", base+"/api/status", nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status: HTTP %d %s", resp.StatusCode, body)
	}
	return decode[statusView](t, body)
}

const (
	mozillaQuestion = "Who develops the Firefox web browser at Mozilla?"
	mozillaQuery    = "Mozilla Firefox web browser"
)

// TestProviders runs ragd end to end with each hosted provider: documents are uploaded and embedded by the
// provider's embedder, searched (the question embedded by it too), answered as JSON and as a stream by
// the provider's generator, each through the official SDK against the fake.
func TestProviders(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		embedder, generator string
		space, name         string
	}{
		{"openai", "openai", "openai/text-embedding-3-small/1536", "openai/gpt-4.1-mini"},
		{"gemini", "gemini", "gemini/gemini-embedding-001/768", "gemini/gemini-2.5-flash"},
		{"openai", "anthropic", "openai/text-embedding-3-small/1536", "anthropic/claude-haiku-4-5"},
	} {
		t.Run(tc.embedder+"+"+tc.generator, func(t *testing.T) {
			t.Parallel()
			f := newFakes(t)
			e := start(t, f.config(t, tc.embedder, tc.generator))
			embedFake, genFake := f.server(tc.embedder), f.server(tc.generator)

			docs := upload(t, e.url, fixture(t, "md/ko_react_render-and-commit.md"), fixture(t, "html/en_wikipedia_mozilla.html"),
				seed(t, "001_23a41150ada0647c.txt"))
			docs = waitReady(t, e.url, docs, time.Minute)
			mozilla := docs[1].ID

			st := status(t, e.url)
			if st.Embedder.Space != tc.space || st.Generator != tc.name || st.Embedder.Lexical ||
				st.Embedding.Search != tc.space || st.Embedding.Mode != "hybrid" || st.Embedding.Reembed.State != "complete" ||
				st.Embedding.Reembed.Percent != 100 || st.Chunks == 0 || st.Embedding.Reembed.Done != st.Chunks {
				t.Fatalf("status: %+v", st)
			}
			texts := chunkTexts(t, e.app.Store)
			embeddedOnce(t, embedFake, texts)

			res := search(t, e.url, mozillaQuery, 5)
			if res.Space != tc.space || len(res.Hits) == 0 || res.Hits[0].DocumentID != mozilla || res.Hits[0].VectorRank == 0 {
				t.Fatalf("search: space %q, hits %+v", res.Space, res.Hits)
			}
			if n := embedFake.TimesEmbedded(mozillaQuery); n != 1 {
				t.Fatalf("the query was embedded %d times", n)
			}
			search(t, e.url, mozillaQuery, 5)
			if n := embedFake.TimesEmbedded(mozillaQuery); n != 1 {
				t.Fatalf("a repeated query was embedded again (%d times)", n)
			}

			// The answer quotes a whole sentence of passage [1] (the fake's default quotes its first line, here a
			// heading, which the citation check rightly finds weak).
			genFake.SetAnswer(quoteAnswer)

			t.Run("Ask", func(t *testing.T) {
				calls := genFake.Stats().GenerateCalls + genFake.Stats().StreamCalls
				code, body := chat(t, e.url, mozillaQuestion)
				if code != http.StatusOK {
					t.Fatalf("chat: HTTP %d %s", code, body)
				}
				ans := decode[chatResponse](t, body)
				if ans.Generator != tc.name || ans.NotFound || len(ans.Sources) == 0 || ans.Sources[0].DocumentID != mozilla ||
					ans.Citations.Valid == 0 || ans.Citations.Removed != 0 || ans.Citations.WeaklySupported != 0 ||
					!strings.Contains(ans.Answer, "[1]") || ans.SearchInfo.Space != tc.space {
					t.Fatalf("answer: %s", body)
				}
				if got := genFake.Stats().GenerateCalls + genFake.Stats().StreamCalls; got != calls+1 {
					t.Fatalf("%d generation calls for one question", got-calls)
				}
			})

			t.Run("Stream", func(t *testing.T) {
				code, events := chatStream(t, e.url, mozillaQuestion)
				if code != http.StatusOK || names(events) != "sources,delta,done" {
					t.Fatalf("stream: HTTP %d, events %s", code, names(events))
				}
				if n := strings.Count(names(events), "delta"); n != 1 || countDeltas(events) < 2 {
					t.Fatalf("the answer arrived in %d deltas; the fake streams it in pieces", countDeltas(events))
				}
				done := decode[chatResponse](t, events[len(events)-1].data)
				if got := deltas(t, events); got != done.Answer || !strings.Contains(got, "[1]") {
					t.Fatalf("streamed %q, final answer %q", got, done.Answer)
				}
				if genFake.Stats().StreamCalls == 0 {
					t.Fatal("the stream did not use the provider's streaming endpoint")
				}
			})

			t.Run("WeakCitation", func(t *testing.T) {
				const weak = "The foundation was founded on the Moon in 1850 by penguins [1]."
				genFake.SetAnswer(func(prompt string) string { return quoteAnswer(prompt) + " " + weak })
				defer genFake.SetAnswer(quoteAnswer)
				code, body := chat(t, e.url, mozillaQuestion)
				if code != http.StatusOK {
					t.Fatalf("chat: HTTP %d %s", code, body)
				}
				ans := decode[chatResponse](t, body)
				if ans.Citations.Valid != 2 || ans.Citations.WeaklySupported != 1 || len(ans.Weak) != 1 {
					t.Fatalf("citations %+v, weak %+v", ans.Citations, ans.Weak)
				}
				w := ans.Weak[0]
				if w.Text != weak || ans.Answer[w.Start:w.End] != weak || len(w.Citations) != 1 || w.Citations[0] != 1 {
					t.Fatalf("weak sentence %+v in %q", w, ans.Answer)
				}
			})
		})
	}
}

var passageOne = regexp.MustCompile(`(?s)\n\[1\][^\n]*\n(.*?)(?:\n\[2\]|$)`)

// quoteAnswer answers as a faithful model would: the first sentence of passage [1] with six words or
// more, cited.
func quoteAnswer(prompt string) string {
	m := passageOne.FindStringSubmatch(prompt)
	if m == nil {
		return fakeapi.DefaultAnswer(prompt)
	}
	for _, line := range strings.Split(m[1], "\n") {
		for _, s := range strings.SplitAfter(line, ". ") {
			s = strings.TrimSpace(s)
			if len(strings.Fields(s)) >= 6 {
				return strings.TrimSuffix(s, ".") + " [1]."
			}
		}
	}
	return fakeapi.DefaultAnswer(prompt)
}

func countDeltas(events []event) int {
	n := 0
	for _, e := range events {
		if e.name == "delta" {
			n++
		}
	}
	return n
}

// TestCollectionPrompt: a collection's domain reaches the provider as part of the system prompt when the
// question is restricted to it, and its system_prompt replaces ragd's.
func TestCollectionPrompt(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	e := start(t, f.config(t, "hash", "anthropic"))
	for _, c := range []map[string]any{
		{"name": "browsers", "settings": map[string]any{"domain": "web browsers"}},
		{"name": "pirates", "settings": map[string]any{"system_prompt": "Answer like a pirate, citing [n]."}},
	} {
		resp, body := do(t, "POST", e.url+"/api/collections", c, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create collection: HTTP %d %s", resp.StatusCode, body)
		}
	}
	mozilla := fixture(t, "html/en_wikipedia_mozilla.html")
	for _, coll := range []string{"browsers", "pirates"} {
		docs := uploadTo(t, e.url, coll, mozilla)
		waitReady(t, e.url, docs, time.Minute)
	}
	for _, tc := range []struct{ collection, want string }{
		{"browsers", "You only answer questions about web browsers."},
		{"pirates", "Answer like a pirate, citing [n]."},
	} {
		resp, body := do(t, "POST", e.url+"/api/chat", map[string]any{"question": mozillaQuestion, "collection": tc.collection}, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat: HTTP %d %s", resp.StatusCode, body)
		}
		req, ok := lastGeneration(f.anthropic.Server)
		if !ok {
			t.Fatal("no request reached Anthropic")
		}
		var sent struct {
			System json.RawMessage `json:"system"`
		}
		if err := req.JSON(&sent); err != nil {
			t.Fatal(err)
		}
		mustContain(t, "system prompt sent for "+tc.collection, string(sent.System), tc.want)
	}
}

// lastGeneration returns the latest generation request a fake received, streamed or not.
func lastGeneration(s *fakeapi.Server) (fakeapi.Request, bool) {
	reqs := s.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Endpoint == fakeapi.EndpointGenerate || reqs[i].Endpoint == fakeapi.EndpointStream {
			return reqs[i], true
		}
	}
	return fakeapi.Request{}, false
}
