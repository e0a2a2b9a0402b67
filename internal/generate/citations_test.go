package generate_test

import (
	"reflect"
	"testing"

	"github.com/ragd/ragd/internal/generate"
	"github.com/ragd/ragd/internal/rag"
)

var passages = []rag.Passage{
	{N: 1, Title: "Runways", Text: "The main runway of the airport is 3,200 metres long and 45 metres wide. It was resurfaced in 2019."},
	{N: 2, Title: "Terminals", Text: "Terminal 2 opened in 2018 and handles international flights of twelve airlines."},
	{N: 3, Title: "활주로", Section: "시설 > 활주로", Text: "인천공항의 제1활주로는 길이 3,750미터, 폭 60미터이다. 2001년에 개항했다."},
}

func TestCheckCitations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		in    string
		want  string
		check rag.CitationCheck
	}{
		{"Plain", "The main runway is 3,200 metres long [1].",
			"The main runway is 3,200 metres long [1].", rag.CitationCheck{Valid: 1}},
		{"List", "Runway and terminal facts [1, 2].",
			"Runway and terminal facts [1][2].", rag.CitationCheck{Valid: 2}},
		{"Cite", "The main runway is 3,200 metres long [CITE:1]. Terminal 2 opened in 2018 [CITE: 2].",
			"The main runway is 3,200 metres long [1]. Terminal 2 opened in 2018 [2].", rag.CitationCheck{Valid: 2}},
		{"CiteList", "Facts [CITE:1, CITE:2].", "Facts [1][2].", rag.CitationCheck{Valid: 2}},
		{"Range", "The runway and terminals are described [1-3].", "The runway and terminals are described [1][2][3].", rag.CitationCheck{Valid: 3}},
		{"UnknownRemoved", "The main runway is 3,200 metres long [7].",
			"The main runway is 3,200 metres long.", rag.CitationCheck{Removed: 1}},
		{"UnknownInList", "Runway facts [1, 9].", "Runway facts [1].", rag.CitationCheck{Valid: 1, Removed: 1}},
		{"ZeroRemoved", "Nothing [0] here.", "Nothing here.", rag.CitationCheck{Removed: 1}},
		{"DuplicateInMarker", "The main runway is long [1, 1].", "The main runway is long [1].", rag.CitationCheck{Valid: 1}},
		{"Spaces", "The main runway is 3,200 metres long [ 1 ].", "The main runway is 3,200 metres long [1].", rag.CitationCheck{Valid: 1}},
		{"CodeLeftAlone", "Use `arr[0]` and\n```\nx[5] = 1\n```\nthe runway [1].",
			"Use `arr[0]` and\n```\nx[5] = 1\n```\nthe runway [1].", rag.CitationCheck{Valid: 1}},
		{"LinkLeftAlone", "See [1](http://example.com) for the main runway [1].",
			"See [1](http://example.com) for the main runway [1].", rag.CitationCheck{Valid: 1}},
		{"NoCitations", "The documents do not cover this question.", "The documents do not cover this question.", rag.CitationCheck{}},
		{"Korean", "제1활주로는 길이 3,750미터이다 [CITE:3].", "제1활주로는 길이 3,750미터이다 [3].", rag.CitationCheck{Valid: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, check := generate.CheckCitations(tc.in, passages)
			if got != tc.want {
				t.Errorf("text\n got %q\nwant %q", got, tc.want)
			}
			// Support is TestWeakSupport's subject.
			check.WeaklySupported = 0
			if check != tc.check {
				t.Errorf("check %+v, want %+v", check, tc.check)
			}
		})
	}
}

func TestWeakSupport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		// weak are the weakly supported sentences, as text.
		weak []string
	}{
		{"Supported", "The main runway is 3,200 metres long and 45 metres wide [1]. Terminal 2 handles international flights [2].", nil},
		{"Paraphrase", "The airport's main runway measures 3,200 metres [1].", nil},
		{"Unsupported", "The main runway is 3,200 metres long [1]. Nine thousand cleaners joined unions last winter [1].",
			[]string{"Nine thousand cleaners joined unions last winter [1]."}},
		{"WrongPassage", "Terminal 2 handles international flights of twelve airlines [1].",
			[]string{"Terminal 2 handles international flights of twelve airlines [1]."}},
		{"EitherPassage", "Terminal 2 opened in 2018 and the runway is 3,200 metres long [1][2].", nil},
		{"MarkerAfterPeriod", "Cleaners and pilots unionised recently. [2] The runway is 3,200 metres [1].",
			[]string{"Cleaners and pilots unionised recently. [2]"}},
		{"Uncited", "The airport employs nine thousand cleaners.", nil},
		{"TooShort", "Yes [2].", nil},
		{"Korean", "제1활주로는 길이 3,750미터, 폭 60미터이다 [3]. 이 공항은 세계 최대의 화물 허브로 꼽힌다 [3].",
			[]string{"이 공항은 세계 최대의 화물 허브로 꼽힌다 [3]."}},
		{"Lines", "- Runway: 3,200 metres long [1]\n- Staff canteen serves vegetarian lunches [1]",
			[]string{"- Staff canteen serves vegetarian lunches [1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := generate.VerifyCitations(tc.in, passages)
			var got []string
			for _, s := range r.Weak {
				got = append(got, r.Text[s.Start:s.End])
				if s.Support >= generate.MinSupport || len(s.Citations) == 0 {
					t.Errorf("span %+v", s)
				}
			}
			if !reflect.DeepEqual(got, tc.weak) {
				t.Errorf("weak\n got %q\nwant %q", got, tc.weak)
			}
			if r.Check.WeaklySupported != len(tc.weak) {
				t.Errorf("WeaklySupported %d", r.Check.WeaklySupported)
			}
		})
	}
}

func TestCited(t *testing.T) {
	t.Parallel()
	r := generate.VerifyCitations("B [2]. A [1][2]. C [9].", passages)
	if !reflect.DeepEqual(r.Cited, []int{2, 1}) {
		t.Fatalf("cited %v", r.Cited)
	}
}
