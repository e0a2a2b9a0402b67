package reembed_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/embed/hash"
	"github.com/ragd/ragd/internal/fakeapi"
	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/reembed"
)

const query = "렌더링 커밋 단계"

// TestSwitchHashToOpenAI changes the embedder of a populated store from hash to OpenAI: searches keep
// using the hash space while the re-embed runs (and after it is interrupted), a document ingested meanwhile
// is embedded into the hash space too, and once every chunk is in the OpenAI space searches use it. No chunk
// is sent to the API twice.
func TestSwitchHashToOpenAI(t *testing.T) {
	onBothStores(t, testSwitch, fixtures[:3]...)
}

// onBothStores runs test in parallel on a SQLite and a PostgreSQL store populated from files.
func onBothStores(t *testing.T, test func(*testing.T, *bundle), files ...string) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		test(t, setup(t, files...))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		test(t, setupPostgres(t, files...))
	})
}

func testSwitch(t *testing.T, b *bundle) {
	ctx := context.Background()
	oai := b.openai(t, "text-embedding-3-small", 768)
	hashSpace := b.hash.Space()
	total := len(b.chunks(t))
	if total < 10 {
		t.Fatalf("only %d chunks: the test needs several batches", total)
	}
	s := b.service(t, oai, hashOnly, 4)

	st := status(t, s)
	if st.Search != hashSpace.ID() || st.Mode != "hybrid" || st.Configured != oai.Space().ID() ||
		st.Reembed.State != "pending" || st.Reembed.Done != 0 || st.Reembed.Total != total || st.Reembed.Percent != 0 {
		t.Fatalf("status before the re-embed: %+v", st)
	}
	if !strings.Contains(st.Reason, "0 of ") || len(st.Spaces) != 2 || !st.Spaces[0].Configured || st.Spaces[1].ID != hashSpace.ID() || st.Spaces[1].Percent != 100 {
		t.Fatalf("status before the re-embed: %+v", st)
	}
	res, err := s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkFromSpace(t, res, hashSpace, query, nil)
	if n := b.fake.Calls(fakeapi.EndpointEmbed); n != 0 {
		t.Fatalf("a search in the hash space called the API %d times", n)
	}

	// The first batch goes through, then the API fails everything: the run stops and says why.
	b.fake.FailNext(1, fakeapi.Fault{})
	b.fake.FailNext(6, fakeapi.Fault{Status: 500})
	err = s.Reembed(ctx)
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed {
		t.Fatalf("interrupted re-embed: %v", err)
	}
	st = status(t, s)
	if st.Reembed.State != "failed" || st.Reembed.Done != 4 || st.Reembed.Embedded != 4 || st.Reembed.LastError == "" || st.Search != hashSpace.ID() {
		t.Fatalf("status after an interrupted run: %+v", st.Reembed)
	}
	if strings.Contains(st.Reembed.LastError, key) {
		t.Fatal("the key leaked into the status")
	}
	res, err = s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkFromSpace(t, res, hashSpace, query, nil)

	// A document ingested now gets OpenAI vectors only; the next run gives it hash vectors as well.
	doc := b.ingest(t, oai, fixtures[3])
	total = len(b.chunks(t))

	// A restart: a new Service resumes from what the store holds.
	s = b.service(t, oai, hashOnly, 4)
	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	if left, err := b.store.ChunksWithoutVector(ctx, hashSpace, 0, 10); err != nil || len(left) != 0 {
		t.Fatalf("chunks left without a hash vector: %d %v", len(left), err)
	}
	st = status(t, s)
	if st.Reembed.State != "complete" || st.Reembed.Done != total || st.Reembed.Percent != 100 || st.Search != oai.Space().ID() || st.Reason != "" {
		t.Fatalf("status after the re-embed: %+v", st)
	}
	res, err = s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: "Mozilla Firefox browser", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkFromSpace(t, res, oai.Space(), "Mozilla Firefox browser", fakeVec(768))
	if res.Hits[0].DocumentID != doc.ID {
		t.Fatalf("the document ingested during the re-embed is not found first: %+v", res.Hits[0])
	}

	for _, h := range b.chunks(t) {
		if n := b.fake.TimesEmbedded(ingest.EmbeddingText(h.Title, h.Chunk)); n != 1 {
			t.Fatalf("chunk %d was embedded %d times", h.ID, n)
		}
	}
	// A further run has nothing to do.
	before := b.fake.Calls(fakeapi.EndpointEmbed)
	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	if n := b.fake.Calls(fakeapi.EndpointEmbed); n != before {
		t.Fatalf("a run with nothing missing called the API %d times", n-before)
	}
	if v := b.fake.Violations(); len(v) > 0 {
		t.Fatalf("protocol violations: %v", v)
	}
}

// TestKeywordOnly covers a switch between two spaces whose old one cannot be searched any more (its
// provider is not configured): searches are keyword-only until the re-embed completes, and say so.
func TestKeywordOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, fixtures[:2]...)
	small := b.openai(t, "text-embedding-3-small", 768)
	s := b.service(t, small, hashOnly, 0) // re-embed the hash store into the small model first
	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	large := b.openai(t, "text-embedding-3-large", 1024)
	noneBut := func(_ context.Context, sp rag.Space) (rag.Embedder, error) {
		return nil, errors.New("openai is not configured")
	}
	s = b.service(t, large, noneBut, 0)
	st := status(t, s)
	if st.Mode != "keyword" || st.Search != "" || !strings.Contains(st.Reason, "keyword-only") || !strings.Contains(st.Reason, "openai is not configured") {
		t.Fatalf("status: %+v", st)
	}
	for _, sp := range st.Spaces {
		if !sp.Configured && sp.Unusable == "" {
			t.Fatalf("space %s listed as usable", sp.ID)
		}
	}
	calls := b.fake.Calls(fakeapi.EndpointEmbed)
	res, err := s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Space != "" || res.VectorCandidates != 0 || len(res.Hits) == 0 || b.fake.Calls(fakeapi.EndpointEmbed) != calls {
		t.Fatalf("keyword-only search: space %q, %d vector candidates, %d hits", res.Space, res.VectorCandidates, len(res.Hits))
	}
	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkFromSpace(t, res, large.Space(), query, fakeVec(1024))
}

// TestOldSpacePreference: the configured space wins when complete; an old space is searched only when it
// covers at least as much; of several old ones, the most complete.
func TestOldSpacePreference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, fixtures[:2]...)
	all := len(b.chunks(t))
	small := b.openai(t, "text-embedding-3-small", 768)
	// The small space gets only part of the chunks.
	partial := b.service(t, small, hashOnly, 3)
	b.fake.FailNext(1, fakeapi.Fault{})
	b.fake.FailNext(6, fakeapi.Fault{Status: 503})
	if err := partial.Reembed(ctx); err == nil {
		t.Fatal("want an interrupted run")
	}
	both := func(ctx context.Context, sp rag.Space) (rag.Embedder, error) {
		if sp == small.Space() {
			return small, nil
		}
		return hashOnly(ctx, sp)
	}
	large := b.openai(t, "text-embedding-3-large", 256)
	st := status(t, b.service(t, large, both, 0))
	if st.Search != b.hash.Space().ID() {
		t.Fatalf("searching %q, want the complete hash space (spaces %+v)", st.Search, st.Spaces)
	}
	// With the hash space unusable, the partial small space (3 chunks) covers more than the empty
	// configured one.
	smallOnly := func(_ context.Context, sp rag.Space) (rag.Embedder, error) {
		if sp == small.Space() {
			return small, nil
		}
		return nil, errors.New("not configured")
	}
	st = status(t, b.service(t, large, smallOnly, 0))
	if st.Search != small.Space().ID() || st.Mode != "hybrid" {
		t.Fatalf("searching %q, want %s", st.Search, small.Space().ID())
	}
	// A complete configured space is searched whatever the old ones hold.
	s := b.service(t, b.hash, both, 0)
	if st := status(t, s); st.Search != b.hash.Space().ID() || st.Reason != "" || st.Reembed.State != "complete" || st.Reembed.Done != all {
		t.Fatalf("status: %+v", st)
	}
}

// wrongDim is a broken embedder: it claims one dimension and returns another. No real embedder here
// does (they check every response), which is why it is written by hand.
type wrongDim struct{ space rag.Space }

func (w wrongDim) Space() rag.Space { return w.space }

func (w wrongDim) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, w.space.Dim/2)
		out[i][0] = 1
	}
	return out, nil
}

func (w wrongDim) EmbedQuery(context.Context, string) ([]float32, error) {
	return make([]float32, w.space.Dim/2), nil
}

// TestDimensionMismatch: a vector of the wrong size never reaches the store, and an old space whose
// rebuilt embedder makes vectors of another space is not searched.
func TestDimensionMismatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, fixtures[0])
	broken := wrongDim{space: rag.Space{Provider: "openai", Model: "broken", Dim: 64}}
	s := b.service(t, broken, hashOnly, 0)
	err := s.Reembed(ctx)
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "32-dimensional") {
		t.Fatalf("re-embed with a broken embedder: %v", err)
	}
	stats, err := b.store.SpaceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := stats.Spaces[broken.space.ID()]; n != 0 {
		t.Fatalf("%d vectors of the wrong size were stored", n)
	}

	otherDim := func(_ context.Context, sp rag.Space) (rag.Embedder, error) { return hash.New(sp.Dim / 2), nil }
	s = b.service(t, b.openai(t, "text-embedding-3-small", 768), otherDim, 0)
	st := status(t, s)
	if st.Mode != "keyword" || !strings.Contains(st.Reason, "makes vectors of hash/v1/384") {
		t.Fatalf("status: %+v", st)
	}
}

// TestBadChunkSkipped: a chunk the provider refuses on its own does not stop the others; it is reported
// and retried by the next run.
func TestBadChunkSkipped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, fixtures[0])
	total := len(b.chunks(t))
	oai := b.openai(t, "text-embedding-3-small", 768)
	s := b.service(t, oai, hashOnly, 4)
	// The first batch of four fails (400: not retried), its first text alone succeeds, the second alone
	// fails, the third and fourth succeed.
	b.fake.FailNext(1, fakeapi.Fault{Status: 400, Message: "This input is not allowed."})
	b.fake.FailNext(1, fakeapi.Fault{})
	b.fake.FailNext(1, fakeapi.Fault{Status: 400, Message: "This input is not allowed."})
	err := s.Reembed(ctx)
	if rag.ErrorCode(err) != rag.CodeEmbeddingFailed || !strings.Contains(rag.ErrorMessage(err), "1 chunks could not be embedded") {
		t.Fatalf("run with a refused chunk: %v", err)
	}
	st := status(t, s)
	if st.Reembed.Done != total-1 || st.Reembed.State != "failed" || st.Search != b.hash.Space().ID() {
		t.Fatalf("status: %+v", st.Reembed)
	}
	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s); st.Reembed.State != "complete" || st.Search != oai.Space().ID() {
		t.Fatalf("status: %+v", st.Reembed)
	}
}

func TestParseSpace(t *testing.T) {
	t.Parallel()
	for _, sp := range []rag.Space{{Provider: "hash", Model: "v1", Dim: 768}, {Provider: "openai", Model: "BAAI/bge-m3", Dim: 1024}} {
		got, err := reembed.ParseSpace(sp.ID())
		if err != nil || got != sp {
			t.Fatalf("ParseSpace(%q) = %+v, %v", sp.ID(), got, err)
		}
	}
	for _, bad := range []string{"", "hash", "hash/768", "hash/v1/x", "hash/v1/0", "/v1/8"} {
		if _, err := reembed.ParseSpace(bad); err == nil {
			t.Fatalf("ParseSpace(%q) accepted", bad)
		}
	}
}

// TestSearchFollowsAnotherProcess: a server whose re-embed runs in another process (ragd worker) notices
// that it completed when its decision is older than Options.Refresh, and then searches the new space.
func TestSearchFollowsAnotherProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, fixtures[0])
	oai := b.openai(t, "text-embedding-3-small", 768)
	var now time.Time
	server, err := reembed.New(ctx, b.store, oai, hashOnly, reembed.Options{Refresh: 10 * time.Second, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	search := func() string {
		t.Helper()
		res, err := server.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		return res.Space
	}
	if got := search(); got != b.hash.Space().ID() {
		t.Fatalf("searched %q before the re-embed", got)
	}
	worker := b.service(t, oai, hashOnly, 0)
	if err := worker.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(9 * time.Second)
	if got := search(); got != b.hash.Space().ID() {
		t.Fatalf("searched %q within the refresh interval", got)
	}
	now = now.Add(2 * time.Second)
	if got := search(); got != oai.Space().ID() {
		t.Fatalf("searched %q after the refresh interval", got)
	}
	if sp, ok := server.SearchSpace(); !ok || sp != oai.Space() {
		t.Fatalf("SearchSpace %v %v", sp, ok)
	}
}

// TestDrop covers reclaiming an old space: refused for the configured space and, without force, for the
// space searches use; after the re-embed the old space's vectors go and search stays hybrid.
func TestDrop(t *testing.T) {
	onBothStores(t, testDrop, fixtures[:2]...)
}

func testDrop(t *testing.T, b *bundle) {
	ctx := context.Background()
	oai := b.openai(t, "text-embedding-3-small", 768)
	hashSpace := b.hash.Space()
	total := len(b.chunks(t))
	s := b.service(t, oai, hashOnly, 16)

	for _, tt := range []struct{ name, id string }{
		{"Configured", oai.Space().ID()},
		{"Malformed", "hash-768"},
		{"SearchedWithoutForce", hashSpace.ID()},
	} {
		if n, err := s.Drop(ctx, tt.id, false); rag.ErrorCode(err) != rag.CodeInvalid || n != 0 {
			t.Errorf("%s: Drop(%q) = %d, %v; want invalid_request", tt.name, tt.id, n, err)
		}
	}
	if st := status(t, s); st.Search != hashSpace.ID() || st.Spaces[1].Chunks != total {
		t.Fatalf("a refused drop changed the store: %+v", st)
	}

	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := s.Drop(ctx, hashSpace.ID(), false)
	if err != nil || n != total {
		t.Fatalf("Drop(old space) = %d, %v; want %d vectors", n, err, total)
	}
	st := status(t, s)
	if st.Search != oai.Space().ID() || st.Mode != "hybrid" || len(st.Spaces) != 1 || st.Spaces[0].Chunks != total {
		t.Fatalf("status after the drop: %+v", st)
	}
	res, err := s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkFromSpace(t, res, oai.Space(), query, fakeVec(768))
}

// TestDropForced drops the space searches use while the re-embed is pending: search goes keyword-only
// and says so, then hybrid in the configured space once the re-embed completes.
func TestDropForced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, fixtures[:2]...)
	oai := b.openai(t, "text-embedding-3-small", 768)
	s := b.service(t, oai, hashOnly, 16)
	if _, err := s.Drop(ctx, b.hash.Space().ID(), true); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s); st.Mode != "keyword" || st.Search != "" || st.Reason == "" {
		t.Fatalf("status after a forced drop: %+v", st)
	}
	res, err := s.Search(ctx, rag.LocalPrincipal, rag.SearchRequest{Query: query, K: 5})
	if err != nil || len(res.Hits) == 0 || res.Space != "" {
		t.Fatalf("keyword-only search after a forced drop: %+v, %v", res, err)
	}
	if err := s.Reembed(ctx); err != nil {
		t.Fatal(err)
	}
	if st := status(t, s); st.Mode != "hybrid" || st.Search != oai.Space().ID() {
		t.Fatalf("status after the re-embed: %+v", st)
	}
}
