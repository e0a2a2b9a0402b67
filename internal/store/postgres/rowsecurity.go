package postgres

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ragd/ragd/internal/rag"
)

// Row-level security (migrations 0014, 0019, 0024; docs/security.md): the tables holding documents,
// versions, passages, postings, vectors, graphs, boards and a principal's own rows have policies that admit
// a row only when it is visible to the principal named in the transaction-local settings ragd.principal,
// ragd.readers, ragd.names and ragd.groups (ragd_visible), or when the transaction says it reads for an
// admin, ragd.scope = 'admin' (ragd_admin). The policies bind roles that neither own the tables nor have
// BYPASSRLS; ragd's connecting role owns them (it ran the migrations) and is not bound, so every read goes
// through read/becomeReader, which switch its transaction to Options.ReaderRole (SET LOCAL ROLE, through
// set_config) — a non-admin's and an admin's (an admin key, the CLI's local operator, a background job)
// alike. Those reads keep their SQL predicate; the policy is the second wall that still holds when a query
// forgets it. The owner writes, and reads only inside its writes and for the jobs' work lists.

// roleName is what Options.ReaderRole accepts: an unquoted PostgreSQL identifier.
var roleName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// querier is what a read runs its statements on: the pool, or the transaction of a row-secured read.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// read runs fn, the statements of a read for p. With row-level security on, they run in one transaction as
// the reader role with p named for the policies (an admin by the admin scope); otherwise on the pool. fn
// must consume its rows before it returns.
func (s *Store) read(ctx context.Context, p rag.Principal, fn func(q querier) error) error {
	if !s.rowSecured(p) {
		return interpretError(fn(s.pool))
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.becomeReader(ctx, tx, p); err != nil {
			return err
		}
		return fn(tx)
	})
}

// rowSecured says whether p's reads run under the row-level security policies: all of them, when they are
// on (an admin's under ragd_admin, migration 0024).
func (s *Store) rowSecured(rag.Principal) bool { return s.opts.ReaderRole != "" }

// ownRows is the reader of a principal's own rows (its ratings, its conversations), which are read by its
// ID alone: the principal as a non-admin, so that the read runs under ragd_visible; the whole store's
// (LocalPrincipal, under ragd_admin) when id is "" (an admin's export of everyone's).
func ownRows(id string) rag.Principal {
	if id == "" {
		return rag.LocalPrincipal
	}
	return rag.Principal{ID: id}
}

// becomeReader switches tx to the reader role and names p in the settings the policies read — an admin
// by ragd.scope alone, with no principal — all local to tx; a no-op when row security is off.
func (s *Store) becomeReader(ctx context.Context, tx pgx.Tx, p rag.Principal) error {
	if !s.rowSecured(p) {
		return nil
	}
	id, readers, names, groups, scope := p.ID, p.Readers(), p.Names(), nonNil(p.Groups), ""
	if p.Admin {
		id, readers, names, groups, scope = "", nil, nil, nil, "admin"
	}
	_, err := tx.Exec(ctx, `SELECT set_config('ragd.principal', $1, true), set_config('ragd.readers', coalesce($2::text[]::text, ''), true),
		set_config('ragd.names', coalesce($3::text[]::text, ''), true), set_config('ragd.groups', coalesce($4::text[]::text, ''), true),
		set_config('ragd.scope', $5, true), set_config('role', $6, true)`, id, readers, names, groups, scope, s.opts.ReaderRole)
	if err != nil {
		return fmt.Errorf("row security: become %s: %w", s.opts.ReaderRole, err)
	}
	return nil
}

// setUpReader makes Options.ReaderRole usable: creates it (NOLOGIN) when it does not exist, refuses one that
// would not be bound by the policies (a superuser, or one with BYPASSRLS), makes the connecting role a
// member of it, and grants it read access to the schema. Each step that the connecting role may not take
// fails with the statement an operator runs instead. Serialised with the migrations by their lock. When the
// catalog already shows all of that (readerReady: every start after the first, and every CLI command), it
// takes no lock and runs no DDL.
func (s *Store) setUpReader(ctx context.Context) error {
	if ready, err := s.readerReady(ctx); err != nil || ready {
		return err
	}
	role := pgx.Identifier{s.opts.ReaderRole}.Sanitize()
	fail := func(err error, what string) error {
		return rag.WrapError(rag.CodeDBError, err, "row security (RAGD_PG_READER_ROLE=%s): %s", s.opts.ReaderRole, what)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLockKey); err != nil {
			return fmt.Errorf("row security: lock: %w", err)
		}
		var exists, super, bypass, member bool
		var user string
		err := tx.QueryRow(ctx, `SELECT r.rolname IS NOT NULL, coalesce(r.rolsuper, false), coalesce(r.rolbypassrls, false),
			r.rolname IS NOT NULL AND pg_has_role(current_user, r.oid, 'MEMBER'), current_user
			FROM (SELECT 1) one LEFT JOIN pg_roles r ON r.rolname = $1`, s.opts.ReaderRole).Scan(&exists, &super, &bypass, &member, &user)
		if err != nil {
			return fmt.Errorf("row security: look up role: %w", err)
		}
		if super || bypass {
			return rag.Errorf(rag.CodeInvalid, "row security: role %s is a superuser or has BYPASSRLS, so the policies would not bind it; use a plain role (CREATE ROLE %s NOLOGIN)", s.opts.ReaderRole, role)
		}
		if !exists {
			if _, err := tx.Exec(ctx, "CREATE ROLE "+role+" NOLOGIN"); err != nil {
				return fail(err, fmt.Sprintf("cannot create the role: run CREATE ROLE %s NOLOGIN; GRANT %s TO %s", role, role, pgx.Identifier{user}.Sanitize()))
			}
		}
		if !member {
			if _, err := tx.Exec(ctx, "GRANT "+role+" TO CURRENT_USER"); err != nil {
				return fail(err, fmt.Sprintf("cannot make %s a member of the role: run GRANT %s TO %s", user, role, pgx.Identifier{user}.Sanitize()))
			}
		}
		// Every table but the key hashes, the audit log and the webhooks (whose URLs may carry a receiver's
		// token), which no row-secured read touches.
		if _, err := tx.Exec(ctx, s.q("GRANT USAGE ON SCHEMA {S} TO "+role+"; GRANT SELECT ON ALL TABLES IN SCHEMA {S} TO "+role+
			"; REVOKE ALL ON "+refusedTables+" FROM "+role)); err != nil {
			return fail(err, "cannot grant the role read access to the schema (run ragd as the owner of its tables)")
		}
		// The vector operators live in the extension's schema (often public, whose USAGE every role has).
		var usage bool
		if err := tx.QueryRow(ctx, `SELECT has_schema_privilege($1, $2, 'USAGE')`, s.opts.ReaderRole, s.vecSchema).Scan(&usage); err != nil {
			return fmt.Errorf("row security: vector schema: %w", err)
		}
		if !usage {
			if _, err := tx.Exec(ctx, s.q("GRANT USAGE ON SCHEMA {V} TO "+role)); err != nil {
				return fail(err, fmt.Sprintf("cannot grant USAGE on the vector extension's schema %s", s.vecSchema))
			}
		}
		return nil
	})
}

// refusedTables are the tables the reader role may not read: the key hashes, the audit log and the
// webhooks (whose URLs may carry a receiver's token); no row-secured read touches them.
const refusedTables = "{S}.api_keys, {S}.audit_log, {S}.webhooks, {S}.webhook_deliveries"

// readerReady says whether Options.ReaderRole is already what setUpReader makes it, from the catalog alone:
// it exists, is neither a superuser nor BYPASSRLS, the connecting role is a member, and it has USAGE on the
// schema and the vector extension's schema, SELECT on every table of the schema but refusedTables, and
// nothing on those.
func (s *Store) readerReady(ctx context.Context) (bool, error) {
	var ready bool
	err := s.pool.QueryRow(ctx, s.q(`WITH r AS (SELECT oid FROM pg_roles WHERE rolname = $1 AND NOT rolsuper AND NOT rolbypassrls
			AND pg_has_role(current_user, oid, 'MEMBER')),
		refused AS (SELECT unnest(string_to_array($4, ', '))::regclass AS oid)
		SELECT EXISTS (SELECT 1 FROM r) AND (SELECT
			has_schema_privilege(r.oid, to_regnamespace($2), 'USAGE') AND has_schema_privilege(r.oid, to_regnamespace($3), 'USAGE')
			AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = to_regnamespace($2) AND c.relkind IN ('r', 'p')
				AND c.oid NOT IN (SELECT oid FROM refused) AND NOT has_table_privilege(r.oid, c.oid, 'SELECT'))
			AND NOT EXISTS (SELECT 1 FROM refused f WHERE has_table_privilege(r.oid, f.oid, 'SELECT,INSERT,UPDATE,DELETE'))
			FROM r)`), s.opts.ReaderRole, s.q("{S}"), s.q("{V}"), s.q(refusedTables)).Scan(&ready)
	if err != nil {
		return false, fmt.Errorf("row security: look up role: %w", err)
	}
	return ready, nil
}

// secureSpaceTable puts a new embedding space's table under the policies of migrations 0014 (a vector is
// visible when its chunk is) and 0024 (an admin's read sees all), and, with row security on, lets the reader role read it.
func (s *Store) secureSpaceTable(ctx context.Context, tx pgx.Tx, sp *space) error {
	name := fmt.Sprintf("vectors_%d", sp.id)
	stmt := fmt.Sprintf(`ALTER TABLE %[1]s ENABLE ROW LEVEL SECURITY;
		DROP POLICY IF EXISTS ragd_visible ON %[1]s;
		CREATE POLICY ragd_visible ON %[1]s FOR SELECT USING (EXISTS (SELECT 1 FROM {S}.chunks c WHERE c.id = %[2]s.chunk_id));
		DROP POLICY IF EXISTS ragd_admin ON %[1]s;
		CREATE POLICY ragd_admin ON %[1]s FOR SELECT USING ({S}.rls_text('ragd.scope') = 'admin')`,
		sp.table, name)
	if s.opts.ReaderRole != "" {
		stmt += fmt.Sprintf(`; GRANT SELECT ON %s TO %s`, sp.table, pgx.Identifier{s.opts.ReaderRole}.Sanitize())
	}
	if _, err := tx.Exec(ctx, s.q(stmt)); err != nil {
		return fmt.Errorf("secure space table: %w", err)
	}
	return nil
}
