// Package scale holds ragd's end-to-end tests of running on more than one process: the real ragd binary,
// killed with SIGKILL in the middle of ingestion and restarted; `ragd worker` processes sharing one database;
// and the PostgreSQL store ranking as the embedded one does (`ragd eval`). Each runs on the embedded store
// (a temp data directory) and on PostgreSQL when RAGD_TEST_DATABASE_URL is set (PGlite from
// `scripts/pglite.sh start`, or any PostgreSQL with pgvector), in a schema of its own.
//
//	RAGD_TEST_DATABASE_URL=$(scripts/pglite.sh start) go test -count=1 -v ./test/scale/
package scale
