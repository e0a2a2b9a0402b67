package postgres

import (
	"context"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ragd/ragd/internal/rag"
)

// Row-level security (migration 0014, docs/security.md): the tables holding documents, versions, passages,
// postings and vectors have policies that admit a row only when its document is visible to the principal
// named in the transaction-local settings ragd.principal, ragd.readers, ragd.names and ragd.groups. The
// policies bind roles that neither own the tables nor have BYPASSRLS; ragd's own role owns them (it ran the
// migrations) and is not bound, so the reads of a non-admin principal switch to Options.ReaderRole for
// their transaction (SET LOCAL ROLE, through set_config). Those reads keep their SQL predicate; the policy
// is the second wall that still holds when a query forgets it.

// roleName is what Options.ReaderRole accepts: an unquoted PostgreSQL identifier.
var roleName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// querier is what a read runs its statements on: the pool, or the transaction of a row-secured read.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// read runs fn, the statements of a read for p. With row-level security on and p not an admin, they run
// in one transaction as the reader role with p named for the policies; otherwise on the pool. fn must
// consume its rows before it returns.
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

// rowSecured says whether p's reads run under the row-level security policies.
func (s *Store) rowSecured(p rag.Principal) bool { return s.opts.ReaderRole != "" && !p.Admin }

// ownRows is the reader of a principal's own rows (its ratings, its conversations), which are read by its
// ID alone: the principal as a non-admin, so that the read runs under the policies; the whole store's
// (LocalPrincipal, not row-secured) when id is "" (an admin's export of everyone's).
func ownRows(id string) rag.Principal {
	if id == "" {
		return rag.LocalPrincipal
	}
	return rag.Principal{ID: id}
}

// becomeReader switches tx to the reader role and names p in the settings the policies read, all local to
// tx; a no-op when p's reads are not row-secured.
func (s *Store) becomeReader(ctx context.Context, tx pgx.Tx, p rag.Principal) error {
	if !s.rowSecured(p) {
		return nil
	}
	_, err := tx.Exec(ctx, `SELECT set_config('ragd.principal', $1, true), set_config('ragd.readers', $2::text[]::text, true),
		set_config('ragd.names', $3::text[]::text, true), set_config('ragd.groups', $4::text[]::text, true),
		set_config('role', $5, true)`, p.ID, p.Readers(), p.Names(), nonNil(p.Groups), s.opts.ReaderRole)
	if err != nil {
		return fmt.Errorf("row security: become %s: %w", s.opts.ReaderRole, err)
	}
	return nil
}

// setUpReader makes Options.ReaderRole usable: creates it (NOLOGIN) when it does not exist, refuses one that
// would not be bound by the policies (a superuser, or one with BYPASSRLS), makes the connecting role a
// member of it, and grants it read access to the schema. Each step that the connecting role may not take
// fails with the statement an operator runs instead. Serialised with the migrations by their lock.
func (s *Store) setUpReader(ctx context.Context) error {
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
			"; REVOKE ALL ON {S}.api_keys, {S}.audit_log, {S}.webhooks, {S}.webhook_deliveries FROM "+role)); err != nil {
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

// secureSpaceTable puts a new embedding space's table under the policy of migration 0014 (a vector is
// visible when its chunk is) and, with row security on, lets the reader role read it.
func (s *Store) secureSpaceTable(ctx context.Context, tx pgx.Tx, sp *space) error {
	name := fmt.Sprintf("vectors_%d", sp.id)
	stmt := fmt.Sprintf(`ALTER TABLE %[1]s ENABLE ROW LEVEL SECURITY;
		DROP POLICY IF EXISTS ragd_visible ON %[1]s;
		CREATE POLICY ragd_visible ON %[1]s FOR SELECT USING (EXISTS (SELECT 1 FROM {S}.chunks c WHERE c.id = %[2]s.chunk_id))`,
		sp.table, name)
	if s.opts.ReaderRole != "" {
		stmt += fmt.Sprintf(`; GRANT SELECT ON %s TO %s`, sp.table, pgx.Identifier{s.opts.ReaderRole}.Sanitize())
	}
	if _, err := tx.Exec(ctx, s.q(stmt)); err != nil {
		return fmt.Errorf("secure space table: %w", err)
	}
	return nil
}
