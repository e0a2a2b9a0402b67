-- Admins' reads and the background jobs' reads under an explicit policy (docs/security.md "Who runs what"):
-- every read of a row-secured table now runs as the reader role, which owns nothing and cannot bypass the
-- policies. A non-admin principal is admitted by ragd_visible (0014, 0019); an admin — an admin key, the
-- local operator of the CLI, a background job — by ragd_admin, when its transaction says
-- set_config('ragd.scope', 'admin', true). A transaction that names neither sees no row. The owner (the
-- role that migrates) only writes and keeps the jobs' work lists.
DO $do$
DECLARE t text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
        WHERE c.relnamespace = to_regnamespace($s${S}$s$) AND p.polname = 'ragd_visible' LOOP
        EXECUTE format($p$CREATE POLICY ragd_admin ON %1$s.%2$I FOR SELECT USING (%1$s.rls_text('ragd.scope') = 'admin')$p$,
            $s${S}$s$, t);
    END LOOP;
END $do$;
