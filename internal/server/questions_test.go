package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/ingest"
	"github.com/ragd/ragd/internal/qa"
	"github.com/ragd/ragd/internal/rag"
)

func TestQuestions(t *testing.T) {
	b := setup(t, nil)
	ctx := t.Context()
	c := &rag.Collection{Name: "course", Settings: map[string]any{qa.NotFoundSetting: "강의에서 다루지 않음: 강의 내용에 없는 질문입니다."}}
	if err := b.store.CreateCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	b.ingest(t, ingest.Request{Collection: "course", Name: "3-2.md", Metadata: map[string]any{"lecture_name": "전환 API", "week": "3주차"},
		Data: []byte("# 전환 API\n\n픽셀과 전환 API를 같이 쓰면 같은 구매가 두 번 잡힐 수 있습니다. 그래서 중복 제거가 필요하고, " +
			"두 이벤트에 같은 event_id를 넣어야 합니다. event_id에는 주문 번호를 쓰면 됩니다.\n")})

	post := func(t *testing.T, title string) rag.Question {
		t.Helper()
		r, ctype := jsonBody(map[string]any{"collection": "course", "title": title})(t)
		resp, body := b.do(t, request{method: "POST", path: "/api/questions", ctype: ctype, body: r})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d %s", resp.StatusCode, trim(body))
		}
		return decode[rag.Question](t, body)
	}
	dup1 := post(t, "픽셀이랑 전환 API를 같이 쓰면 구매가 두 번 잡히나요?")
	dup2 := post(t, "전환 API 연동 후 구매가 두 번 잡혀요. 중복 제거는 어떻게 하나요?")
	other := post(t, "틱톡 광고 픽셀은 어디에 설치하나요?")
	if dup1.ID == "" || dup1.Status != rag.QuestionOpen || dup1.Space == "" {
		t.Fatalf("created %+v: want an id, open and embedded", dup1)
	}

	b.run(t, []scenario{
		{name: "ErrQuestionRequired", method: "POST", path: "/api/questions", status: 400, code: rag.CodeQuestionRequired,
			body: jsonBody(map[string]any{"collection": "course", "title": "  "})},
		{name: "Title200", method: "POST", path: "/api/questions", status: 201,
			body: jsonBody(map[string]any{"collection": "course", "title": strings.Repeat("가", rag.MaxQuestionTitle)})},
		{name: "ErrTitle201", method: "POST", path: "/api/questions", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"collection": "course", "title": strings.Repeat("가", rag.MaxQuestionTitle+1)})},
		{name: "Body4000", method: "POST", path: "/api/questions", status: 201,
			body: jsonBody(map[string]any{"collection": "course", "title": "x", "body": strings.Repeat("가", rag.MaxQuestionBody)})},
		{name: "ErrBodyTooLong", method: "POST", path: "/api/questions", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"collection": "course", "title": "x", "body": strings.Repeat("가", rag.MaxQuestionBody+1)})},
		{name: "ErrTooLarge", method: "POST", path: "/api/questions", status: 413, code: rag.CodePayloadTooLarge,
			body: jsonBody(map[string]any{"collection": "course", "title": "x", "body": strings.Repeat("a", MaxBoardJSON)})},
		{name: "ErrNoCollection", method: "POST", path: "/api/questions", status: 404, code: rag.CodeNotFound,
			body: jsonBody(map[string]any{"collection": "nope", "title": "x"})},
		{name: "List", method: "GET", path: "/api/questions?collection=course&status=open", status: 200,
			contains: []string{`"questions"`, dup1.ID, other.ID}},
		{name: "ErrStatus", method: "GET", path: "/api/questions?status=closed", status: 400, code: rag.CodeInvalid},
		{name: "ErrGetUnknown", method: "GET", path: "/api/questions/nope", status: 404, code: rag.CodeNotFound},
		{name: "ErrSimilarK", method: "GET", path: "/api/questions/" + dup1.ID + "/similar?k=51", status: 400, code: rag.CodeInvalid},
		{name: "ErrAnswerEmpty", method: "POST", path: "/api/questions/" + other.ID + "/answers", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"body": " "})},
		{name: "Answer20000", method: "POST", path: "/api/questions/" + other.ID + "/answers", status: 201,
			body: jsonBody(map[string]any{"body": strings.Repeat("가", rag.MaxAnswerBody)})},
		{name: "ErrAnswer20001", method: "POST", path: "/api/questions/" + other.ID + "/answers", status: 400, code: rag.CodeInvalid,
			body: jsonBody(map[string]any{"body": strings.Repeat("가", rag.MaxAnswerBody+1)})},
		{name: "Similar50", method: "GET", path: "/api/questions/" + dup1.ID + "/similar?k=50", status: 200},
		{name: "ErrSimilarNoText", method: "GET", path: "/api/questions/similar?collection=course&q=%20", status: 400, code: rag.CodeQuestionRequired},
		{name: "ErrAnswerUnknown", method: "POST", path: "/api/questions/nope/answers", status: 404, code: rag.CodeNotFound,
			body: jsonBody(map[string]any{"body": "hi"})},
		{name: "ErrWait", method: "POST", path: "/api/qa/runs?wait=maybe", status: 400, code: rag.CodeInvalid},
	})

	t.Run("Similar", func(t *testing.T) {
		_, body := b.do(t, request{method: "GET", path: "/api/questions/" + dup1.ID + "/similar?k=3"})
		sim := decode[struct{ Questions []qa.Similar }](t, body).Questions
		if len(sim) == 0 || sim[0].ID != dup2.ID || sim[0].Score <= 0 {
			t.Fatalf("similar to %q = %+v; want %s first", dup1.Title, sim, dup2.ID)
		}
		for _, s := range sim {
			if s.ID == dup1.ID {
				t.Error("a question is not similar to itself")
			}
		}
		_, body = b.do(t, request{method: "GET", path: "/api/questions/similar?collection=course&q=" + "전환%20API%20중복%20제거"})
		sim = decode[struct{ Questions []qa.Similar }](t, body).Questions
		if len(sim) == 0 || sim[0].ID == other.ID {
			t.Errorf("similar while typing = %+v", sim)
		}
	})

	t.Run("RunAndAnswers", func(t *testing.T) {
		resp, body := b.do(t, request{method: "POST", path: "/api/qa/runs?wait=true"})
		if resp.StatusCode != 200 {
			t.Fatalf("run: %d %s", resp.StatusCode, trim(body))
		}
		run := decode[rag.QARun](t, body)
		if run.FinishedAt == nil || run.Answered != 5 || run.Failed != 0 {
			t.Fatalf("run = %+v, want 5 answered (3 posted, the 200-character title and the 4,000-character body)", run)
		}
		_, body = b.do(t, request{method: "GET", path: "/api/questions/" + dup1.ID})
		th := decode[qa.Thread](t, body)
		if th.Status != rag.QuestionAnswered || len(th.Answers) != 1 || !th.Answers[0].IsAI || th.Answers[0].Author != nil {
			t.Fatalf("thread = %+v", th)
		}
		ai := th.Answers[0]
		if !strings.Contains(ai.Body, "event_id") || len(ai.SourceRefs) == 0 {
			t.Fatalf("AI answer = %+v", ai)
		}
		ref := ai.SourceRefs[0]
		if ref.Metadata["week"] != "3주차" || ref.Metadata["lecture_name"] != "전환 API" || ref.Title == "" || ref.DocumentID == "" {
			t.Errorf("source ref = %+v, want the lecture's metadata", ref)
		}
		// The pass gave every open question its answer: a second pass has nothing to do.
		_, body = b.do(t, request{method: "POST", path: "/api/qa/runs?wait=true"})
		if again := decode[rag.QARun](t, body); again.Answered != 0 || again.Failed != 0 {
			t.Errorf("second run = %+v, want nothing done", again)
		}
		resp, body = b.do(t, request{method: "POST", path: "/api/questions/" + dup1.ID + "/answers", ctype: "application/json",
			body: strings.NewReader(`{"body":"주문 번호를 event_id로 쓰세요."}`)})
		if resp.StatusCode != http.StatusCreated || decode[rag.BoardAnswer](t, body).IsAI {
			t.Fatalf("person's answer: %d %s", resp.StatusCode, trim(body))
		}
		_, body = b.do(t, request{method: "GET", path: "/api/questions/" + dup1.ID})
		if th := decode[qa.Thread](t, body); len(th.Answers) != 2 || th.Answers[1].IsAI || th.Answers[1].Author == nil {
			t.Errorf("answers after a person's = %+v", th.Answers)
		}
		_, body = b.do(t, request{method: "GET", path: "/api/qa/runs"})
		if runs := decode[struct{ Runs []rag.QARun }](t, body).Runs; len(runs) != 2 || runs[0].Trigger != qa.TriggerAPI {
			t.Errorf("runs = %+v", runs)
		}
		resp, body = b.do(t, request{method: "GET", path: "/api/qa/runs/" + run.ID})
		if resp.StatusCode != 200 || decode[rag.QARun](t, body).Answered != 5 {
			t.Errorf("run %s: %d %s", run.ID, resp.StatusCode, trim(body))
		}
	})

	t.Run("RunInBackground", func(t *testing.T) {
		post(t, "새 질문: 중복 제거에 쓰는 값은?")
		resp, body := b.do(t, request{method: "POST", path: "/api/qa/runs"})
		run := decode[rag.QARun](t, body)
		if resp.StatusCode != http.StatusAccepted || run.ID == "" || run.FinishedAt != nil {
			t.Fatalf("start: %d %s", resp.StatusCode, trim(body))
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			_, body = b.do(t, request{method: "GET", path: "/api/qa/runs/" + run.ID})
			if got := decode[rag.QARun](t, body); got.FinishedAt != nil {
				if got.Answered != 1 {
					t.Errorf("background run = %+v", got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the background run did not finish")
			}
		}
		if resp, _ := b.do(t, request{method: "GET", path: "/api/qa/runs/nope"}); resp.StatusCode != 404 {
			t.Errorf("unknown run: %d", resp.StatusCode)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		if resp, body := b.do(t, request{method: "DELETE", path: "/api/questions/" + other.ID}); resp.StatusCode != 204 {
			t.Fatalf("delete: %d %s", resp.StatusCode, trim(body))
		}
		if resp, _ := b.do(t, request{method: "DELETE", path: "/api/questions/" + other.ID}); resp.StatusCode != 404 {
			t.Errorf("delete again: %d, want 404", resp.StatusCode)
		}
	})
}

// TestChatSourcesCarryMetadata: a chat answer's sources say which document metadata (lecture, week) and
// which chunk they come from.
func TestChatSourcesCarryMetadata(t *testing.T) {
	b := setup(t, nil)
	b.ingest(t, ingest.Request{Name: "6-2.md", Metadata: map[string]any{"lecture_name": "학습 단계", "week": "6주차"},
		Data: []byte("# 학습 단계\n\n학습 단계는 광고 세트가 7일 안에 최적화 이벤트를 약 50회 얻으면 끝납니다.\n")})
	_, body := b.do(t, request{method: "POST", path: "/api/chat", ctype: "application/json",
		body: strings.NewReader(`{"question":"학습 단계는 언제 끝나나요?"}`)})
	res := decode[rag.AnswerView](t, body)
	if len(res.Sources) == 0 {
		t.Fatalf("no sources: %s", trim(body))
	}
	s := res.Sources[0]
	if s.Metadata["week"] != "6주차" || s.Metadata["lecture_name"] != "학습 단계" || s.ChunkIndex != 0 ||
		!strings.Contains(string(body), `"chunk_index":0`) {
		t.Errorf("source = %+v", s)
	}
}

// TestUploadMetadataTable: a meta_csv part gives each uploaded file its row's metadata; files without a
// row and rows without a file are reported.
func TestUploadMetadataTable(t *testing.T) {
	b := setup(t, nil)
	if err := b.store.CreateCollection(t.Context(), &rag.Collection{Name: "course",
		Settings: map[string]any{ingest.MetadataTypesSetting: map[string]any{"week": "string"}}}); err != nil {
		t.Fatal(err)
	}
	table := "file,lecture_name,week\n1-1.md,\"계정, 캠페인 구조\",1\n9-9.md,없는 강의,9\n"
	b.run(t, []scenario{
		{name: "OK", method: "POST", path: "/api/documents", status: 202,
			body: multipartBody([]file{{"1-1.md", []byte("# 계정\n\n비즈니스 관리자에서 파트너로 추가하세요.")}, {"extra.md", []byte("# 기타\n\n부록입니다.")}},
				map[string]string{"collection": "course", "meta_csv": table, "metadata": `{"course":"meta"}`}),
			check: func(t *testing.T, _ *http.Response, body []byte) {
				res := decode[struct {
					Documents     []documentView
					MetadataTable metaReport `json:"metadata_table"`
				}](t, body)
				if len(res.Documents) != 2 {
					t.Fatalf("documents = %+v", res.Documents)
				}
				m := res.Documents[0].Metadata
				if m["lecture_name"] != "계정, 캠페인 구조" || m["week"] != "1" || m["course"] != "meta" {
					t.Errorf("1-1.md metadata = %v (week typed string by the collection)", m)
				}
				if m := res.Documents[1].Metadata; m["course"] != "meta" || m["week"] != nil {
					t.Errorf("extra.md metadata = %v, want the metadata field only", m)
				}
				rep := res.MetadataTable
				if len(rep.FilesWithoutRow) != 1 || rep.FilesWithoutRow[0] != "extra.md" ||
					len(rep.UnmatchedRows) != 1 || !strings.Contains(rep.UnmatchedRows[0], "9-9.md") {
					t.Errorf("report = %+v", rep)
				}
			}},
		{name: "ErrNoKeyColumn", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: multipartBody([]file{{"a.md", []byte("# a\n\ntext")}}, map[string]string{"collection": "course", "meta_csv": "name,week\na.md,1\n"})},
		{name: "MetaKey", method: "POST", path: "/api/documents", status: 202, contains: []string{`"week":"2"`},
			body: multipartBody([]file{{"a.md", []byte("# a\n\ntext")}}, map[string]string{"collection": "course", "meta_csv": "name,week\na.md,2\n", "meta_key": "name"})},
		{name: "ErrDuplicateRow", method: "POST", path: "/api/documents", status: 400, code: rag.CodeInvalid,
			body: multipartBody([]file{{"b.md", []byte("# b\n\ntext")}}, map[string]string{"collection": "course", "meta_csv": "file,week\nb.md,1\nb.md,2\n"})},
	})
}
