package providers

import (
	"context"
	"math"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveBinary()
	os.Exit(code)
}

// serve runs the binary on 127.0.0.1:0 over dataDir with env added to this process's environment (minus
// any provider variables of the machine) and waits until it is ready; the test's cleanup stops it.
func serve(t *testing.T, dataDir string, env ...string) *testkit.Server {
	t.Helper()
	return testkit.Serve(t, testkit.CleanEnv(append([]string{"RAGD_LOG_LEVEL=info", "RAGD_RATE_LIMIT_CHAT=0",
		"RAGD_RATE_LIMIT_SEARCH=0"}, env...)...), "--data-dir", dataDir)
}

// TestBinary runs the real ragd binary against the fakes, configured only through the providers'
// environment variables: it prints the active models, and uploads, search, answers and streamed answers
// go through the hosted APIs.
func TestBinary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		embedder, generator string
		space, name         string
	}{
		{"openai", "openai", "openai/text-embedding-3-small/1536", "openai/gpt-4.1-mini"},
		{"gemini", "anthropic", "gemini/gemini-embedding-001/768", "anthropic/claude-haiku-4-5"},
	} {
		t.Run(tc.embedder+"+"+tc.generator, func(t *testing.T) {
			t.Parallel()
			f := newFakes(t)
			p := serve(t, t.TempDir(),
				"RAGD_EMBEDDER="+tc.embedder, "RAGD_GENERATOR="+tc.generator,
				"OPENAI_API_KEY="+openaiKey, "OPENAI_BASE_URL="+f.openai.BaseURL(),
				"GEMINI_API_KEY="+geminiKey, "RAGD_GEMINI_BASE_URL="+f.gemini.BaseURL(),
				"ANTHROPIC_API_KEY="+anthropicKey, "ANTHROPIC_BASE_URL="+f.anthropic.BaseURL())
			mustContain(t, "banner", p.Banner, "embedder "+tc.space, "generator "+tc.name)
			st := status(t, p.URL)
			if st.Embedder.Space != tc.space || st.Generator != tc.name || st.Embedding.Search != tc.space {
				t.Fatalf("status disagrees with the banner %q: %+v", p.Banner, st)
			}
			f.server(tc.generator).SetAnswer(quoteAnswer)

			docs := waitReady(t, p.URL, upload(t, p.URL, fixture(t, "html/en_wikipedia_mozilla.html"),
				fixture(t, "md/ko_react_render-and-commit.md")), time.Minute)
			embeddedOnce(t, f.server(tc.embedder), apiChunkTexts(t, p.URL, docs))

			res := search(t, p.URL, mozillaQuery, 5)
			if res.Space != tc.space || len(res.Hits) == 0 || res.Hits[0].DocumentID != docs[0].ID {
				t.Fatalf("search: space %q, %d hits", res.Space, len(res.Hits))
			}
			code, body := chat(t, p.URL, mozillaQuestion)
			if code != http.StatusOK {
				t.Fatalf("chat: HTTP %d %s", code, body)
			}
			if ans := decode[chatResponse](t, body); ans.Generator != tc.name || ans.Citations.Valid == 0 || len(ans.Sources) == 0 {
				t.Fatalf("answer %s", body)
			}
			code, events := chatStream(t, p.URL, mozillaQuestion)
			if code != http.StatusOK || names(events) != "sources,delta,done" {
				t.Fatalf("stream: HTTP %d, events %s", code, names(events))
			}

			// Three 500s: 502 llm_failed with the provider's reason, never the key (nor in the log).
			f.server(tc.generator).FailNext(3, fakeapi.Fault{Status: 500, Message: "shard 7 exploded"})
			code, body = chat(t, p.URL, mozillaQuestion)
			if eb := decode[errorBody](t, body); code != http.StatusBadGateway || eb.Error != rag.CodeLLMFailed || !strings.Contains(eb.Message, "shard 7 exploded") {
				t.Fatalf("HTTP %d %s", code, body)
			}
			mustNotContain(t, "response", string(body), openaiKey, geminiKey, anthropicKey)
			p.Stop(t)
			mustNotContain(t, "ragd output", p.Output.String(), openaiKey, geminiKey, anthropicKey)
		})
	}
}

// TestBinarySwitchHashToOpenAI populates a store with the default offline embedder, then restarts the
// binary with RAGD_EMBEDDER=openai. The re-embed runs in the background (its first API call held for a
// few seconds) while search keeps answering from the hash space; once it completes, search uses the
// OpenAI space. Every chunk is sent to the API once.
func TestBinarySwitchHashToOpenAI(t *testing.T) {
	t.Parallel()
	f := newFakes(t)
	data := t.TempDir()

	// Pseudo-relevance feedback (on by default for the hash space) moves the query vector; without it a hit's
	// vector score is the plain cosine, which the test recomputes to tell the spaces apart.
	p := serve(t, data, "RAGD_FEEDBACK=-1")
	mustContain(t, "banner", p.Banner, "embedder hash/v1/768", "generator extractive")
	docs := waitReady(t, p.URL, upload(t, p.URL, fixture(t, "html/en_wikipedia_mozilla.html"),
		fixture(t, "md/ko_react_render-and-commit.md"), fixture(t, "md/ko_react_queueing-a-series-of-state-updates.md"),
		seed(t, "003_a7bb0f394530c2b8.txt")), time.Minute)
	before := search(t, p.URL, mozillaQuery, 5)
	checkScores(t, before, "hash/v1/768", mozillaQuery, hashScore)
	p.Stop(t)

	const openaiSpace = "openai/text-embedding-3-small/1536"
	f.openai.FailNext(1, fakeapi.Fault{Delay: 8 * time.Second})
	p = serve(t, data, "RAGD_FEEDBACK=-1", "RAGD_EMBEDDER=openai", "OPENAI_API_KEY="+openaiKey, "OPENAI_BASE_URL="+f.openai.BaseURL())
	mustContain(t, "banner", p.Banner, "embedder "+openaiSpace)

	st := status(t, p.URL)
	if st.Embedding.Configured != openaiSpace || st.Embedding.Search != "hash/v1/768" || st.Embedding.Mode != "hybrid" ||
		st.Embedding.Reembed.State == "complete" || st.Embedding.Reembed.Done >= st.Chunks || !strings.Contains(st.Embedding.Reason, "re-embedding into "+openaiSpace) {
		t.Fatalf("status during the re-embed: %+v", st.Embedding)
	}
	during := search(t, p.URL, mozillaQuery, 5)
	checkScores(t, during, "hash/v1/768", mozillaQuery, hashScore)
	if during.Hits[0].ID != before.Hits[0].ID {
		t.Fatalf("search during the re-embed ranks differently: %d, was %d", during.Hits[0].ID, before.Hits[0].ID)
	}
	if code, body := chat(t, p.URL, mozillaQuestion); code != http.StatusOK || decode[chatResponse](t, body).SearchInfo.Space != "hash/v1/768" {
		t.Fatalf("chat during the re-embed: HTTP %d %s", code, body)
	}

	deadline := time.Now().Add(2 * time.Minute)
	for st = status(t, p.URL); st.Embedding.Reembed.State != "complete" || st.Embedding.Search != openaiSpace; st = status(t, p.URL) {
		if time.Now().After(deadline) {
			t.Fatalf("the re-embed did not complete: %+v\n%s", st.Embedding, p.Output.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Embedding.Reembed.Percent != 100 || st.Embedding.Reembed.Done != st.Chunks || st.Embedding.Reason != "" {
		t.Fatalf("status after the re-embed: %+v", st.Embedding)
	}
	after := search(t, p.URL, mozillaQuery, 5)
	checkScores(t, after, openaiSpace, mozillaQuery, func(q, text string) float64 {
		return dot(fakeapi.Vector(q, 1536), fakeapi.Vector(text, 1536))
	})
	if after.Hits[0].DocumentID != docs[0].ID {
		t.Fatalf("search after the re-embed: %+v", after.Hits[0])
	}
	embeddedOnce(t, f.openai.Server, apiChunkTexts(t, p.URL, docs))
	p.Stop(t)
	mustContain(t, "ragd log", p.Output.String(), "embedding space changed", "reembed: done")
}

// apiChunkTexts reads the documents' chunks through the API and returns the text ragd embeds for each.
func apiChunkTexts(t *testing.T, base string, docs []documentView) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, d := range docs {
		resp, body := do(t, "GET", base+"/api/documents/"+d.ID+"/chunks", nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chunks of %s: HTTP %d %s", d.ID, resp.StatusCode, body)
		}
		chunks := decode[struct {
			Chunks []rag.Chunk `json:"chunks"`
		}](t, body).Chunks
		if len(chunks) == 0 {
			t.Fatalf("document %s has no chunks: %s", d.ID, body)
		}
		for _, c := range chunks {
			out[c.ID] = ingest.EmbeddingText(d.Title, c)
		}
	}
	return out
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func hashScore(q, text string) float64 {
	e := hash.New(hash.DefaultDim)
	qv, _ := e.EmbedQuery(context.Background(), q)
	dv, _ := e.EmbedDocuments(context.Background(), []string{text})
	return dot(qv, dv[0])
}

// checkScores verifies that a search ran in space: each vector hit's score is the cosine, in that space,
// of the query and the chunk's embedded text (score).
func checkScores(t *testing.T, res searchResponse, space, query string, score func(q, text string) float64) {
	t.Helper()
	if res.Space != space {
		t.Fatalf("searched %q, want %s", res.Space, space)
	}
	n := 0
	for _, h := range res.Hits {
		if h.VectorRank == 0 {
			continue
		}
		if want := score(query, ingest.EmbeddingText(h.Title, h.Chunk)); math.Abs(want-h.VectorScore) > 1e-4 {
			t.Fatalf("chunk %d scored %.5f, its cosine in %s is %.5f", h.ID, h.VectorScore, space, want)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no vector hit in %s", space)
	}
}
