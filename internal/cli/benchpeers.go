package cli

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	sqlitevec "github.com/asg017/sqlite-vec-go-bindings/ncruces"
	"github.com/ncruces/go-sqlite3"
	"github.com/philippgille/chromem-go"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ragd/ragd/internal/vindex"
)

// The peers of `ragd bench search` that run in the same process: what a Go developer would pick instead
// of ragd's embedded store. chromem-go has no keyword ranking (its document filter is a substring test),
// so it has a vector row only. sqlite-vec is SQLite's vector extension; its Go module embeds a
// WebAssembly build of SQLite with the extension compiled in, run by wazero (no C compiler, no download);
// keyword search is FTS5's bm25 over the same text, hybrid the reciprocal-rank fusion of both in one SQL
// query, as sqlite-vec's documentation shows it.

// peerRows measures the in-process peers not in skip over the corpus; dir holds their files.
func (c *benchCorpus) peerRows(ctx context.Context, dir string, skip map[string]bool) ([]searchRow, error) {
	var rows []searchRow
	if !skip["chromem-go"] {
		more, err := c.chromemRows(ctx)
		if err != nil {
			return nil, fmt.Errorf("chromem-go: %w", err)
		}
		rows = append(rows, more...)
	}
	if !skip["sqlite-vec"] {
		path := filepath.Join(dir, "sqlite-vec.db")
		more, err := c.sqliteVecRows(path)
		if err != nil {
			return nil, fmt.Errorf("sqlite-vec: %w", err)
		}
		rows = append(rows, more...)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(path + suffix) // its file is as large as the corpus
		}
	}
	return rows, nil
}

// heapBytes is the live heap after a collection.
func heapBytes() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// chromemRows loads the corpus into an in-memory chromem-go collection (documents with their text and
// a copy of their vector, as an application that embedded them elsewhere would add them) and times its
// exhaustive top-10 query, which spreads each query over every core. Its memory is the heap its collection
// holds: what dropping it after the queries frees. (The heap it added while loading read less than its
// vectors when memory ragd's closed store still held was freed meanwhile.)
func (c *benchCorpus) chromemRows(ctx context.Context) ([]searchRow, error) {
	start := time.Now()
	db := chromem.NewDB()
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, errors.New("the benchmark gives every vector")
	}
	col, err := db.CreateCollection("bench", nil, noEmbed)
	if err != nil {
		return nil, err
	}
	docs := make([]chromem.Document, len(c.texts))
	for r, t := range c.texts {
		docs[r] = chromem.Document{ID: strconv.Itoa(r), Content: t,
			Embedding: append([]float32(nil), c.vecs[r*c.dim:(r+1)*c.dim]...)}
	}
	if err := col.AddDocuments(ctx, docs, runtime.NumCPU()); err != nil {
		return nil, err
	}
	docs = nil
	build := time.Since(start).Seconds()
	got, times, cpu, err := c.benchRunN(c.peers(), func(i int) ([]vindex.Hit, error) {
		res, err := col.QueryEmbedding(ctx, c.query(i), 10, nil, nil)
		if err != nil {
			return nil, err
		}
		hits := make([]vindex.Hit, len(res))
		for j, r := range res {
			row, err := strconv.Atoi(r.ID)
			if err != nil {
				return nil, err
			}
			hits[j] = vindex.Hit{Row: int32(row)}
		}
		return hits, nil
	})
	if err != nil {
		return nil, err
	}
	held := heapBytes()
	runtime.KeepAlive(db)
	runtime.KeepAlive(col)
	db, col = nil, nil
	mem := held - heapBytes()
	return []searchRow{timed("chromem-go", "vector", times, cpu, recall(got, c.exactVec), mem, build)}, nil
}

// sqliteWasm sets up the WebAssembly runtime once: the sqlite-vec build uses atomics, which wazero runs
// only with the threads feature on.
var sqliteWasm sync.Once

// sqliteVecRows loads the corpus into a SQLite database file with a vec0 table (768 float32 per row) and
// an FTS5 table of the chunks' text (title and text, as ragd indexes them), and times the three kinds of
// query. vec0 searches by brute force (it has no approximate index). Its memory is the database file's
// size: SQLite reads its pages from the file as it needs them.
func (c *benchCorpus) sqliteVecRows(path string) ([]searchRow, error) {
	sqliteWasm.Do(func() {
		sqlite3.RuntimeConfig = wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesThreads)
	})
	_ = sqlitevec.SerializeFloat32 // the import installs the SQLite build with sqlite-vec
	db, err := sqlite3.Open(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	start := time.Now()
	if err := db.Exec(fmt.Sprintf(`PRAGMA journal_mode = WAL;
		CREATE VIRTUAL TABLE vecs USING vec0(embedding float[%d]);
		CREATE VIRTUAL TABLE docs USING fts5(body);`, c.dim)); err != nil {
		return nil, err
	}
	if err := c.sqliteVecLoad(db); err != nil {
		return nil, err
	}
	build := time.Since(start).Seconds()
	mem := fileBytes(path)
	blob := make([]byte, c.dim*4)
	vecQuery := func(i int) []byte {
		for d, x := range c.query(i) {
			binary.LittleEndian.PutUint32(blob[d*4:], math.Float32bits(x))
		}
		return blob
	}
	kinds := []struct {
		kind, sql string
		want      [][]vindex.Hit
		bind      func(s *sqlite3.Stmt, i int) error
	}{
		{"vector", `SELECT rowid FROM vecs WHERE embedding MATCH ? AND k = 10 ORDER BY distance`, c.exactVec,
			func(s *sqlite3.Stmt, i int) error { return s.BindBlob(1, vecQuery(i)) }},
		{"keyword", `SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10`, c.exactKw,
			func(s *sqlite3.Stmt, i int) error { return s.BindText(1, ftsQuery(c.qtexts[i])) }},
		{"hybrid", fmt.Sprintf(`WITH
			v AS (SELECT rowid, row_number() OVER (ORDER BY distance) AS r FROM vecs WHERE embedding MATCH ?1 AND k = %[1]d),
			f AS (SELECT rowid, row_number() OVER (ORDER BY rank) AS r FROM docs WHERE docs MATCH ?2 ORDER BY rank LIMIT %[1]d)
			SELECT coalesce(v.rowid, f.rowid) AS id,
				coalesce(0.7 / (60 + v.r), 0) + coalesce(0.3 / (60 + f.r), 0) AS score
			FROM v FULL OUTER JOIN f ON f.rowid = v.rowid ORDER BY score DESC, id LIMIT 10`, benchPool), c.exactHybrid,
			func(s *sqlite3.Stmt, i int) error {
				return errors.Join(s.BindBlob(1, vecQuery(i)), s.BindText(2, ftsQuery(c.qtexts[i])))
			}},
	}
	var rows []searchRow
	for _, k := range kinds {
		stmt, _, err := db.Prepare(k.sql)
		if err != nil {
			return nil, fmt.Errorf("%s query: %w", k.kind, err)
		}
		got, times, cpu, err := c.benchRunN(c.peers(), func(i int) ([]vindex.Hit, error) {
			if err := k.bind(stmt, i); err != nil {
				return nil, err
			}
			var hits []vindex.Hit
			for stmt.Step() {
				hits = append(hits, vindex.Hit{Row: int32(stmt.ColumnInt64(0) - 1)})
			}
			return hits, errors.Join(stmt.Err(), stmt.Reset())
		})
		stmt.Close()
		if err != nil {
			return nil, fmt.Errorf("%s query: %w", k.kind, err)
		}
		rows = append(rows, timed("sqlite-vec + FTS5", k.kind, times, cpu, recall(got, k.want), mem, build))
	}
	return rows, nil
}

// sqliteVecLoad inserts the corpus (row r as rowid r+1) in transactions of 1,000 rows.
func (c *benchCorpus) sqliteVecLoad(db *sqlite3.Conn) error {
	vs, _, err := db.Prepare(`INSERT INTO vecs (rowid, embedding) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer vs.Close()
	ds, _, err := db.Prepare(`INSERT INTO docs (rowid, body) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer ds.Close()
	blob := make([]byte, c.dim*4)
	for first := 0; first < len(c.texts); first += 1000 {
		if err := db.Exec(`BEGIN`); err != nil {
			return err
		}
		for r := first; r < min(first+1000, len(c.texts)); r++ {
			for d, x := range c.vecs[r*c.dim : (r+1)*c.dim] {
				binary.LittleEndian.PutUint32(blob[d*4:], math.Float32bits(x))
			}
			if err := errors.Join(vs.BindInt64(1, int64(r+1)), vs.BindBlob(2, blob), vs.Exec(),
				ds.BindInt64(1, int64(r+1)), ds.BindText(2, benchTitle(r/10*10)+"\n"+c.texts[r]), ds.Exec()); err != nil {
				return err
			}
		}
		if err := db.Exec(`COMMIT`); err != nil {
			return err
		}
	}
	return nil
}

// ftsQuery is an FTS5 query matching any of the words of q (each quoted).
func ftsQuery(q string) string {
	words := strings.Fields(q)
	for i, w := range words {
		words[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(words, " OR ")
}
