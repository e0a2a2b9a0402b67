// Package sqlite is ragd's embedded store: one SQLite file (modernc.org/sqlite, pure Go) holding
// collections, documents and their versions, chunks, an FTS5 keyword index over the shared analyzer's terms,
// vectors per embedding space, raw uploads and the embedding cache. It implements rag.Store and passes
// internal/store/storetest.
//
// Concurrency: all writes go through one connection with BEGIN IMMEDIATE and a busy timeout, so writers of
// this process queue in Go and writers of other processes (`ragd ingest` beside `ragd serve`) wait for the
// file lock instead of failing with SQLITE_BUSY; reads use separate pools and see WAL snapshots. The heavy
// part of a search (a keyword read transaction, a vector pass) waits for one of ReadConns turns, handed
// out first come, first served; point lookups (hits, the vector cache's freshness check) have a pool of
// their own and take no turn, so a search that has its candidates is not queued behind new ones.
//
// Vectors are searched exactly up to Options.VectorIndexMin vectors and through an approximate IVF index
// past it (annindex.go). Below it they are held in memory; past it the index's one-bit codes are, and the
// float32 vectors are kept in a vector file beside the database (vecfile.go, vecpersist.go), read row by
// row for the exact rescoring of each search's shortlist, and read back with the index file at start-up
// after checks against the database. See vectors.go for how the per-space cache stays in step with the
// database, also when another process writes, and merge.go for how the keyword index is kept in one
// segment.
package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/ragd/ragd/internal/migration"
	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
)

// FileName is the database file Open uses when given a directory.
const FileName = "ragd.db"

// Options tune a Store; the zero value is the default.
type Options struct {
	// Clock gives the time stored in timestamps (default time.Now).
	Clock rag.Clock
	// BusyTimeout is how long a write waits for another process's write lock (default 30s).
	BusyTimeout time.Duration
	// ReadConns is how many read transactions (keyword searches, listings) and vector scans run at once
	// (default GOMAXPROCS, at least 2); more wait their turn in arrival order. Point lookups (hits, the
	// vector cache's freshness check) do not take a turn. With 50 concurrent searches on 2 cores, 2 gave
	// a p95 of 294–313 ms, 4 gave 339–389 ms and 8 gave 448–520 ms at the same throughput.
	ReadConns int
	// SearchWorkers is how many goroutines score one vector query (default GOMAXPROCS, at most 8).
	SearchWorkers int
	// TombstoneRetention is how long removed-vector records are kept for other processes' caches; a cache
	// older than that reloads its space in full (default 24h).
	TombstoneRetention time.Duration
	// KeywordMergeDelay is how long writes must pause before the keyword index's segments are merged into
	// one (default 5s; negative: never in the background, see MergeKeywordIndex).
	KeywordMergeDelay time.Duration
	// VectorIndexMin is the live vector count of a space from which its vector searches use an approximate
	// index (internal/vindex) instead of scanning every vector (default 20,000; negative: always exact).
	VectorIndexMin int
	// VectorMemory is the most memory, in bytes, the approximate index of one space may take; a space whose
	// index would need more is searched exactly, its vectors in memory (0: no limit).
	VectorMemory int64
	// VectorHeap is the most memory, in bytes, the float32 vectors of one space with an index are kept in
	// beside its vector file; a larger space's vectors are read from the file (default 1 GiB; negative:
	// from the file always).
	VectorHeap int64
	// KeywordIndexMin is the chunk count from which keyword queries are answered from an in-memory copy
	// of the keyword index's postings (kwindex.go) instead of FTS5's bm25() (default 10,000; negative:
	// always FTS5).
	KeywordIndexMin int
	// VectorColumns is the most memory, in bytes, of the column-major copy of one space's vectors kept for
	// sparse queries (columns.go; default 256 MiB; negative: none).
	VectorColumns int64
	// HitCacheBytes is the memory, in bytes, of the passages Hits keeps between searches (hitcache.go;
	// default 32 MiB; negative: none, every Hits reads the database).
	HitCacheBytes int
	// Keys seals the blobs and chunk texts written and opens those read (nil: written in the clear). Open
	// refuses a database holding data sealed with a key Keys lacks.
	Keys *sealing.Keyring
}

func (o Options) withDefaults() Options {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 30 * time.Second
	}
	if o.ReadConns <= 0 {
		o.ReadConns = max(2, runtime.GOMAXPROCS(0))
	}
	if o.SearchWorkers <= 0 {
		o.SearchWorkers = min(runtime.GOMAXPROCS(0), 8)
	}
	if o.TombstoneRetention <= 0 {
		o.TombstoneRetention = 24 * time.Hour
	}
	if o.VectorIndexMin == 0 {
		o.VectorIndexMin = 20_000
	}
	if o.VectorHeap == 0 {
		o.VectorHeap = 1 << 30
	}
	if o.KeywordIndexMin == 0 {
		o.KeywordIndexMin = 10_000
	}
	if o.VectorColumns == 0 {
		o.VectorColumns = 256 << 20
	}
	if o.HitCacheBytes == 0 {
		o.HitCacheBytes = 32 << 20
	}
	if o.KeywordMergeDelay == 0 {
		o.KeywordMergeDelay = 5 * time.Second
	}
	return o
}

// Store is the SQLite implementation of rag.Store. It is safe for concurrent use, and several Stores (in
// one or several processes) may open the same file.
type Store struct {
	path string
	opts Options
	w    *sql.DB // exactly one connection; every transaction is BEGIN IMMEDIATE
	r    *sql.DB // readers
	// turns admits the heavy part of searches (read transactions, vector scans), ReadConns at a time, in
	// arrival order (a channel's waiters are served first come, first served). More at once would not
	// finish sooner on a few cores, would turn every mutex underneath (database/sql's pool, SQLite's
	// allocator) into a convoy, and database/sql hands a freed connection to a random waiter, which
	// under load left some searches waiting for seconds.
	turns chan struct{}
	// waiting counts the searches waiting for a turn: while none waits, a vector pass may use several
	// cores.
	waiting atomic.Int64
	rstmts  stmtCache
	// wstmts are the writer's hot statements (CommitVersions), prepared once on its one connection.
	wstmts stmtCache
	// q is the pool of point lookups (hits, the vector cache's counters and loads), so that they do not
	// queue behind keyword queries that take milliseconds.
	q      *sql.DB
	qstmts stmtCache
	vecs   *vectorCache
	hitc   hitCache
	docm   docMemState
	terms  termStats
	kw     keywordIndex
	merger merger
	// keywordBudget is essentialBudget; tests lower it to reach the pruning rounds on small corpora.
	keywordBudget int64

	pruneMu   sync.Mutex
	lastPrune time.Time
}

var _ rag.Store = (*Store)(nil)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Open opens (creating if needed) the store at path and applies pending migrations. path is a directory
// (the database is FileName inside it, the directory is created) or a file path ending in .db, .sqlite or
// .sqlite3.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	file, err := resolvePath(path)
	if err != nil {
		return nil, err
	}
	busy := strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	common := "_pragma=busy_timeout(" + busy + ")&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)"
	// secure_delete: what a write deletes (a purged document's rows, its blob) is overwritten with zeros
	// rather than left readable in free pages of the file (docs/security.md "Deletion").
	w, err := sql.Open("sqlite", file+"?"+common+"&_txlock=immediate&_pragma=secure_delete(1)")
	if err != nil {
		return nil, rag.WrapError(rag.CodeDBError, err, "cannot open the database")
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{path: file, opts: opts, w: w, keywordBudget: essentialBudget}
	// The file must be in WAL mode before readers open it and migrations run.
	if err := s.enableWAL(ctx); err != nil {
		w.Close()
		return nil, rag.WrapError(rag.CodeDBError, err, "cannot open the database %s%s", file, writeProblem(file))
	}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if err := s.opts.Keys.CheckStore(ctx, s.DataKeyIDs); err != nil {
		w.Close()
		return nil, err
	}
	if err := s.indexMissingDocuments(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if err := s.reindexTerms(ctx); err != nil {
		w.Close()
		return nil, err
	}
	s.wstmts.db = s.w
	for _, q := range writerStatements {
		if _, err := s.wstmts.get(ctx, q); err != nil {
			s.wstmts.close()
			w.Close()
			return nil, dbError(err, "prepare statements")
		}
	}
	// Reads outside read transactions (documents, collections, blobs) do not take a turn: the pool has
	// room for them beside ReadConns transactions.
	s.r = readPool(file, common, opts.ReadConns+spareConns)
	s.turns = make(chan struct{}, opts.ReadConns)
	s.rstmts.db = s.r
	s.q = readPool(file, common, quickConns)
	s.qstmts.db = s.q
	s.vecs = newVectorCache(s)
	s.hitc.budget = opts.HitCacheBytes
	s.terms.changed = s.kickMerge
	s.kw.start()
	s.startMerger()
	return s, nil
}

const (
	// spareConns is the read pool's room for reads that are not read transactions.
	spareConns = 4
	// quickConns is the size of the point-lookup pool. A lookup holds a connection for tens of
	// microseconds; several keep one from waiting for another whose goroutine the scheduler has paused.
	quickConns = 8
)

// readPool opens a pool of n read-only connections, kept open.
func readPool(file, common string, n int) *sql.DB {
	// sql.Open only validates its arguments, which Open has already used for the writer.
	db, _ := sql.Open("sqlite", file+"?"+common+"&_pragma=query_only(1)")
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(0)
	return db
}

// stmtCache prepares statements of fixed SQL text once per pool (database/sql then keeps one prepared
// copy per connection), so that hot queries are not parsed again each time. Only constant SQL goes here,
// never text built from a caller's filter, so the set stays small.
type stmtCache struct {
	db *sql.DB
	m  sync.Map // SQL text → *sql.Stmt; read without a lock on every query
	mu sync.Mutex
}

func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.m.Store(query, st)
	return st, nil
}

// inTx returns query's cached statement bound to tx, or query prepared in tx when it was not prepared
// beforehand (get cannot prepare it then on a pool whose one connection tx holds).
func (c *stmtCache) inTx(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st, ok := c.m.Load(query); ok {
		return tx.StmtContext(ctx, st.(*sql.Stmt)), nil
	}
	return tx.PrepareContext(ctx, query)
}

// tx returns the cached statement for query bound to tx.
func (c *stmtCache) tx(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	st, err := c.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st), nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m.Range(func(k, st any) bool {
		st.(*sql.Stmt).Close()
		c.m.Delete(k)
		return true
	})
}

// enableWAL switches the file to WAL (a persistent setting). Switching takes an exclusive lock and fails
// with SQLITE_BUSY, without waiting, while another connection opens the new file at the same time (two
// processes starting together), so it is retried within the busy timeout.
func (s *Store) enableWAL(ctx context.Context) error {
	deadline := time.Now().Add(s.opts.BusyTimeout)
	for {
		var mode string
		err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode)
		if err == nil {
			if !strings.EqualFold(mode, "wal") {
				return fmt.Errorf("journal mode is %s, not wal", mode)
			}
			return nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

// writeProblem says why the database file cannot be written, when that is why it cannot be opened: SQLite
// itself reports only "unable to open database file" (a data directory the user cannot write, a read-only
// mount, a full disk). It returns "" when the directory and the file are writable.
func writeProblem(file string) string {
	describe := func(err error) string {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return fmt.Sprintf(": %s (%s)", pe.Err, pe.Path)
		}
		return ": " + err.Error()
	}
	probe, err := os.CreateTemp(filepath.Dir(file), ".ragd-write-check-*")
	if err != nil {
		return describe(err)
	}
	probe.Close()
	os.Remove(probe.Name())
	if f, err := os.OpenFile(file, os.O_RDWR, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return describe(err)
	}
	return ""
}

func resolvePath(path string) (string, error) {
	if path == "" {
		return "", rag.Errorf(rag.CodeInvalid, "no database path")
	}
	if strings.ContainsAny(path, "?#") {
		return "", rag.Errorf(rag.CodeInvalid, "database path %q contains ? or #", path)
	}
	st, err := os.Stat(path)
	isFile := err == nil && !st.IsDir()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", rag.WrapError(rag.CodeDBError, err, "cannot open the data directory")
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".db", ".sqlite", ".sqlite3":
		if err != nil { // a new database file
			isFile = true
		}
	}
	if isFile {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", rag.WrapError(rag.CodeDBError, err, "cannot create the data directory")
		}
		return path, nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return "", rag.WrapError(rag.CodeDBError, err, "cannot create the data directory")
	}
	return filepath.Join(path, FileName), nil
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Close closes the pools and drops the vector cache.
func (s *Store) Close() error {
	s.stopMerger()
	s.kw.stop()
	s.vecs.close()
	s.vecs.drop()
	s.qstmts.close()
	s.rstmts.close()
	s.wstmts.close()
	err := s.q.Close()
	if err2 := s.r.Close(); err == nil {
		err = err2
	}
	if err2 := s.w.Close(); err == nil {
		err = err2
	}
	if err != nil {
		return rag.WrapError(rag.CodeDBError, err, "cannot close the database")
	}
	return nil
}

func migrations() []migration.Migration { return migration.Embedded(migrationFS, "migrations") }

// LatestMigration is the number of the newest embedded migration.
func LatestMigration() int { return migration.Latest(migrations()) }

// migrate applies each pending migration in its own transaction together with its schema_migrations row;
// the write lock taken by BEGIN IMMEDIATE makes concurrent openers (other processes) apply each only once.
func (s *Store) migrate(ctx context.Context) error {
	ms := migrations()
	if err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`)
		return err
	}); err != nil {
		return dbError(err, "create schema_migrations")
	}
	for _, m := range ms {
		err := s.write(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, s.now().UnixMicro())
			return err
		})
		if err != nil {
			return dbError(err, "apply migration %s", m.Name)
		}
	}
	return nil
}

// Ping checks that the database answers and that every embedded migration is applied.
func (s *Store) Ping(ctx context.Context) error {
	var v int
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return dbError(err, "ping")
	}
	if want := LatestMigration(); v < want {
		return rag.Errorf(rag.CodeDBError, "database schema is at migration %d, want %d", v, want)
	}
	return nil
}

// StoreSize reports the bytes of the database file's pages, free pages included (rag.StoreSizer): what the
// file takes once the write-ahead log is checkpointed.
func (s *Store) StoreSize(ctx context.Context) (int64, error) {
	var n int64
	if err := s.r.QueryRowContext(ctx, `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`).Scan(&n); err != nil {
		return 0, dbError(err, "store size")
	}
	return n, nil
}

// write runs fn in a write transaction (BEGIN IMMEDIATE on the single writer connection).
func (s *Store) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// turn waits for a turn (see Store.turns); endTurn ends it.
func (s *Store) turn(ctx context.Context) error {
	select {
	case s.turns <- struct{}{}:
		return nil
	default:
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case s.turns <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) endTurn() { <-s.turns }

// read runs fn in a read transaction, so that its statements see one snapshot, when its turn comes.
func (s *Store) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := s.turn(ctx); err != nil {
		return err
	}
	defer s.endTurn()
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *Store) now() time.Time { return time.UnixMicro(s.opts.Clock().UnixMicro()).UTC() }

func fromMicro(v int64) time.Time { return time.UnixMicro(v).UTC() }

// isFull reports SQLITE_FULL ("database or disk is full") and ENOSPC: a write that found no room.
func isFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "database or disk is full")
}

// dbError turns err into what Store methods return: sentinels and *rag.Error pass through (wrapped with
// context), unique violations become ErrConflict, everything else is CodeDBError.
func dbError(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	msg := fmt.Sprintf(format, args...)
	var re *rag.Error
	switch {
	case errors.As(err, &re), errors.Is(err, rag.ErrNotFound), errors.Is(err, rag.ErrConflict):
		return fmt.Errorf("%s: %w", msg, err)
	case isUnique(err):
		return fmt.Errorf("%s: %w", msg, rag.ErrConflict)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return rag.WrapError(rag.CodeDBError, err, "%s: %v", msg, err)
	case isFull(err):
		return rag.WrapError(rag.CodeDBError, err, "database error: %s: the disk is full", msg)
	}
	return rag.WrapError(rag.CodeDBError, err, "database error: %s", msg)
}

func isUnique(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code()
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// newID returns a random UUID (version 4) string.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func marshalJSON(v any, empty string) (string, error) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return empty, nil
		}
	case []string:
		if len(x) == 0 {
			return empty, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", rag.WrapError(rag.CodeInvalid, err, "value cannot be stored as JSON")
	}
	return string(b), nil
}

func unmarshalMap(s string) (map[string]any, error) {
	if s == "" || s == "{}" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, err
	}
	return m, nil
}

func unmarshalStrings(s string) ([]string, error) {
	if s == "" || s == "[]" {
		return nil, nil
	}
	var l []string
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, err
	}
	return l, nil
}

// placeholders returns "?, ?, …" for n values.
func placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
