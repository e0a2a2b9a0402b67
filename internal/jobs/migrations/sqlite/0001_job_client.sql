-- Heartbeats of working Runners (liveness.go), in jobs.db beside River's tables. heartbeat_at is Unix
-- milliseconds. IF NOT EXISTS: a jobs.db from before these migrations has this very table, rows and all, and
-- keeps it.
CREATE TABLE IF NOT EXISTS ragd_job_client (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
);
