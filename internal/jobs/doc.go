// Package jobs runs ragd's durable background work on River: the ingestion of uploaded documents and
// periodic jobs. One Runner per process; any number of processes may share one PostgreSQL database, or
// (on one machine) one SQLite data directory.
//
// Storage. On the embedded store River's tables live in their own SQLite file, <data-dir>/jobs.db (WAL,
// busy_timeout, immediate transactions), so polling for jobs never waits on the document store's writer.
// On PostgreSQL they live in the store's database and use the store's pgx pool: on PGlite that pool has
// one connection that every other connection shares a session with, so River must not open its own.
// River's migrations run when a Runner is opened, retried so that processes starting together converge.
//
// Ingestion jobs. EnqueueIngest inserts one job per (document, content hash), unique among live jobs, so
// a version is never processed twice at once; running it again after success is a no-op because the
// pipeline only processes a document's pending hash. Transient failures (embedder, model or database
// unavailable, timeouts) are retried with exponential back-off while the document stays queued with the
// reason; after the last attempt, or at once for invalid input, the document is marked failed.
//
// Crashes. Every working Runner writes a heartbeat row. A running job whose worker's heartbeat stopped (or,
// on the same machine, whose worker process is gone) is made available again within seconds, instead of
// waiting for River's own rescuer (which is kept, with a long horizon, as a backstop for jobs that hang in
// a live process). At start-up every document left queued or processing with a pending hash is enqueued
// again: uniqueness makes that a no-op for documents whose job is alive.
package jobs
