-- Heartbeats of working Runners (liveness.go), beside River's tables. {P} is the schema prefix ("schema."),
-- empty for the search_path. heartbeat_at is the database's clock, so that workers whose clocks disagree
-- agree on ages. IF NOT EXISTS: a database from before these migrations has this very table, rows and all,
-- and keeps it.
CREATE TABLE IF NOT EXISTS {P}ragd_job_client (
    id           text PRIMARY KEY,
    host         text NOT NULL,
    pid          integer NOT NULL,
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
