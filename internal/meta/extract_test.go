package meta_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/meta"
	"github.com/ragd/ragd/internal/profile"
)

const samples = "../../../shared/samples/housing"

var asOf = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// housing loads the example profile's schema and the sample rows.
func housing(t testing.TB) (*meta.Schema, []meta.Row) {
	t.Helper()
	p, err := profile.ReadFile("../../examples/housing/collection.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Schema
	f, err := os.Open(filepath.Join(samples, "announcements.csv"))
	if err != nil {
		t.Skipf("shared samples: %v", err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []meta.Row
	for _, rec := range recs[1:] {
		m := map[string]any{}
		for i, col := range recs[0] {
			v, err := s.Cell(col, rec[i])
			if err != nil {
				t.Fatal(err)
			}
			m[col] = v
		}
		rows = append(rows, meta.Row{DocumentID: rec[0], Meta: m})
	}
	return s, rows
}

// selected applies the question's store conditions to the rows in memory, as the stores do.
func selected(s *meta.Schema, rows []meta.Row, q *meta.Query) []string {
	conds := s.Filter(q, asOf)
	var out []string
	for _, r := range rows {
		ok := true
		for _, c := range conds {
			if !meta.Holds(r.Meta, c) {
				ok = false
			}
		}
		if ok {
			out = append(out, r.Meta["id"].(string))
		}
	}
	slices.Sort(out)
	return out
}

func TestExtractSampleQuestions(t *testing.T) {
	s, rows := housing(t)
	f, err := os.Open(filepath.Join(samples, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct {
			ID        string   `json:"id"`
			Question  string   `json:"question"`
			Kind      string   `json:"kind"`
			ExpectIDs []string `json:"expect_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		t.Run(q.ID, func(t *testing.T) {
			got := s.Extract(q.Question, rows, asOf)
			ids := selected(s, rows, got)
			want := slices.Clone(q.ExpectIDs)
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				t.Errorf("%s\n  query %+v\n  selects %v, want %v", q.Question, got, ids, want)
			}
			wantKind := map[string]meta.Kind{"metadata": meta.KindList, "compare": meta.KindCompare}[q.Kind]
			if wantKind != "" && got.Kind != wantKind {
				t.Errorf("%s: kind %q, want %q", q.Question, got.Kind, wantKind)
			}
			if (q.Kind == "content" || q.Kind == "notfound" && len(q.ExpectIDs) > 0) && got.Kind != meta.KindContent {
				t.Errorf("%s: kind %q, want content", q.Question, got.Kind)
			}
		})
	}
}

// TestExtractBoundaries asks at the boundaries the sample's README lists, and in wordings the sample set
// does not use.
func TestExtractBoundaries(t *testing.T) {
	s, rows := housing(t)
	for _, tc := range []struct {
		name, q string
		has     []string // ids that must be selected
		hasNot  []string // ids that must not be
		kind    meta.Kind
	}{
		{"DepositExactlyMax", "보증금 1000만원 이하 공고", []string{"LH_lease_02"}, nil, meta.KindList},
		{"DepositBelowExcludes", "보증금 1,000만원 미만 공고", []string{"LH_lease_08"}, []string{"LH_lease_02"}, meta.KindList},
		{"DepositInWon", "보증금 10,000,000원 이하인 곳", []string{"LH_lease_02"}, []string{"GH_lease_05"}, meta.KindList},
		{"DepositEok", "보증금 2억 이상인 공고", []string{"SH_lease_02"}, []string{"SH_lease_06"}, meta.KindList},
		{"DepositEokMan", "보증금 1억 9,800만원 이하 공고", []string{"SH_lease_06"}, []string{"SH_lease_02"}, meta.KindList},
		{"RentExactlyMax", "월세 20만원 이하", []string{"SH_lease_01", "LH_lease_12"}, []string{"GH_lease_06"}, meta.KindList},
		{"RentBelowExcludes", "월세 20만원 미만", []string{"LH_lease_02"}, []string{"SH_lease_01"}, meta.KindList},
		{"RentOver", "월세 25만원 초과", []string{"SH_lease_04"}, []string{"SH_lease_07"}, meta.KindList},
		{"DeadlineDay7In", "일주일 안에 마감되는 공고", []string{"LH_lease_10"}, []string{"GH_lease_06"}, meta.KindList},
		{"DeadlinePhrase", "마감 임박 공고", []string{"LH_lease_10", "LH_lease_11"}, []string{"GH_lease_06", "SH_lease_06"}, meta.KindList},
		{"SeoguNotGangseogu", "인천 서구 공고 보여줘", []string{"LH_lease_14"}, []string{"LH_lease_03", "LH_lease_06"}, meta.KindList},
		{"SeoguAlone", "서구에 있는 공고", []string{"LH_lease_14"}, []string{"LH_lease_03", "LH_lease_06"}, meta.KindList},
		{"PlannedIsNotOpen", "지금 접수 중인 장기전세 공고", nil, []string{"SH_lease_06", "SH_lease_02"}, meta.KindList},
		{"PlannedLongLease", "접수 예정인 장기전세", []string{"SH_lease_06", "SH_lease_02"}, nil, meta.KindList},
		{"Units", "150세대 이상인 공고", []string{"LH_lease_05", "LH_lease_11"}, []string{"GH_lease_06"}, meta.KindList},
		{"ProviderAndCity", "LH 성남시 공고", []string{"LH_lease_07"}, []string{"GH_lease_05"}, meta.KindList},
		{"Gyeonggi", "경기도 행복주택 보여줘", []string{"GH_lease_01", "LH_lease_09"}, []string{"LH_lease_01"}, meta.KindList},
		{"MonthOfMoveIn", "3월에 입주하는 공고", []string{"LH_lease_01", "SH_lease_08"}, []string{"LH_lease_02"}, meta.KindList},
		{"UnknownDistrict", "부산 해운대구 공고", nil, []string{"LH_lease_01"}, meta.KindList},
		{"FactOfNamedRow", "공덕동 행복주택 보증금 얼마야?", []string{"LH_lease_01"}, []string{"SH_lease_01"}, meta.KindFact},
		{"ContentOfNamedRow", "광교 행복주택 제출 서류 알려줘", []string{"GH_lease_01"}, nil, meta.KindContent},
		{"CompareTwoNamed", "신내동 국민임대와 진관동 국민임대 보증금 비교", []string{"LH_lease_05", "SH_lease_08"}, []string{"LH_lease_01"}, meta.KindCompare},
		{"KeyWrittenOut", "LH_lease_07 마감일 알려줘", []string{"LH_lease_07"}, []string{"LH_lease_05"}, meta.KindFact},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := s.Extract(tc.q, rows, asOf)
			ids := selected(s, rows, q)
			for _, id := range tc.has {
				if !slices.Contains(ids, id) {
					t.Errorf("%s: %s not selected (%v; query %+v)", tc.q, id, ids, q)
				}
			}
			for _, id := range tc.hasNot {
				if slices.Contains(ids, id) {
					t.Errorf("%s: %s selected (query %+v)", tc.q, id, q)
				}
			}
			if q.Kind != tc.kind {
				t.Errorf("%s: kind %q, want %q (query %+v)", tc.q, q.Kind, tc.kind, q)
			}
		})
	}
}

func TestWon(t *testing.T) {
	for n, want := range map[int64]string{12000000: "1,200만원", 220000: "22만원", 198000000: "1억 9,800만원",
		200000000: "2억원", 0: "0원", 15000: "1만 5,000원", 500: "500원", 10500000: "1,050만원"} {
		if got := meta.Won(n); got != want {
			t.Errorf("Won(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestExtractKoreanNumerals(t *testing.T) {
	s, rows := housing(t)
	for q, want := range map[string][]any{
		"보증금 천만원 이하":   {float64(10000000)},
		"보증금 오백만 원 이하": {float64(5000000)},
		"보증금 이억 이상":    {float64(200000000)},
		"만 19세 이상 공고":  nil,
	} {
		got := s.Extract(q, rows, asOf)
		var vals []any
		for _, c := range got.Conds {
			if c.Key == "deposit" {
				vals = append(vals, c.Values...)
			}
		}
		if !slices.Equal(vals, want) {
			t.Errorf("%s: deposit %v, want %v (%+v)", q, vals, want, got)
		}
	}
}
