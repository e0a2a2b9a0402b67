package postgres

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/textproc"
)

// TestBulkModes writes one document through each bulk path the server has (COPY needs a native server;
// PGlite's socket breaks on it, so there only multi-row INSERT runs) and checks that both leave the same
// chunks, postings and vectors, and that the automatic choice is COPY on a native server and INSERT on
// PGlite. RAGD_TEST_REQUIRE_COPY=1 (set by scripts/test.sh for its native server) fails instead of skipping
// the COPY path.
func TestBulkModes(t *testing.T) {
	auto := openStore(t, Options{})
	want := BulkCopy
	if auto.pglite {
		want = BulkInsert
	}
	if auto.bulk != want {
		t.Fatalf("automatic bulk mode %q on this server (PGlite %v), want %q", auto.bulk, auto.pglite, want)
	}
	modes := []BulkMode{BulkInsert, BulkCopy}
	if auto.pglite {
		if os.Getenv("RAGD_TEST_REQUIRE_COPY") != "" {
			t.Fatal("RAGD_TEST_REQUIRE_COPY is set but RAGD_TEST_DATABASE_URL is PGlite")
		}
		t.Log("PGlite: only the INSERT path runs here; scripts/test.sh runs this test on a native server too")
		modes = modes[:1]
	}
	space := rag.Space{Provider: "test", Model: "bulk", Dim: 8}
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"탄소중립", "위원회", "boundary", "layer", "heat", "transfer", "법률", "시행", "D80", "25-180-12"}
	var chunks []rag.Chunk
	for i := range 300 {
		var b strings.Builder
		for range 12 {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		v := make([]float32, space.Dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		chunks = append(chunks, rag.Chunk{Index: i, Kind: rag.KindText, Text: b.String(), PageStart: i/10 + 1,
			PageEnd: i/10 + 1, Section: "S > " + fmt.Sprint(i%7), StartOffset: i * 100, EndOffset: i*100 + 99, Vector: v})
	}
	var dumps []string
	for _, m := range modes {
		s := openStore(t, Options{Bulk: m})
		ctx := t.Context()
		c, err := s.EnsureCollection(ctx, "bulk", "alice")
		if err != nil {
			t.Fatal(err)
		}
		d := &rag.Document{CollectionID: c.ID, ExternalID: "bulk.txt", Title: "bulk", Source: "bulk.txt",
			MediaType: "text/plain", PendingHash: "h", Status: rag.StatusQueued, Stage: rag.StageQueued, Owner: "alice"}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		if _, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: "h", Title: "bulk",
			Source: "bulk.txt", MediaType: "text/plain", Space: space, Chunks: slices.Clone(chunks)}); err != nil {
			t.Fatalf("%s: CommitVersion: %v", m, err)
		}
		var dump, postings string
		if err := s.pool.QueryRow(ctx, s.q(`SELECT string_agg(concat_ws('|', c.idx, c.kind, c.text, c.page_start,
			c.page_end, c.section, c.start_offset, c.end_offset, c.term_count), E'\n' ORDER BY c.idx) FROM {S}.chunks c`)).Scan(&dump); err != nil {
			t.Fatal(err)
		}
		if err := s.pool.QueryRow(ctx, s.q(`SELECT string_agg(concat_ws('|', p.term, c.idx, p.tf, p.dl), E'\n' ORDER BY c.idx, p.term)
			FROM {S}.postings p JOIN {S}.chunks c ON c.id = p.chunk_id`)).Scan(&postings); err != nil {
			t.Fatal(err)
		}
		sp, err := s.space(ctx, space, false)
		if err != nil || sp == nil {
			t.Fatalf("%s: space: %v", m, err)
		}
		var vectors string
		if err := s.pool.QueryRow(ctx, s.q(fmt.Sprintf(`SELECT string_agg(v.embedding::text, E'\n' ORDER BY c.idx)
			FROM %s v JOIN {S}.chunks c ON c.id = v.chunk_id`, sp.table))).Scan(&vectors); err != nil {
			t.Fatal(err)
		}
		if strings.Count(vectors, "\n") != len(chunks)-1 || postings == "" {
			t.Fatalf("%s: %d vectors, %d posting bytes", m, strings.Count(vectors, "\n")+1, len(postings))
		}
		kc, err := s.KeywordCandidates(ctx, rag.Principal{Admin: true}, rag.KeywordQuery{Terms: textproc.QueryTerms("탄소중립 boundary"), K: 5})
		if err != nil || len(kc) != 5 {
			t.Fatalf("%s: keyword candidates %d, %v", m, len(kc), err)
		}
		vc, err := s.VectorCandidates(ctx, rag.Principal{Admin: true}, rag.VectorQuery{Space: space, Vector: chunks[42].Vector, K: 3})
		if err != nil || len(vc) == 0 || vc[0].Score < 0.9999 {
			t.Fatalf("%s: vector candidates %+v, %v", m, vc, err)
		}
		dumps = append(dumps, dump+"\n--\n"+postings+"\n--\n"+vectors)
	}
	if len(dumps) == 2 && dumps[0] != dumps[1] {
		t.Fatal("COPY and INSERT stored different rows")
	}
}
