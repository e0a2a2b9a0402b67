package scale

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to read jobs.db
)

// jobRow is one ingestion job as River recorded it.
type jobRow struct {
	doc        string
	state      string
	attempt    int
	attempts   int    // entries in attempted_by: workers that took the job
	errors     int    // errors recorded on the job
	lastWorker string // the worker that took it last
	lastError  string
}

// ingestJobs reads River's ingestion jobs from the backend's jobs database.
func ingestJobs(t *testing.T, b backend) []jobRow {
	t.Helper()
	ctx := context.Background()
	var out []jobRow
	if b.url == "" {
		db, err := sql.Open("sqlite", "file:"+filepath.Join(b.dataDir, "jobs.db")+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, `SELECT json_extract(args, '$.document_id'), state, attempt,
			coalesce(json_array_length(attempted_by), 0), coalesce(json_array_length(errors), 0),
			coalesce(json_extract(attempted_by, '$[#-1]'), ''), coalesce(json_extract(errors, '$[#-1].error'), '')
			FROM river_job WHERE kind = 'ragd_ingest' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var j jobRow
			if err := rows.Scan(&j.doc, &j.state, &j.attempt, &j.attempts, &j.errors, &j.lastWorker, &j.lastError); err != nil {
				t.Fatal(err)
			}
			out = append(out, j)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	pool, err := pgxpool.New(ctx, b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, `SELECT args->>'document_id', state::text, attempt,
		coalesce(array_length(attempted_by, 1), 0), coalesce(array_length(errors, 1), 0),
		coalesce(attempted_by[array_length(attempted_by, 1)], ''), coalesce(errors[array_length(errors, 1)]->>'error', '')
		FROM `+pgx.Identifier{b.schema, "river_job"}.Sanitize()+` WHERE kind = 'ragd_ingest' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var j jobRow
		if err := rows.Scan(&j.doc, &j.state, &j.attempt, &j.attempts, &j.errors, &j.lastWorker, &j.lastError); err != nil {
			t.Fatal(err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
