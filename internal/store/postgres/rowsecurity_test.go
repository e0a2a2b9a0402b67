package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/storetest"
	"github.com/ragd/ragd/internal/textproc"
)

// testReaderRole is the role the row-security tests read as (created by Open; roles are cluster-wide, so
// every test schema shares it).
const testReaderRole = "ragd_reader"

// TestRowSecurityConformance runs the conformance suite with row-level security on: every read of a
// non-admin principal goes through the policies as the reader role, and nothing the suite expects changes.
func TestRowSecurityConformance(t *testing.T) {
	testURL(t)
	storetest.Run(t, func(t *testing.T) rag.Store { return openStore(t, Options{ReaderRole: testReaderRole}) })
}

// TestRowSecurity: a query that forgets the visibility predicate, run as a principal's read, still returns
// only the rows of documents that principal may read, from every table the policies cover.
func TestRowSecurity(t *testing.T) {
	url := testURL(t)
	schema := testSchema(t, url)
	s := openStore(t, Options{Schema: schema, ReaderRole: testReaderRole})
	ctx := t.Context()
	space := rag.Space{Provider: "test", Model: "rls", Dim: 4}

	var (
		alice = rag.Principal{ID: "user:alice"}
		bob   = rag.Principal{ID: "user:bob", Groups: []string{"eng"}}
		eve   = rag.Principal{ID: "user:eve"}
		anon  = rag.Principal{}
	)
	collection := func(name, owner string, v rag.Visibility) *rag.Collection {
		c := &rag.Collection{Name: name, Owner: owner, Visibility: v}
		if err := s.CreateCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	mine := collection("mine", alice.ID, rag.VisibilityPrivate)
	eng := collection("eng", "team:eng", rag.VisibilityPrivate)
	open := collection("open", alice.ID, rag.VisibilityPublic)
	docs := map[string]string{} // external ID → document ID
	add := func(c *rag.Collection, ext string, readers ...string) {
		d := &rag.Document{CollectionID: c.ID, ExternalID: ext, Title: ext, Status: rag.StatusQueued, Stage: rag.StageQueued,
			Owner: alice.ID, Readers: readers, PendingHash: hash(ext)}
		if c == eng {
			d.Owner = "user:olive"
		}
		if err := s.CreateDocument(ctx, d); err != nil {
			t.Fatal(err)
		}
		text := "quarterly figures of " + ext
		_, err := s.CommitVersion(ctx, &rag.VersionCommit{DocumentID: d.ID, ContentHash: hash(text), Title: ext, Space: space,
			Chunks: []rag.Chunk{{Index: 0, Kind: rag.KindText, Text: text, Vector: []float32{1, 0, 0, 0}},
				{Index: 1, Kind: rag.KindText, Text: "more figures", Vector: []float32{0, 1, 0, 0}}}})
		if err != nil {
			t.Fatal(err)
		}
		docs[ext] = d.ID
	}
	add(mine, "secret")
	add(mine, "granted", eve.ID)
	add(eng, "engdoc")
	add(open, "public")
	sp, err := s.space(ctx, space, false)
	if err != nil || sp == nil {
		t.Fatalf("space: %v %v", sp, err)
	}

	// Queries without any predicate, each answering document IDs (chunk IDs are mapped to theirs).
	chunkDoc := map[int64]string{}
	rows, _ := s.pool.Query(ctx, s.q(`SELECT id, document_id FROM {S}.chunks`))
	var cid int64
	var did string
	if _, err := pgx.ForEachRow(rows, []any{&cid, &did}, func() error { chunkDoc[cid] = did; return nil }); err != nil {
		t.Fatal(err)
	}
	queries := map[string]string{
		"documents":         `SELECT id FROM {S}.documents`,
		"document_versions": `SELECT document_id FROM {S}.document_versions`,
		"chunks":            `SELECT document_id FROM {S}.chunks`,
		"doc_postings":      `SELECT document_id FROM {S}.doc_postings`,
		"doc_lengths":       `SELECT document_id FROM {S}.doc_lengths`,
		"postings":          `SELECT chunk_id::text FROM {S}.postings`,
		"vectors":           `SELECT chunk_id::text FROM ` + sp.table,
	}
	// distinct runs sql on db and returns the distinct names of the IDs it answers, sorted.
	distinct := func(t *testing.T, db querier, sql string, name func(id string) string) []string {
		t.Helper()
		rows, err := db.Query(ctx, s.q(sql))
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var out []string
		for _, id := range ids {
			if n := name(id); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	forgetful := func(t *testing.T, db querier, sql string) []string {
		return distinct(t, db, sql, func(id string) string {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil {
				return chunkDoc[n]
			}
			return id
		})
	}
	// sees checks that sql, run as p's read, answers exactly want (IDs named by list).
	sees := func(t *testing.T, p rag.Principal, table, sql string, list func(*testing.T, querier, string) []string, want []string) {
		t.Helper()
		err := s.read(ctx, p, func(db querier) error {
			if got := list(t, db, sql); !slices.Equal(got, want) {
				t.Errorf("%s without predicate as %q: %v; want %v", table, p.ID, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := func(exts ...string) []string {
		var out []string
		for _, e := range exts {
			out = append(out, docs[e])
		}
		sort.Strings(out)
		return out
	}
	all := want("secret", "granted", "engdoc", "public")

	cases := []struct {
		name string
		p    rag.Principal
		want []string
	}{
		{"Owner", alice, want("secret", "granted", "public")},
		{"TeamMember", bob, want("engdoc", "public")},
		{"Grantee", eve, want("granted", "public")},
		{"NoID", anon, want("public")},
		{"Admin", rag.Principal{ID: "user:root", Admin: true}, all},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for table, sql := range queries {
				sees(t, tc.p, table, sql, forgetful, tc.want)
			}
		})
	}

	// The tables of migration 0019: a collection's graph, record tables and board follow the collection's
	// owner and visibility (a grant on a document opens neither); ratings and conversations are their
	// principal's; a blob follows the documents and versions that refer to it.
	label := map[string]string{} // an ID a query answers → what the test calls it
	for _, c := range []*rag.Collection{mine, eng, open} {
		label[c.ID] = c.Name
		g := &rag.StoredGraph{Sections: []rag.GraphSection{{ID: "s", Name: "S", Path: "S"}},
			Entities:  []rag.GraphEntity{{ID: "e", Name: "E", Type: "thing"}},
			Relations: []rag.GraphRelation{{Source: "e", Target: "e", Type: "self"}},
			Chunks:    []rag.GraphChunk{{ID: "c", SectionID: "s", Content: "figures of " + c.Name}},
			Postings:  []rag.GraphPosting{{Term: "e", EntityID: "e", Weight: 1}}}
		if err := s.ReplaceGraph(ctx, c.ID, g); err != nil {
			t.Fatal(err)
		}
		if err := s.ReplaceRecords(ctx, c.ID, "prices", []rag.Record{{Key: "E", NormKey: "e"}}); err != nil {
			t.Fatal(err)
		}
		q := &rag.Question{CollectionID: c.ID, Title: "figures of " + c.Name + "?"}
		if err := s.CreateQuestion(ctx, q); err != nil {
			t.Fatal(err)
		}
		if err := s.AddAnswer(ctx, &rag.BoardAnswer{QuestionID: q.ID, IsAI: true, Body: "in " + c.Name}); err != nil {
			t.Fatal(err)
		}
		label[q.ID] = c.Name
		if err := s.SetQuestionVector(ctx, q.ID, space, []float32{1, 0, 0, 0}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []rag.Principal{alice, bob, eve} {
		f := &rag.Feedback{Principal: p.ID, Vote: rag.Vote{Target: rag.FeedbackAnswer, Rating: 1, Question: "figures?"}}
		if err := s.PutFeedback(ctx, f); err != nil {
			t.Fatal(err)
		}
		c := &rag.Conversation{Principal: p.ID, Title: "figures"}
		if err := s.CreateConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendMessages(ctx, p.ID, c.ID, "", []*rag.Message{{Role: rag.RoleUser, Content: "figures?"}}); err != nil {
			t.Fatal(err)
		}
		label[p.ID], label[c.ID] = p.ID, p.ID
	}
	for ext, id := range docs { // each document's original, and one blob no document refers to
		text := "quarterly figures of " + ext
		if err := s.PutBlob(ctx, hash(text), []byte(text)); err != nil {
			t.Fatal(err)
		}
		label[hash(text)] = ext
		label[id] = ext
	}
	if err := s.PutBlob(ctx, hash("orphan"), []byte("orphan")); err != nil {
		t.Fatal(err)
	}
	label[hash("orphan")] = "orphan"
	more := map[string]string{
		"answers":               `SELECT question_id FROM {S}.answers`,
		"feedback":              `SELECT principal FROM {S}.feedback`,
		"conversations":         `SELECT id FROM {S}.conversations`,
		"conversation_messages": `SELECT conversation_id FROM {S}.conversation_messages`,
		"blobs":                 `SELECT hash FROM {S}.blobs`,
	}
	for _, table := range []string{"graph_meta", "graph_sections", "graph_entities", "graph_relations", "graph_chunks",
		"graph_terms", "record_rows", "questions"} {
		more[table] = `SELECT collection_id FROM {S}.` + table
	}
	wantMore := map[string]map[string][]string{ // principal → table → labels
		alice.ID: {"collections": {"mine", "open"}, "own": {alice.ID}, "blobs": {"granted", "public", "secret"}},
		bob.ID:   {"collections": {"eng", "open"}, "own": {bob.ID}, "blobs": {"engdoc", "public"}},
		eve.ID:   {"collections": {"open"}, "own": {eve.ID}, "blobs": {"granted", "public"}},
		anon.ID:  {"collections": {"open"}, "own": nil, "blobs": {"public"}},
		"user:root": {"collections": {"eng", "mine", "open"}, "own": {alice.ID, bob.ID, eve.ID},
			"blobs": {"engdoc", "granted", "orphan", "public", "secret"}},
	}
	labelled := func(t *testing.T, db querier, sql string) []string {
		return distinct(t, db, sql, func(id string) string {
			l, ok := label[id]
			if !ok {
				t.Fatalf("%s: unknown ID %q", sql, id)
			}
			return l
		})
	}
	for _, tc := range cases {
		t.Run(tc.name+"/MoreTables", func(t *testing.T) {
			w := wantMore[tc.p.ID]
			for table, sql := range more {
				want := w["collections"]
				switch table {
				case "feedback", "conversations", "conversation_messages":
					want = w["own"]
				case "blobs":
					want = w["blobs"]
				}
				sees(t, tc.p, table, sql, labelled, want)
			}
		})
	}
	// Each read path a principal's request takes through the store, with its SQL predicate forgotten (the
	// forgetVisibility seam drops it from docConditions, graphScope and boardOf): the policies alone keep
	// it to the principal's rows. The same forgetful reads on a store without the reader role see all, so
	// the seam does forget and the policies are what filter.
	t.Run("ForgottenPredicateOnEveryReadPath", func(t *testing.T) {
		var ids []int64
		for id := range chunkDoc {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		paths := func(t *testing.T, st *Store, p rag.Principal) map[string][]string {
			t.Helper()
			forgetVisibility.Store(true)
			defer forgetVisibility.Store(false)
			got := map[string][]string{}
			addDoc := func(path, d string) {
				if !slices.Contains(got[path], d) {
					got[path] = append(got[path], d)
				}
			}
			hits, err := st.Hits(ctx, p, ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				addDoc("Hits", h.DocumentID)
			}
			scores, err := st.VectorScores(ctx, p, space, []float32{1, 0, 0, 0}, ids)
			if err != nil {
				t.Fatal(err)
			}
			for id := range scores {
				addDoc("VectorScores", chunkDoc[id])
			}
			v, err := st.VectorCandidates(ctx, p, rag.VectorQuery{Space: space, Vector: []float32{1, 0, 0, 0}, K: 20})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range v {
				addDoc("VectorCandidates", chunkDoc[c.ChunkID])
			}
			k, err := st.KeywordCandidates(ctx, p, rag.KeywordQuery{Terms: textproc.IndexTerms("quarterly figures"), K: 20})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range k {
				addDoc("KeywordCandidates", chunkDoc[c.ChunkID])
			}
			ks, err := st.KeywordScores(ctx, p, textproc.IndexTerms("quarterly figures"), nil, ids)
			if err != nil {
				t.Fatal(err)
			}
			for id := range ks {
				addDoc("KeywordScores", chunkDoc[id])
			}
			for _, c := range []*rag.Collection{mine, eng, open} {
				gs, err := st.GraphStats(ctx, p, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				if gs.Entities > 0 || gs.Sections > 0 || gs.Tables["prices"] > 0 {
					got["GraphStats"] = append(got["GraphStats"], c.Name)
				}
				qs, err := st.QuestionVectors(ctx, &p, c.ID, space)
				if err != nil {
					t.Fatal(err)
				}
				if len(qs) > 0 {
					got["QuestionVectors"] = append(got["QuestionVectors"], c.Name)
				}
			}
			for _, l := range got {
				sort.Strings(l)
			}
			return got
		}
		plain := openStore(t, Options{Schema: schema})
		for _, tc := range cases {
			wantCols := wantMore[tc.p.ID]["collections"]
			got := paths(t, s, tc.p)
			for _, path := range []string{"Hits", "VectorScores", "VectorCandidates", "KeywordCandidates", "KeywordScores"} {
				if !slices.Equal(got[path], tc.want) {
					t.Errorf("%s as %s (%q) without its predicate: documents %v; want %v", path, tc.name, tc.p.ID, got[path], tc.want)
				}
			}
			for _, path := range []string{"GraphStats", "QuestionVectors"} {
				if !slices.Equal(got[path], wantCols) {
					t.Errorf("%s as %s (%q) without its predicate: collections %v; want %v", path, tc.name, tc.p.ID, got[path], wantCols)
				}
			}
			if tc.p.Admin {
				continue
			}
			leaky := paths(t, plain, tc.p)
			for _, path := range []string{"Hits", "VectorScores", "VectorCandidates", "KeywordCandidates", "KeywordScores"} {
				if !slices.Equal(leaky[path], all) {
					t.Errorf("%s as %s without predicate or reader role: %v; want every document (the seam must forget)", path, tc.name, leaky[path])
				}
			}
			for _, path := range []string{"GraphStats", "QuestionVectors"} {
				if len(leaky[path]) != 3 {
					t.Errorf("%s as %s without predicate or reader role: %v; want every collection", path, tc.name, leaky[path])
				}
			}
		}
	})
	t.Run("AdminReadsRunAsReaderUnderAdminPolicy", func(t *testing.T) {
		// An admin's read (an admin key, the CLI, a background job) runs as the reader role too, admitted by
		// the admin policy of migration 0024, not by owning the tables.
		err := s.read(ctx, rag.LocalPrincipal, func(db querier) error {
			var user, scope string
			if err := db.QueryRow(ctx, "SELECT current_user, current_setting('ragd.scope')").Scan(&user, &scope); err != nil {
				return err
			}
			if user != testReaderRole || scope != "admin" {
				t.Errorf("an admin's read runs as %q with ragd.scope %q; want %s and admin", user, scope, testReaderRole)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = s.read(ctx, rag.LocalPrincipal, func(db querier) error {
			_, err := db.Exec(ctx, s.q(`DELETE FROM {S}.feedback`))
			return err
		})
		if err == nil {
			t.Error("a DELETE in an admin's read succeeded")
		}
		var owner string
		if err := s.pool.QueryRow(ctx, s.q(`SELECT tableowner FROM pg_tables WHERE tablename = 'documents' AND schemaname = $1`), schema).
			Scan(&owner); err != nil {
			t.Fatal(err)
		}
		if owner == testReaderRole {
			t.Fatalf("the reader role owns the tables")
		}
	})
	for table, sql := range more {
		queries[table] = sql // for the checks below: without the role all, naming no principal nothing
	}

	t.Run("WithoutReaderRoleEverythingShows", func(t *testing.T) {
		// The same forgetful query on a store without the reader role sees every row: the wall is the
		// policies under the reader role, nothing else.
		plain := openStore(t, Options{Schema: schema})
		err := plain.read(ctx, bob, func(db querier) error {
			if got := forgetful(t, db, queries["chunks"]); !slices.Equal(got, all) {
				t.Errorf("chunks without row security: %v; want all %v", got, all)
			}
			for _, table := range []string{"graph_entities", "questions", "feedback", "blobs"} {
				if got := labelled(t, db, more[table]); len(got) != len(wantMore["user:root"][map[string]string{
					"graph_entities": "collections", "questions": "collections", "feedback": "own", "blobs": "blobs"}[table]]) {
					t.Errorf("%s without row security: %v; want every row", table, got)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("NoPrincipalNamedSeesNothing", func(t *testing.T) {
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SELECT set_config('role', $1, true)", testReaderRole); err != nil {
				return err
			}
			for table, sql := range queries {
				if got := forgetful(t, tx, sql); len(got) != 0 {
					t.Errorf("%s as the reader role naming no principal: %v; want nothing", table, got)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ReaderCannotReadKeysOrAudit", func(t *testing.T) {
		for _, table := range []string{"api_keys", "audit_log", "webhooks", "webhook_deliveries"} {
			err := s.read(ctx, alice, func(db querier) error {
				_, err := db.Exec(ctx, s.q(`SELECT count(*) FROM {S}.`+table))
				return err
			})
			if err == nil {
				t.Errorf("the reader role read %s", table)
			}
		}
	})
	t.Run("ReaderCannotWrite", func(t *testing.T) {
		err := s.read(ctx, alice, func(db querier) error {
			_, err := db.Exec(ctx, s.q(`UPDATE {S}.documents SET title = 'x'`))
			return err
		})
		if err == nil {
			t.Fatal("an UPDATE as the reader role succeeded")
		}
	})
	t.Run("PredicateReadsUnchanged", func(t *testing.T) {
		// The store's own reads under the policies: bob's search finds only what he may read.
		c, err := s.VectorCandidates(ctx, bob, rag.VectorQuery{Space: space, Vector: []float32{1, 0, 0, 0}, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, x := range c {
			if d := chunkDoc[x.ChunkID]; !slices.Contains(got, d) {
				got = append(got, d)
			}
		}
		sort.Strings(got)
		if w := want("engdoc", "public"); !slices.Equal(got, w) {
			t.Errorf("bob's vector candidates from documents %v; want %v", got, w)
		}
		k, err := s.KeywordCandidates(ctx, eve, rag.KeywordQuery{Terms: textproc.IndexTerms("quarterly figures"), K: 10})
		if err != nil || len(k) != 4 { // both chunks of granted and of public
			t.Errorf("eve's keyword candidates: %d, %v; want 4", len(k), err)
		}
	})
	t.Run("SetUpOnceByCatalog", func(t *testing.T) {
		// Every Open (each CLI command) checks the catalog; the set-up's DDL runs only when it finds
		// something amiss — a grant taken away, or one given on a refused table — and puts it right.
		ready := func(t *testing.T, st *Store, want bool, when string) {
			t.Helper()
			if ok, err := st.readerReady(ctx); err != nil || ok != want {
				t.Fatalf("readerReady %s: %v, %v; want %v", when, ok, err, want)
			}
		}
		ready(t, s, true, "after Open")
		for _, stmt := range []string{`REVOKE SELECT ON {S}.chunks FROM `, `GRANT SELECT ON {S}.api_keys TO `} {
			if _, err := s.pool.Exec(ctx, s.q(stmt+testReaderRole)); err != nil {
				t.Fatal(err)
			}
			ready(t, s, false, "after "+stmt)
			ready(t, openStore(t, Options{Schema: schema, ReaderRole: testReaderRole}), true, "after Open set it up again")
		}
	})
	t.Run("RefusesUnboundRole", func(t *testing.T) {
		var super string
		if err := s.pool.QueryRow(ctx, "SELECT rolname FROM pg_roles WHERE rolsuper LIMIT 1").Scan(&super); err != nil {
			t.Fatal(err)
		}
		_, err := Open(context.Background(), url, Options{Schema: schema, ReaderRole: super})
		if rag.ErrorCode(err) != rag.CodeInvalid {
			t.Fatalf("Open with superuser %s as the reader role: %v; want invalid", super, err)
		}
		_, err = Open(context.Background(), url, Options{Schema: schema, ReaderRole: "Bad-Name"})
		if rag.ErrorCode(err) != rag.CodeInvalid {
			t.Fatalf("Open with reader role Bad-Name: %v; want invalid", err)
		}
	})
	t.Run("OptionalRoleFallsBackAndSaysWhy", func(t *testing.T) {
		// RAGD_PG_ROW_SECURITY=auto: a reader role that cannot be used starts the store without row
		// security, with one warning that says why and what to run.
		var super string
		if err := s.pool.QueryRow(ctx, "SELECT rolname FROM pg_roles WHERE rolsuper LIMIT 1").Scan(&super); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		o, err := Open(context.Background(), url, Options{Schema: schema, ReaderRole: super, ReaderOptional: true,
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatalf("Open with an unusable optional reader role: %v", err)
		}
		defer o.Close()
		if o.RowSecurity() != "" || s.RowSecurity() != testReaderRole {
			t.Errorf("RowSecurity: %q with the unusable role, %q with %s", o.RowSecurity(), s.RowSecurity(), testReaderRole)
		}
		if got := log.String(); strings.Count(got, "level=WARN") != 1 || !strings.Contains(got, "row-level security is off") ||
			!strings.Contains(got, "CREATE ROLE") || !strings.Contains(got, "RAGD_PG_ROW_SECURITY=off") {
			t.Errorf("start-up log %q: want one warning saying row security is off, why, the SQL to run and the opt-out", got)
		}
	})
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
