package storetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/rag"
)

// recordSchema is a small collection schema (internal/meta) with a money, an integer, dates, enums, a
// words field and a computed status.
const recordSchema = `{
  "key": "id", "title": "title", "order_by": "end",
  "fields": [
    {"name": "id"}, {"name": "title"},
    {"name": "district", "type": "enum"},
    {"name": "region", "words": true},
    {"name": "deposit", "type": "money", "aliases": ["보증금"]},
    {"name": "units", "type": "integer", "unit": "세대"},
    {"name": "start", "type": "date", "aliases": ["시작"]},
    {"name": "end", "type": "date", "aliases": ["마감"]},
    {"name": "status", "type": "enum", "computed": {
      "open": [{"field": "start", "op": "lte", "value": "$as_of"}, {"field": "end", "op": "gte", "value": "$as_of"}],
      "planned": [{"field": "start", "op": "gt", "value": "$as_of"}]},
     "value_aliases": {"open": ["접수 중"], "planned": ["예정"]}}
  ]}`

// recordRows are the rows; the as-of date is 2026-11-22.
var recordRows = [][]string{
	// id, title, district, region, deposit, units, start, end
	{"r1", "가 공덕동", "마포구", "서울특별시 마포구", "10000000", "120", "2026-11-16", "2026-11-29"},
	{"r2", "나 행당동", "성동구", "서울특별시 성동구", "10000001", "80", "2026-11-18", "2026-11-30"},
	{"r3", "다 가양동", "강서구", "서울특별시 강서구", "2400000", "200", "2026-11-17", "2026-11-27"},
	{"r4", "라 검단", "서구", "인천광역시 서구", "12500000", "199", "2026-11-13", "2026-12-07"},
	{"r5", "마 홍제동", "서대문구", "서울특별시 서대문구", "198000000", "38", "2026-11-24", "2026-12-02"},
}

// testRecordFilters stores rows typed by a schema as documents' metadata and runs the filters the schema
// reads out of questions in the store's candidate queries and listings: money numerically at the boundary,
// counts, dates in calendar order (day 7 in, day 8 out), an exact district (서구 is not 강서구) and a computed
// status (예정 is not 접수 중).
func testRecordFilters(t *testing.T, open func(t *testing.T) rag.Store) {
	s := open(t)
	var sch meta.Schema
	if err := json.Unmarshal([]byte(recordSchema), &sch); err != nil {
		t.Fatal(err)
	}
	if err := sch.Compile(); err != nil {
		t.Fatal(err)
	}
	coll := mustCollection(t, s, "records")
	cols := []string{"id", "title", "district", "region", "deposit", "units", "start", "end"}
	var rows []meta.Row
	for _, r := range recordRows {
		m := map[string]any{}
		for i, c := range cols {
			v, err := sch.Cell(c, r[i])
			if err != nil {
				t.Fatal(err)
			}
			m[c] = v
		}
		if err := sch.ValidateRow(m); err != nil {
			t.Fatal(err)
		}
		d := newDoc(t, s, coll.ID, r[0], func(d *rag.Document) { d.Metadata = m })
		commitTexts(t, s, d, spaceA, []string{"housing announcement " + r[0]}, nil)
		rows = append(rows, meta.Row{DocumentID: d.ID, Meta: m})
	}
	asOf := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ q, want string }{
		{"보증금 1000만원 이하", "r1 r3"},
		{"보증금 1,000만원 미만", "r3"},
		{"보증금 1억 이상", "r5"},
		{"200세대 이상", "r3"},
		{"일주일 안에 마감", "r1 r3"},
		{"서구 공고", "r4"},
		{"접수 중인 공고", "r1 r2 r3 r4"},
		{"예정인 공고", "r5"},
		{"12월에 마감", "r4 r5"},
		{"서울 접수 중", "r1 r2 r3"},
	} {
		q := sch.Extract(tc.q, rows, asOf)
		f := rag.Filter{Collections: []string{coll.ID}, Metadata: sch.Filter(q, asOf)}
		var want []string
		for _, r := range rows {
			ok := true
			for _, c := range f.Metadata {
				ok = ok && meta.Holds(r.Meta, c)
			}
			if ok {
				want = append(want, r.Meta["id"].(string))
			}
		}
		if got := joinSorted(want); got != tc.want {
			t.Errorf("%s: the schema's conditions %v select %s in memory, want %s", tc.q, f.Metadata, got, tc.want)
		}
		page, err := s.ListDocuments(t.Context(), alice, rag.DocumentQuery{Filter: f, Limit: 50})
		if err != nil {
			t.Fatalf("%s: %v", tc.q, err)
		}
		var listed []string
		for _, d := range page.Documents {
			listed = append(listed, d.ExternalID)
		}
		if got := joinSorted(listed); got != tc.want {
			t.Errorf("%s: ListDocuments %s, want %s", tc.q, got, tc.want)
		}
		vc, err := s.VectorCandidates(t.Context(), alice, rag.VectorQuery{Space: spaceA, Vector: basis(spaceA.Dim, 0), Filter: f, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		kc, err := s.KeywordCandidates(t.Context(), alice, rag.KeywordQuery{Terms: queryTerms("housing"), Filter: f, K: 10})
		if err != nil {
			t.Fatal(err)
		}
		for name, cands := range map[string][]rag.Candidate{"VectorCandidates": vc, "KeywordCandidates": kc} {
			var chunks []int64
			for _, c := range cands {
				chunks = append(chunks, c.ChunkID)
			}
			hits, err := s.Hits(t.Context(), rag.LocalPrincipal, chunks)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range hits {
				if !slices.Contains(ids, h.ExternalID) {
					ids = append(ids, h.ExternalID)
				}
			}
			if got := joinSorted(ids); got != tc.want {
				t.Errorf("%s: %s %s, want %s", tc.q, name, got, tc.want)
			}
		}
	}
}

func joinSorted(ids []string) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return strings.Join(ids, " ")
}
