package sqlite_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/textproc"
)

// concSpace is the space of the concurrency tests: wide enough for random vectors to be distinct.
var concSpace = rag.Space{Provider: "test", Model: "conc", Dim: 8}

// concWriter applies a fixed sequence of writes (new documents, new versions, re-embedded chunks,
// deletions, pruned tombstones) and records, after each commit, the sorted chunk IDs live in that state.
// States are numbered from 0 (before the first write); committed is the last state whose commit has
// returned.
type concWriter struct {
	s         *sqlite.Store
	r         *rand.Rand
	coll      string
	docs      []string // live document IDs
	mu        sync.Mutex
	states    [][]int64 // live chunk IDs by state
	committed atomic.Int64
}

func (w *concWriter) vector() []float32 {
	v := make([]float32, concSpace.Dim)
	for i := range v {
		v[i] = float32(w.r.NormFloat64())
	}
	return v
}

func (w *concWriter) commit(t *testing.T, ctx context.Context, docID string, n int) {
	t.Helper()
	chunks := make([]rag.Chunk, n)
	for i := range chunks {
		chunks[i] = rag.Chunk{Index: i, Kind: rag.KindText, Text: fmt.Sprintf("common marker %d", i), Vector: w.vector()}
	}
	if _, err := w.s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: docID, ContentHash: hashOf(fmt.Sprint(w.r.Int())),
		Title: "t", MediaType: "text/plain", Space: concSpace, Chunks: chunks}); err != nil {
		t.Fatal(err)
	}
}

// step makes write number i and records the state it committed.
func (w *concWriter) step(t *testing.T, ctx context.Context, i int) {
	t.Helper()
	switch {
	case i%11 == 0 && len(w.docs) > 0:
		sqlite.PruneAllTombstones(t, w.s) // caches that missed a tombstone must reload in full
	case i%7 == 0 && len(w.docs) > 1:
		j := w.r.IntN(len(w.docs))
		if err := w.s.DeleteDocument(ctx, rag.LocalPrincipal, w.docs[j]); err != nil {
			t.Fatal(err)
		}
		w.docs = slices.Delete(w.docs, j, j+1)
	case i%5 == 0 && len(w.docs) > 0:
		ids := chunkIDs(t, w.s, w.docs[w.r.IntN(len(w.docs))])
		if len(ids) > 0 {
			if err := w.s.PutVectors(ctx, concSpace, map[int64][]float32{ids[0]: w.vector()}); err != nil {
				t.Fatal(err)
			}
		}
	case i%3 == 0 && len(w.docs) > 0:
		w.commit(t, ctx, w.docs[w.r.IntN(len(w.docs))], 1+w.r.IntN(3))
	default:
		d := &rag.Document{CollectionID: w.coll, Title: "t", Owner: "local"}
		if err := w.s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		w.commit(t, ctx, d.ID, 1+w.r.IntN(3))
		w.docs = append(w.docs, d.ID)
	}
	live := chunkIDs(t, w.s, w.docs...)
	w.mu.Lock()
	w.states = append(w.states, live)
	w.mu.Unlock()
	w.committed.Add(1)
}

// observation is what one search returned, between the states committed before it started and after it
// returned.
type observation struct {
	kind          string
	before, after int64
	ids           []int64
}

// TestConcurrentSearchFreshness runs searches in several goroutines while another writes, and checks that
// every result is exactly the live set of one committed state, no older than the last commit that
// returned before the search started: nothing committed earlier is missing, nothing removed earlier is
// returned, no row is returned twice, no half-applied state is seen. The searching Store is the writing
// one (this process's writes) or another Store on the same file (as another process's writes are seen).
func TestConcurrentSearchFreshness(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sameStore bool
	}{{"SameStore", true}, {"OtherStore", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			searchFreshness(t, tc.sameStore, sqlite.Options{})
		})
	}
}

// TestConcurrentSearchFreshnessFileBacked is TestConcurrentSearchFreshness with the searched space's
// vectors in its vector file only (from 20 vectors on) and its files written and vacuumed as often as can
// be: appends, tombstones, compactions, full reloads after pruned tombstones, index file writes and
// vacuums run while the searches read the file.
func TestConcurrentSearchFreshnessFileBacked(t *testing.T) {
	sqlite.SetVectorFileLimits(t, 0, 10)
	for _, tc := range []struct {
		name      string
		sameStore bool
	}{{"SameStore", true}, {"OtherStore", false}} {
		t.Run(tc.name, func(t *testing.T) {
			searchFreshness(t, tc.sameStore, sqlite.Options{VectorIndexMin: 20, VectorHeap: -1})
		})
	}
}

// searchFreshness is the body of the freshness tests: a store writes, searches run on it (sameStore) or on
// another store of the same file, both opened with opts.
func searchFreshness(t *testing.T, sameStore bool, opts sqlite.Options) {
	ctx := t.Context()
	dir := t.TempDir()
	ws := openWith(t, dir, opts)
	rs := ws
	if !sameStore {
		rs = openWith(t, dir, opts)
	}
	coll, err := ws.EnsureCollection(ctx, rag.DefaultCollection, "local")
	if err != nil {
		t.Fatal(err)
	}
	w := &concWriter{s: ws, r: rand.New(rand.NewPCG(5, 6)), coll: coll.ID, states: [][]int64{nil}}
	const steps, searchers = 80, 4
	var done atomic.Bool
	obs := make([][]observation, searchers)
	var wg sync.WaitGroup
	for g := range searchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := make([]float32, concSpace.Dim)
			q[g%concSpace.Dim] = 1
			for n := 0; !done.Load() || n < 5; n++ {
				before := w.committed.Load()
				var o observation
				if g%3 == 2 {
					kc, err := rs.KeywordCandidates(ctx, rag.LocalPrincipal, rag.KeywordQuery{Terms: textproc.QueryTerms("common"), K: 10_000})
					if err != nil {
						t.Error(err)
						return
					}
					o.kind = "keyword"
					for _, c := range kc {
						o.ids = append(o.ids, c.ChunkID)
					}
				} else {
					vc, err := rs.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: concSpace, Vector: q, K: 10_000})
					if err != nil {
						t.Error(err)
						return
					}
					o.kind = "vector"
					for _, c := range vc {
						o.ids = append(o.ids, c.ChunkID)
					}
				}
				o.before, o.after = before, w.committed.Load()
				slices.Sort(o.ids)
				obs[g] = append(obs[g], o)
				// A few searches per state are enough; more would only slow the writer down.
				for !done.Load() && w.committed.Load() == before && n%4 == 3 {
					time.Sleep(100 * time.Microsecond)
				}
			}
		}()
	}
	for i := 1; i <= steps; i++ {
		w.step(t, ctx, i)
	}
	done.Store(true)
	wg.Wait()

	var n, lagging int
	for _, list := range obs {
		for _, o := range list {
			n++
			match := int64(-1)
			for s := o.before; s <= min(o.after+1, int64(len(w.states)-1)); s++ {
				if slices.Equal(o.ids, w.states[s]) {
					match = s
					break
				}
			}
			if match < 0 {
				t.Fatalf("%s search between states %d and %d returned %v; state %d is %v", o.kind, o.before, o.after,
					o.ids, o.before, w.states[o.before])
			}
			if match > o.before {
				lagging++
			}
		}
	}
	if n == 0 {
		t.Fatal("no search ran")
	}
	t.Logf("%d searches over %d states; %d saw a commit that had not returned when they started", n, len(w.states), lagging)
	// A search after the last commit leaves the searching Store's cache in step with the last state.
	if _, err := rs.VectorCandidates(ctx, rag.LocalPrincipal, rag.VectorQuery{Space: concSpace, Vector: make([]float32, concSpace.Dim), K: 1}); err != nil {
		t.Fatal(err)
	}
	if got, want := sqlite.CachedVectors(rs, concSpace), len(w.states[len(w.states)-1]); got != want {
		t.Fatalf("cache holds %d vectors, want %d", got, want)
	}
	if opts.VectorHeap < 0 {
		if inFile, inMemory := sqlite.VectorsInFile(rs, concSpace); !inFile || inMemory {
			t.Fatalf("vectors in file %v, in memory %v", inFile, inMemory)
		}
	}
}
