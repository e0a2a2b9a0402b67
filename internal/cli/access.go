package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ragd/ragd/internal/access"
	"github.com/ragd/ragd/internal/app"
	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/rag"
)

// announceAccess stores the bootstrap admin key (RAGD_ADMIN_KEY) when the store has no key yet, and says
// at start-up whether the API needs keys or ragd is the single-user local tool.
func announceAccess(ctx context.Context, a *app.App) error {
	if role := a.RowSecurity(); role != "" {
		a.Logger.Info("PostgreSQL row-level security on: reads run as role "+role+" (admins by its admin policy)", slog.String("reader_role", role))
	}
	ps := a.Principals()
	if ps == nil {
		return nil
	}
	made, err := access.Bootstrap(ctx, ps, a.Config.AdminKey)
	if err != nil {
		return err
	}
	if made {
		a.Logger.Info("stored RAGD_ADMIN_KEY as an admin key of user " + access.BootstrapUser)
	}
	stored, err := ps.HasAPIKeys(ctx)
	if err != nil {
		return err
	}
	if len(a.Config.APIKeys) == 0 && !stored {
		a.Logger.Warn("no API keys configured or stored: single-user local mode, every request acts as the local admin " +
			"(set RAGD_ADMIN_KEY, or run ragd users add and ragd keys create, to require keys; docs/security.md)")
		return nil
	}
	a.Logger.Info("API keys required on /api/", slog.Int("configured_keys", len(a.Config.APIKeys)), slog.Bool("stored_keys", stored))
	return nil
}

// openPrincipals opens the app for a users, teams or keys command and returns its principal store.
func openPrincipals(ctx context.Context, env *Env, c *common) (*app.App, rag.PrincipalStore, error) {
	a, err := c.open(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	ps := a.Principals()
	if ps == nil {
		a.Close()
		return nil, nil, fmt.Errorf("this store keeps no users")
	}
	return a, ps, nil
}

// registerAccess binds the flags the users, teams and keys commands share.
func registerAccess(fs *flag.FlagSet, env *Env, c *common) {
	c.quiet = true
	c.register(fs, env)
	fs.StringVar(&c.cfg.DatabaseURL, "database-url", c.cfg.DatabaseURL, "PostgreSQL `URL` instead of the data directory (env RAGD_DATABASE_URL)")
}

// parseSub parses a command's flags and checks its subcommand against subs and its argument count against
// nargs[sub]; it returns the positional arguments.
func parseSub(fs *flag.FlagSet, env *Env, args []string, cmd, sub string, subs []string, nargs map[string]int) ([]string, error) {
	pos, err := parse(fs, args, env.Stdout)
	if err != nil {
		return nil, err
	}
	return pos, checkSub(cmd, sub, subs, nargs, pos)
}

// checkSub checks a command's subcommand against subs and its argument count against nargs[sub].
func checkSub(cmd, sub string, subs []string, nargs map[string]int, pos []string) error {
	switch {
	case sub == "":
		return usageErr("a subcommand is required: %s", strings.Join(subs, ", "))
	case !slices.Contains(subs, sub):
		return usageErr("unknown subcommand %q%s", sub, didYouMean(sub, subs, ""))
	case len(pos) != nargs[sub]:
		return usageErr("ragd %s %s takes %d argument(s)", cmd, sub, nargs[sub])
	}
	return nil
}

// runUsers is `ragd users add NAME [--team TEAM [--role R]] | list [--json] | disable NAME | enable NAME`.
func runUsers(ctx context.Context, env *Env, args []string) error {
	subs := []string{"add", "list", "disable", "enable"}
	sub, args := subcommandOf(args)
	fs := newFlagSet("users")
	var c common
	registerAccess(fs, env, &c)
	team := fs.String("team", "", "add the new user to `TEAM` (add)")
	role := fs.String("role", "member", "the new user's role in --team: member or admin (add)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseSub(fs, env, args, "users", sub, subs, map[string]int{"add": 1, "list": 0, "disable": 1, "enable": 1})
	if err != nil {
		return err
	}
	a, ps, err := openPrincipals(ctx, env, &c)
	if err != nil {
		return err
	}
	defer a.Close()
	switch sub {
	case "add":
		u, err := access.AddUser(ctx, ps, pos[0], *team, rag.TeamRole(*role))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "user %s added%s\n", u.Name, inTeam(*team, *role))
		return nil
	case "disable", "enable":
		if err := ps.SetUserDisabled(ctx, pos[0], sub == "disable"); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "user %s %sd\n", pos[0], sub)
		return nil
	}
	users, err := ps.ListUsers(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, map[string]any{"users": users})
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTEAMS\tCREATED")
	for _, u := range users {
		state := "enabled"
		if u.Disabled {
			state = "disabled"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Name, state, strings.Join(u.Teams, ","), u.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func inTeam(team, role string) string {
	if team == "" {
		return ""
	}
	return fmt.Sprintf(" to team %s (%s)", team, role)
}

// runTeams is `ragd teams add TEAM | list [--json] | members TEAM [--json] | join TEAM USER [--role R] |
// role TEAM USER member|admin | remove TEAM USER`.
func runTeams(ctx context.Context, env *Env, args []string) error {
	subs := []string{"add", "list", "members", "join", "role", "remove"}
	sub, args := subcommandOf(args)
	fs := newFlagSet("teams")
	var c common
	registerAccess(fs, env, &c)
	role := fs.String("role", "member", "the user's role: member or admin (join)")
	asJSON := fs.Bool("json", false, "print JSON (list, members)")
	pos, err := parseSub(fs, env, args, "teams", sub, subs, map[string]int{"add": 1, "list": 0, "members": 1, "join": 2, "role": 3, "remove": 2})
	if err != nil {
		return err
	}
	a, ps, err := openPrincipals(ctx, env, &c)
	if err != nil {
		return err
	}
	defer a.Close()
	switch sub {
	case "add":
		if err := ps.CreateTeam(ctx, &rag.Team{Name: pos[0]}); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "team %s added\n", pos[0])
		return nil
	case "join":
		if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: pos[0], User: pos[1], Role: rag.TeamRole(*role)}); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "user %s is in team %s (%s)\n", pos[1], pos[0], *role)
		return nil
	case "role":
		// Only a member's role changes: unlike join, a user outside the team is not found.
		members, err := ps.TeamMembers(ctx, pos[0])
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(members, func(m rag.TeamMember) bool { return m.User == pos[1] }) {
			return fmt.Errorf("user %q in team %q: %w", pos[1], pos[0], rag.ErrNotFound)
		}
		if err := ps.PutTeamMember(ctx, rag.TeamMember{Team: pos[0], User: pos[1], Role: rag.TeamRole(pos[2])}); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "user %s is %s of team %s\n", pos[1], pos[2], pos[0])
		return nil
	case "remove":
		if err := ps.RemoveTeamMember(ctx, pos[0], pos[1]); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "user %s removed from team %s\n", pos[1], pos[0])
		return nil
	case "members":
		members, err := ps.TeamMembers(ctx, pos[0])
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(env.Stdout, map[string]any{"members": members})
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "USER\tROLE")
		for _, m := range members {
			fmt.Fprintf(tw, "%s\t%s\n", m.User, m.Role)
		}
		return tw.Flush()
	}
	teams, err := ps.ListTeams(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, map[string]any{"teams": teams})
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tMEMBERS\tCREATED")
	for _, t := range teams {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Name, t.Members, t.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// runKeys is `ragd keys create --user NAME --scopes read[,write][,admin] [--expires D] | list [--json] |
// revoke PREFIX_OR_KEY`. create prints the new key alone on stdout.
func runKeys(ctx context.Context, env *Env, args []string) error {
	subs := []string{"create", "list", "revoke", "rotate-data"}
	sub, args := subcommandOf(args)
	if sub == "rotate-data" {
		return runKeysRotateData(ctx, env, args) // the data encryption key (keys_rotate.go)
	}
	fs := newFlagSet("keys")
	var c common
	registerAccess(fs, env, &c)
	user := fs.String("user", "", "the `NAME` of the user the key belongs to (create)")
	scopes := fs.String("scopes", "read", "what the key may do: `read[,write][,admin]` (create)")
	expires := fs.Duration("expires", 0, "the key expires after this `DURATION`, e.g. 720h (create; default never)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseSub(fs, env, args, "keys", sub, subs, map[string]int{"create": 0, "list": 0, "revoke": 1})
	if err != nil {
		return err
	}
	var sc []rag.Scope
	if sub == "create" {
		if *user == "" {
			return usageErr("ragd keys create needs --user NAME")
		}
		if *expires < 0 {
			return usageErr("--expires must be positive (got %s)", *expires)
		}
		if sc, err = rag.ParseScopes(*scopes); err != nil {
			return usageErr("--scopes: %s", rag.ErrorMessage(err))
		}
	}
	a, ps, err := openPrincipals(ctx, env, &c)
	if err != nil {
		return err
	}
	defer a.Close()
	switch sub {
	case "create":
		key, rec, err := access.CreateKey(ctx, ps, *user, sc, *expires, time.Now())
		e := audit.Event{Action: audit.KeyCreated, Detail: "ragd keys create --user " + *user}
		if err == nil {
			e.Target = rec.Prefix
		}
		recordCommand(ctx, env, a, e, err)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, key)
		fmt.Fprintf(env.Stderr, "key %s for user %s (%s) created; it is shown only now\n", rec.Prefix, rec.User, joinScopes(rec.Scopes))
		return nil
	case "revoke":
		rec, err := ps.RevokeAPIKey(ctx, access.RevocationTarget(pos[0]))
		e := audit.Event{Action: audit.KeyRevoked, Detail: "ragd keys revoke"}
		if err == nil {
			e.Target = rec.Prefix
		}
		recordCommand(ctx, env, a, e, err)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "key %s of user %s revoked\n", rec.Prefix, rec.User)
		return nil
	}
	keys, err := ps.ListAPIKeys(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(env.Stdout, map[string]any{"keys": keys})
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PREFIX\tUSER\tSCOPES\tSTATE\tCREATED")
	now := time.Now()
	for _, k := range keys {
		state := "active"
		switch {
		case k.RevokedAt != nil:
			state = "revoked " + k.RevokedAt.Format(time.RFC3339)
		case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
			state = "expired " + k.ExpiresAt.Format(time.RFC3339)
		case k.ExpiresAt != nil:
			state = "expires " + k.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.Prefix, k.User, joinScopes(k.Scopes), state, k.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func joinScopes(sc []rag.Scope) string {
	s := make([]string, len(sc))
	for i, x := range sc {
		s[i] = string(x)
	}
	return strings.Join(s, ",")
}
