-- Principals and grants (docs/security.md): users, teams with a role per member, API keys stored as the
-- sha256 of the key (the key itself is never stored), a visibility per collection and write grants per
-- document beside the existing readers (read grants).

CREATE TABLE users (
    name       TEXT PRIMARY KEY,
    disabled   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);

CREATE TABLE teams (
    name       TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

CREATE TABLE team_members (
    team      TEXT NOT NULL REFERENCES teams (name) ON DELETE CASCADE,
    user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('member', 'admin')),
    PRIMARY KEY (team, user_name)
);
CREATE INDEX team_members_user ON team_members (user_name);

CREATE TABLE api_keys (
    prefix     TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    user_name  TEXT NOT NULL REFERENCES users (name),
    scopes     TEXT NOT NULL, -- JSON array of read, write, admin
    expires_at INTEGER,       -- NULL: never
    revoked_at INTEGER,
    created_at INTEGER NOT NULL
);

-- private: the owner (a user, or every member of the owning team); team: also the members of the owner's
-- teams; public: every authenticated principal.
ALTER TABLE collections ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private';

-- Write grants: principal IDs and "team:<name>" entries (JSON array), like readers.
ALTER TABLE documents ADD COLUMN writers TEXT NOT NULL DEFAULT '[]';
