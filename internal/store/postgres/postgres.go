package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	pgxvec "github.com/pgvector/pgvector-go/pgx"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/sealing"
)

// BulkMode says how the store writes many rows at once.
type BulkMode string

// Bulk modes. BulkAuto uses COPY on a native server and multi-row INSERT on PGlite, whose socket server
// breaks on COPY.
const (
	BulkAuto   BulkMode = ""
	BulkCopy   BulkMode = "copy"
	BulkInsert BulkMode = "insert"
)

// Options configures a Store. The zero value is usable: see WithDefaults.
type Options struct {
	// Schema holds ragd's tables (default "public"). Every statement names it, so stores in different
	// schemas can share a database, or a PGlite session, without touching search_path.
	Schema string
	// NoMigrate makes Open fail (rather than migrate) when the schema is behind, for deployments where only
	// `ragd migrate` may change the schema.
	NoMigrate bool
	// HNSWM and HNSWEfConstruction are the parameters of the HNSW index of every new embedding space
	// (defaults 16 and 128). Changing them does not rebuild existing indexes.
	HNSWM              int
	HNSWEfConstruction int
	// EfSearch is hnsw.ef_search for vector searches: the size of the candidate list the index keeps,
	// traded against latency. Raised to K when K is larger. 0 (default): DefaultEfSearch of the searched
	// space's embedder.
	EfSearch int
	// MaxScanTuples bounds pgvector's iterative index scan for filtered searches (hnsw.max_scan_tuples,
	// default 20000, pgvector's own default).
	MaxScanTuples int
	// ExactBelow is the number of chunks at or under which a filtered vector search compares every matching
	// vector instead of walking the HNSW graph (default 2000): exact is then both faster and complete.
	ExactBelow int
	// Bulk chooses COPY or multi-row INSERT for bulk rows (default: detect PGlite).
	Bulk BulkMode
	// Clock gives the time of writes (default time.Now).
	Clock rag.Clock
	// Logger receives the store's rare notices (default slog.Default()).
	Logger *slog.Logger
	// Keys seals the blobs and chunk texts written and opens those read (nil: written in the clear). Open
	// refuses a database holding data sealed with a key Keys lacks.
	Keys *sealing.Keyring
	// ReaderRole turns on row-level security for reads (docs/security.md): the reads of a non-admin
	// principal run as this role, which the policies of migration 0014 bind, with the principal named in
	// transaction-local settings. Open creates the role when it is missing and the connecting role may, and
	// grants it SELECT on the schema. "" (default): reads run as the connecting role, which owns the tables
	// and is not bound.
	ReaderRole string
	// KeywordIndexMin is the chunk count from which keyword candidates come from an in-memory copy of the
	// postings (kwindex.go) instead of the MaxScore statement (default 10,000; negative: never), the
	// embedded store's setting (RAGD_KEYWORD_INDEX_MIN). Each process holds its own copy.
	KeywordIndexMin int
	// ReaderOptional: when ReaderRole cannot be set up (ragd's role may not create it or join it, or it is
	// a superuser), Open logs once, at warning level, why and the SQL an operator runs, and reads without
	// row security instead of failing (RAGD_PG_ROW_SECURITY=auto). RowSecurity tells which happened.
	ReaderOptional bool
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.Schema == "" {
		o.Schema = "public"
	}
	if o.HNSWM == 0 {
		o.HNSWM = 16
	}
	if o.HNSWEfConstruction == 0 {
		o.HNSWEfConstruction = 128
	}
	if o.MaxScanTuples == 0 {
		o.MaxScanTuples = 20000
	}
	if o.ExactBelow == 0 {
		o.ExactBelow = 2000
	}
	if o.KeywordIndexMin == 0 {
		o.KeywordIndexMin = 10_000
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.HNSWM < 2 || o.HNSWM > 100:
		return rag.Errorf(rag.CodeInvalid, "hnsw m must be between 2 and 100, not %d", o.HNSWM)
	case o.HNSWEfConstruction < 2*o.HNSWM || o.HNSWEfConstruction > 1000:
		return rag.Errorf(rag.CodeInvalid, "hnsw ef_construction must be between 2·m and 1000, not %d", o.HNSWEfConstruction)
	case o.EfSearch < 0 || o.EfSearch > 1000:
		return rag.Errorf(rag.CodeInvalid, "hnsw ef_search must be between 1 and 1000, not %d", o.EfSearch)
	case o.MaxScanTuples < 1:
		return rag.Errorf(rag.CodeInvalid, "hnsw max_scan_tuples must be positive, not %d", o.MaxScanTuples)
	case o.Bulk != BulkAuto && o.Bulk != BulkCopy && o.Bulk != BulkInsert:
		return rag.Errorf(rag.CodeInvalid, "bulk mode must be copy or insert, not %q", o.Bulk)
	case o.ReaderRole != "" && !roleName.MatchString(o.ReaderRole):
		return rag.Errorf(rag.CodeInvalid, "reader role %q must be a plain role name (letters, digits, _; at most 63)", o.ReaderRole)
	}
	return nil
}

// Store is the PostgreSQL implementation of rag.Store. It is safe for concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	opts      Options
	sql       *strings.Replacer
	vecSchema string
	pglite    bool
	iterative bool // pgvector ≥ 0.8: iterative index scans
	bulk      BulkMode

	mu     sync.Mutex
	spaces map[string]*space // by Space.ID()

	kw keywordIndex
}

var _ rag.Store = (*Store)(nil)

// Open connects to the PostgreSQL database at url (a postgres:// URL or DSN; pgxpool settings such as
// pool_max_conns are honoured), applies pending migrations unless opts.NoMigrate, and returns the store.
// On PGlite (detected from version()) it uses one connection without named prepared statements.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	opts = opts.WithDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	pool, pglite, err := newPool(ctx, url)
	if err != nil {
		return nil, err
	}
	s := &Store{pool: pool, opts: opts, pglite: pglite, spaces: map[string]*space{}}
	s.bulk = opts.Bulk
	if s.bulk == BulkAuto {
		s.bulk = BulkCopy
		if s.pglite {
			s.bulk = BulkInsert
		}
	}
	if !opts.NoMigrate {
		if _, err := migrate(ctx, pool, opts.Schema, embeddedMigrations(), true); err != nil {
			pool.Close()
			return nil, err
		}
		pool.Reset() // connections made before the extension existed lack the vector codec
	}
	var extVersion string
	if err := pool.QueryRow(ctx, `SELECT n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
		WHERE e.extname = 'vector'`).Scan(&s.vecSchema, &extVersion); err != nil {
		pool.Close()
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, rag.WrapError(rag.CodeDBError, ErrVector, "the vector extension is not created in this database: run `ragd migrate`")
		}
		return nil, interpretError(fmt.Errorf("open: find vector schema: %w", err))
	}
	s.iterative = !versionLess(extVersion, "0.8.0")
	s.sql = replacer(opts.Schema, s.vecSchema)
	if err := s.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if !opts.NoMigrate {
		if err := s.opts.Keys.CheckStore(ctx, s.DataKeyIDs); err != nil {
			pool.Close()
			return nil, err
		}
		if err := s.indexMissingDocuments(ctx); err != nil {
			pool.Close()
			return nil, err
		}
		if err := s.reindexTerms(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if opts.ReaderRole != "" {
		if err := s.setUpReader(ctx); err != nil {
			if !opts.ReaderOptional || ctx.Err() != nil {
				pool.Close()
				return nil, err
			}
			s.opts.Logger.Warn("PostgreSQL row-level security is off: "+err.Error()+
				"; then restart ragd (RAGD_PG_ROW_SECURITY=off runs without it and drops this warning; docs/security.md)",
				"reader_role", opts.ReaderRole)
			s.opts.ReaderRole = ""
		}
	}
	s.kw.start()
	return s, nil
}

// RowSecurity returns the role a non-admin principal's reads run as under the row-level security policies,
// or "" when they run as the connecting role (Options.ReaderRole unset, or not set up under ReaderOptional).
func (s *Store) RowSecurity() string { return s.opts.ReaderRole }

// newPool makes a pool whose connections know the vector types. PGlite multiplexes every connection onto
// one session, so there the pool is cut to one connection and named prepared statements are turned off
// whatever the URL says.
func newPool(ctx context.Context, url string) (pool *pgxpool.Pool, pglite bool, err error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, false, rag.WrapError(rag.CodeInvalid, err, "invalid database URL")
	}
	cfg.AfterConnect = registerVectorTypes
	probe, err := pgx.ConnectConfig(ctx, cfg.ConnConfig.Copy())
	if err != nil {
		return nil, false, rag.WrapError(rag.CodeDBError, err, "cannot connect to PostgreSQL")
	}
	var version string
	err = probe.QueryRow(ctx, "SELECT version()").Scan(&version)
	probe.Close(ctx)
	if err != nil {
		return nil, false, interpretError(fmt.Errorf("open: version: %w", err))
	}
	pglite = strings.Contains(version, "PGlite")
	if pglite {
		cfg.MaxConns = 1
		cfg.MinConns = 0
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
	pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, false, rag.WrapError(rag.CodeDBError, err, "cannot connect to PostgreSQL")
	}
	return pool, pglite, nil
}

// registerVectorTypes teaches a new connection pgvector's binary formats, when the extension exists (it does
// not yet on a fresh database before the first migration; Open resets the pool afterwards).
func registerVectorTypes(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, `SELECT t.typname, t.oid, t.typarray FROM pg_type t
		JOIN pg_extension e ON e.extnamespace = t.typnamespace AND e.extname = 'vector'
		WHERE t.typname IN ('vector', 'halfvec')`)
	if err != nil {
		return fmt.Errorf("look up vector types: %w", err)
	}
	type vt struct {
		name     string
		oid, arr uint32
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (vt, error) {
		var v vt
		err := r.Scan(&v.name, &v.oid, &v.arr)
		return v, err
	})
	if err != nil {
		return fmt.Errorf("look up vector types: %w", err)
	}
	tm := conn.TypeMap()
	for _, v := range found {
		var codec pgtype.Codec = &pgxvec.VectorCodec{}
		if v.name == "halfvec" {
			codec = &pgxvec.HalfVectorCodec{}
		}
		t := &pgtype.Type{Name: v.name, OID: v.oid, Codec: codec}
		tm.RegisterType(t)
		tm.RegisterType(&pgtype.Type{Name: "_" + v.name, OID: v.arr, Codec: &pgtype.ArrayCodec{ElementType: t}})
	}
	return nil
}

// Pool returns the store's connection pool, for the background jobs (internal/jobs), which keep their tables
// in the same database and must share the pool: on PGlite it is the one connection there is. The store still
// owns it: Close closes it.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Schema returns the schema that holds the store's tables (Options.Schema).
func (s *Store) Schema() string { return s.opts.Schema }

// Close releases the store's connections.
func (s *Store) Close() error {
	s.kw.stop()
	s.pool.Close()
	return nil
}

// Ping checks that the database answers and that its schema has every embedded migration.
func (s *Store) Ping(ctx context.Context) error {
	var v *int
	if err := s.pool.QueryRow(ctx, s.q("SELECT max(version) FROM {S}.schema_migrations")).Scan(&v); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return rag.WrapError(rag.CodeDBError, err, "the database schema is not migrated: run `ragd migrate`")
		}
		return interpretError(fmt.Errorf("ping: %w", err))
	}
	if v == nil || *v < latestVersion {
		return rag.Errorf(rag.CodeDBError, "the database schema is behind this ragd: run `ragd migrate`")
	}
	return nil
}

// q substitutes the schema names into a statement.
func (s *Store) q(sql string) string { return s.sql.Replace(sql) }

// now is the time of a write, at the database's precision so that what is returned equals what is read back.
func (s *Store) now() time.Time { return s.opts.Clock().UTC().Truncate(time.Microsecond) }

// StoreSize reports the bytes of the store schema's tables with their indexes and TOAST data
// (rag.StoreSizer): pg_total_relation_size of each.
func (s *Store) StoreSize(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'm', 'p')`, s.opts.Schema).Scan(&n)
	if err != nil {
		return 0, interpretError(fmt.Errorf("store size: %w", err))
	}
	return n, nil
}

// interpretError maps database errors to the store's: no rows is rag.ErrNotFound, a unique violation
// rag.ErrConflict, a foreign key violation rag.ErrNotFound (what was referred to is gone), anything else an
// *rag.Error with CodeDBError. Errors that already are *rag.Error pass unchanged.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	var re *rag.Error
	if errors.As(err, &re) {
		return err
	}
	if errors.Is(err, rag.ErrNotFound) || errors.Is(err, rag.ErrConflict) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w (%v)", rag.ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return fmt.Errorf("%w: %s", rag.ErrConflict, pgErr.ConstraintName)
		case "23503":
			return fmt.Errorf("%w: %s", rag.ErrNotFound, pgErr.ConstraintName)
		case "53100": // disk_full
			return rag.WrapError(rag.CodeDBError, err, "database error: the database server's disk is full")
		}
	}
	return rag.WrapError(rag.CodeDBError, err, "database error")
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.inTxWith(ctx, pgx.TxOptions{}, fn)
}

// inSnapshotTx runs fn in a REPEATABLE READ transaction: every statement of fn sees the same snapshot, as a
// read that plans its second statement from the figures of its first needs (under READ COMMITTED a version
// committed between the two statements would be seen by the second only).
func (s *Store) inSnapshotTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.inTxWith(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, fn)
}

func (s *Store) inTxWith(ctx context.Context, opts pgx.TxOptions, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.BeginTx(ctx, opts)
	if err != nil {
		return interpretError(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return interpretError(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return interpretError(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// statsSlot is the corpus_stats row a document's chunks are counted in.
func statsSlot(documentID string) int32 {
	h := fnv.New32a()
	h.Write([]byte(documentID))
	return int32(h.Sum32() % 16)
}
