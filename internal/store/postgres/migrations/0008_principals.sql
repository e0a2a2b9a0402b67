-- Principals and grants (docs/security.md): users, teams with a role per member, API keys stored as the
-- sha256 of the key (the key itself is never stored), a visibility per collection and write grants per
-- document beside the existing readers (read grants).

CREATE TABLE {S}.users (
    name       text PRIMARY KEY,
    disabled   boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL
);

CREATE TABLE {S}.teams (
    name       text PRIMARY KEY,
    created_at timestamptz NOT NULL
);

CREATE TABLE {S}.team_members (
    team      text NOT NULL REFERENCES {S}.teams (name) ON DELETE CASCADE,
    user_name text NOT NULL REFERENCES {S}.users (name) ON DELETE CASCADE,
    role      text NOT NULL CHECK (role IN ('member', 'admin')),
    PRIMARY KEY (team, user_name)
);
CREATE INDEX team_members_user_idx ON {S}.team_members (user_name);

CREATE TABLE {S}.api_keys (
    prefix     text PRIMARY KEY,
    hash       text NOT NULL UNIQUE,
    user_name  text NOT NULL REFERENCES {S}.users (name),
    scopes     text[] NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL
);

-- private: the owner (a user, or every member of the owning team); team: also the members of the owner's
-- teams; public: every authenticated principal.
ALTER TABLE {S}.collections ADD COLUMN visibility text NOT NULL DEFAULT 'private';

-- Write grants: principal IDs and "team:<name>" entries, like readers.
ALTER TABLE {S}.documents ADD COLUMN writers text[] NOT NULL DEFAULT '{}';
