package cli

import (
	"strings"
	"testing"
)

// TestAccessCommands: teams, users, keys and collections with an owner through the CLI, their listings,
// and the exit codes of bad calls.
func TestAccessCommands(t *testing.T) {
	data := t.TempDir()
	ok := func(want string, args ...string) string {
		t.Helper()
		code, out, errOut := run(t, append(args, "--data-dir", data)...)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("ragd %s: exit %d, %q (want %q)\n%s", strings.Join(args, " "), code, out, want, errOut)
		}
		return out
	}
	fails := func(code int, want string, args ...string) {
		t.Helper()
		got, out, errOut := run(t, append(args, "--data-dir", data)...)
		if got != code || !strings.Contains(errOut, want) {
			t.Errorf("ragd %s: exit %d %q %q, want %d and %q", strings.Join(args, " "), got, out, errOut, code, want)
		}
	}
	ok("team eng added", "teams", "add", "eng")
	ok("user olive added to team eng (admin)", "users", "add", "olive", "--team", "eng", "--role", "admin")
	ok("user mina added", "users", "add", "mina")
	ok("user mina is in team eng (member)", "teams", "join", "eng", "mina")
	ok("user mina is admin of team eng", "teams", "role", "eng", "mina", "admin")
	ok("mina   admin", "teams", "members", "eng")
	ok("user mina is member of team eng", "teams", "role", "eng", "mina", "member")
	ok("olive  admin", "teams", "members", "eng")
	ok("eng   2", "teams", "list")
	key := strings.TrimSpace(ok("ragd_", "keys", "create", "--user", "olive", "--scopes", "read,write", "--expires", "24h"))
	if strings.ContainsAny(key, " \n") || len(key) != 17+1+43 {
		t.Fatalf("keys create printed %q, not a key alone", key)
	}
	list := ok(key[:17], "keys", "list")
	if strings.Contains(list, key) || !strings.Contains(list, "read,write") || !strings.Contains(list, "expires") {
		t.Errorf("keys list:\n%s", list)
	}
	ok("key "+key[:17]+" of user olive revoked", "keys", "revoke", key)
	ok("revoked", "keys", "list")
	// Both are in the audit log, as the local operator from the CLI, with the key's prefix (never the key).
	for _, action := range []string{"key.created", "key.revoked"} {
		out := ok(key[:17], "audit", "--action", action, "--json")
		if !strings.Contains(out, `"principal": "local"`) || !strings.Contains(out, `"client": "cli"`) || strings.Contains(out, key) {
			t.Errorf("ragd audit --action %s:\n%s", action, out)
		}
	}
	ok("user mina disabled", "users", "disable", "mina")
	if out := ok("mina", "users", "list"); !strings.Contains(out, "disabled") || !strings.Contains(out, "eng") {
		t.Errorf("users list:\n%s", out)
	}
	ok("collection handbook created (owner team:eng, team)", "collections", "create", "handbook", "--owner", "team:eng", "--visibility", "team")

	ok("collection handbook: owner user:olive, team", "collections", "access", "handbook", "--owner", "user:olive")
	ok("collection handbook: owner user:olive, public", "collections", "access", "handbook", "--visibility", "public")
	fails(2, "needs --owner or --visibility", "collections", "access", "handbook")
	fails(1, "not found", "collections", "access", "nothing", "--visibility", "team")

	fails(1, "conflict", "users", "add", "olive")
	ok("team qa added", "teams", "add", "qa")
	ok("user olive is in team qa (member)", "teams", "join", "qa", "olive")
	ok("user olive removed from team qa", "teams", "remove", "qa", "olive")
	if out := ok("TEAM", "teams", "list"); !strings.Contains(out, "qa    0") {
		t.Errorf("teams list after the removal:\n%s", out)
	}
	fails(1, "not found", "teams", "remove", "qa", "olive")
	fails(1, "not found", "teams", "role", "qa", "olive", "admin")
	fails(1, "invalid", "teams", "role", "eng", "olive", "owner")
	fails(1, "not found", "users", "add", "zed", "--team", "ops")
	fails(1, "not found", "keys", "create", "--user", "zed")
	fails(1, "not found", "keys", "revoke", "ragd_ffffffffffff")
	ok("ragd keys revoke: not_found", "audit", "--action", "key.revoked", "--outcome", "failed", "--json")
	fails(1, "not found", "collections", "create", "x", "--owner", "team:ops")
	fails(1, "already exists", "collections", "create", "handbook", "--owner", "team:eng")
	fails(2, "unknown scope", "keys", "create", "--user", "olive", "--scopes", "root")
	fails(2, "needs --user", "keys", "create")
	fails(2, "private, team or public", "collections", "create", "y", "--visibility", "world")
	fails(2, "user:NAME or team:NAME", "collections", "create", "y", "--owner", "olive")
	fails(2, "did you mean", "users", "ad", "x")
	fails(2, "takes 1 argument", "teams", "add")
	if code, _, _ := run(t, "users", "list", "--data-dir", data, "--json"); code != 0 {
		t.Errorf("users list --json: exit %d", code)
	}
}
