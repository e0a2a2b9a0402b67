package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/testkit"
)

// delivery is one request a webhook receiver got.
type delivery struct {
	path, signature, eventID, timestamp string
	body                                []byte
	event                               struct {
		ID         string `json:"id"`
		Event      string `json:"event"`
		Timestamp  int64  `json:"timestamp"`
		Attempt    int    `json:"attempt"`
		Collection struct {
			Name string `json:"name"`
		} `json:"collection"`
		Data struct {
			Document struct {
				ID        string `json:"id"`
				Title     string `json:"title"`
				Status    string `json:"status"`
				Version   int    `json:"version"`
				ErrorCode string `json:"error_code"`
				Error     string `json:"error"`
			} `json:"document"`
			Question struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			} `json:"question"`
			Answer struct {
				IsAI bool   `json:"is_ai"`
				Body string `json:"body"`
			} `json:"answer"`
		} `json:"data"`
	}
}

// hookReceiver is a webhook receiver on loopback, as a user would write one: it keeps what it gets, and
// /flaky answers 500 to its first request.
type hookReceiver struct {
	mu    sync.Mutex
	got   []delivery
	flaky int
	srv   *httptest.Server
}

func newHookReceiver(t *testing.T) *hookReceiver {
	rc := &hookReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d := delivery{path: r.URL.Path, signature: r.Header.Get("X-Ragd-Signature"), eventID: r.Header.Get("X-Ragd-Event-Id"),
			timestamp: r.Header.Get("X-Ragd-Timestamp"), body: b}
		if err := json.Unmarshal(b, &d.event); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.got = append(rc.got, d)
		if r.URL.Path == "/flaky" {
			if rc.flaky++; rc.flaky == 1 {
				http.Error(w, "receiver restarting", http.StatusInternalServerError)
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// wait returns the deliveries to path of event once there are n of them.
func (rc *hookReceiver) wait(t *testing.T, path, event string, n int) []delivery {
	t.Helper()
	var out []delivery
	for deadline := time.Now().Add(90 * time.Second); ; {
		out = nil
		rc.mu.Lock()
		for _, d := range rc.got {
			if d.path == path && d.event.Event == event {
				out = append(out, d)
			}
		}
		rc.mu.Unlock()
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s deliveries to %s, want %d", len(out), event, path, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// verify checks a delivery as the docs tell receivers to: the HMAC-SHA256 of the raw body under the secret,
// compared in constant time, and a timestamp within five minutes that matches the signed body's.
func verify(t *testing.T, secret string, d delivery) {
	t.Helper()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(d.body)
	if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); !hmac.Equal([]byte(d.signature), []byte(want)) {
		t.Errorf("%s: signature %q, want %q", d.event.Event, d.signature, want)
	}
	ts, err := strconv.ParseInt(d.timestamp, 10, 64)
	if err != nil || ts != d.event.Timestamp || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		t.Errorf("%s: timestamp header %q, body %d", d.event.Event, d.timestamp, d.event.Timestamp)
	}
	if d.eventID == "" || d.eventID != d.event.ID {
		t.Errorf("%s: event id header %q, body %q", d.event.Event, d.eventID, d.event.ID)
	}
}

// TestWebhooksShow is issue 15's webhooks on the real binary with a real receiver on loopback: signed
// document.ready, document.failed (a broken PDF) and question.answered (the board's answer pass) events;
// a receiver that answers 500 then 204 gets the event again and the log shows both attempts; the URL is
// refused without RAGD_WEBHOOK_ALLOW_PRIVATE and accepted with it.
func TestWebhooksShow(t *testing.T) {
	rc := newHookReceiver(t)
	data := t.TempDir()
	srv := testkit.Serve(t, testkit.CleanEnv("RAGD_DATA_DIR="+data, "RAGD_WEBHOOK_ALLOW_PRIVATE=true", "RAGD_WEBHOOK_RETRY_BASE=200ms"))
	call := func(method, path string, body any, want int) []byte {
		t.Helper()
		status, b := srv.Call(t, "", method, path, body)
		if status != want {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		return b
	}
	call("POST", "/api/collections", map[string]any{"name": "harbour"}, http.StatusCreated)
	var main, flaky struct {
		ID     string   `json:"id"`
		Secret string   `json:"secret"`
		Events []string `json:"events"`
	}
	json.Unmarshal(call("POST", "/api/collections/harbour/webhooks", map[string]any{"url": rc.srv.URL + "/main", "description": "all events"},
		http.StatusCreated), &main)
	json.Unmarshal(call("POST", "/api/collections/harbour/webhooks", map[string]any{"url": rc.srv.URL + "/flaky", "events": []string{"document.ready"}},
		http.StatusCreated), &flaky)
	if main.Secret == "" || len(main.Events) != 3 || flaky.Secret == "" || flaky.Secret == main.Secret {
		t.Fatalf("webhooks %+v %+v", main, flaky)
	}
	if b := call("GET", "/api/collections/harbour/webhooks", nil, http.StatusOK); strings.Contains(string(b), main.Secret) {
		t.Fatalf("the list shows a secret: %s", b)
	}

	// document.ready for a text document.
	var up struct {
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	json.Unmarshal(call("POST", "/api/documents", map[string]any{"collection": "harbour", "title": "Tide tables",
		"text": "# Tide tables\n\nHigh water at the northern quay comes forty minutes after the lighthouse bell."}, http.StatusAccepted), &up)
	ready := rc.wait(t, "/main", "document.ready", 1)[0]
	verify(t, main.Secret, ready)
	if doc := ready.event.Data.Document; doc.ID != up.Documents[0].ID || doc.Status != "ready" || doc.Version != 1 || doc.Title != "Tide tables" ||
		ready.event.Collection.Name != "harbour" || ready.event.Attempt != 1 {
		t.Errorf("document.ready %s", ready.body)
	}

	// document.failed for a file whose extraction fails: a "PDF" that is not one.
	json.Unmarshal(call("POST", "/api/documents", map[string]any{"collection": "harbour", "name": "broken.pdf",
		"text": "%PDF-1.7\nthis is not a PDF body at all, only its first line\n%%EOF"}, http.StatusAccepted), &up)
	failed := rc.wait(t, "/main", "document.failed", 1)[0]
	verify(t, main.Secret, failed)
	if doc := failed.event.Data.Document; doc.ID != up.Documents[0].ID || doc.Status != "failed" || doc.ErrorCode == "" || doc.Error == "" {
		t.Errorf("document.failed %s", failed.body)
	}

	// question.answered for the board's answer pass.
	var q struct {
		ID string `json:"id"`
	}
	json.Unmarshal(call("POST", "/api/questions", map[string]any{"collection": "harbour", "title": "When is high water at the northern quay?"},
		http.StatusCreated), &q)
	call("POST", "/api/qa/runs?wait=true", nil, http.StatusOK)
	answered := rc.wait(t, "/main", "question.answered", 1)[0]
	verify(t, main.Secret, answered)
	if d := answered.event.Data; d.Question.ID != q.ID || !d.Answer.IsAI || d.Answer.Body == "" {
		t.Errorf("question.answered %s", answered.body)
	}

	// The flaky receiver got document.ready twice — the same event, retried after its 500 — and the
	// delivery log says so; the events it did not subscribe to never reached it.
	retried := rc.wait(t, "/flaky", "document.ready", 2)
	for _, d := range retried {
		verify(t, flaky.Secret, d)
	}
	if retried[0].eventID != retried[1].eventID || retried[0].event.Attempt != 1 || retried[1].event.Attempt != 2 {
		t.Errorf("retry: %s then %s", retried[0].body, retried[1].body)
	}
	var log struct {
		Deliveries []struct {
			EventID    string `json:"event_id"`
			Event      string `json:"event"`
			Attempt    int    `json:"attempt"`
			StatusCode int    `json:"status_code"`
			Error      string `json:"error"`
			Outcome    string `json:"outcome"`
		} `json:"deliveries"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		json.Unmarshal(call("GET", "/api/collections/harbour/webhooks/"+flaky.ID+"/deliveries", nil, http.StatusOK), &log)
		if len(log.Deliveries) >= 2 || time.Now().After(deadline) {
			break
		}
	}
	got := []string{}
	for _, d := range log.Deliveries {
		got = append(got, fmt.Sprintf("%s %d %d %s", d.Event, d.Attempt, d.StatusCode, d.Outcome))
	}
	if strings.Join(got, "; ") != "document.ready 2 204 delivered; document.ready 1 500 retrying" ||
		!strings.Contains(log.Deliveries[1].Error, "receiver restarting") || log.Deliveries[0].EventID != retried[0].eventID {
		t.Errorf("delivery log %v (%+v)", got, log.Deliveries)
	}
	rc.mu.Lock()
	for _, d := range rc.got {
		if d.path == "/flaky" && d.event.Event != "document.ready" {
			t.Errorf("the flaky webhook got %s, which it did not subscribe to", d.event.Event)
		}
	}
	rc.mu.Unlock()

	// A ping answers with the receiver's status at once.
	if b := call("POST", "/api/collections/harbour/webhooks/"+main.ID+"/ping", nil, http.StatusOK); !strings.Contains(string(b), `"status_code":204`) {
		t.Errorf("ping: %s", b)
	}
	verify(t, main.Secret, rc.wait(t, "/main", "ping", 1)[0])
	srv.Stop(t)

	// The boundary of RAGD_WEBHOOK_ALLOW_PRIVATE, on the same data directory through the CLI: a loopback URL
	// is refused without the variable, accepted with it.
	r := ragd(t, []string{"RAGD_DATA_DIR=" + data}, "webhooks", "add", "--collection", "harbour", rc.srv.URL+"/cli")
	if r.code == 0 || !strings.Contains(r.stderr, "RAGD_WEBHOOK_ALLOW_PRIVATE") {
		t.Errorf("add without the variable: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ragd(t, []string{"RAGD_DATA_DIR=" + data, "RAGD_WEBHOOK_ALLOW_PRIVATE=true"}, "webhooks", "add", "--collection", "harbour",
		"--event", "question.answered", rc.srv.URL+"/cli")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "whsec_") {
		t.Errorf("add with the variable: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ragd(t, []string{"RAGD_DATA_DIR=" + data}, "webhooks", "list", "--collection", "harbour")
	if r.code != 0 || !strings.Contains(r.stdout, "3 webhook(s)") || strings.Contains(r.stdout, "whsec_") {
		t.Errorf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ragd(t, []string{"RAGD_DATA_DIR=" + data}, "webhooks", "deliveries", flaky.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "retrying  HTTP 500") || !strings.Contains(r.stdout, "delivered HTTP 204") {
		t.Errorf("deliveries: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ragd(t, []string{"RAGD_DATA_DIR=" + data}, "webhooks", "remove", flaky.ID)
	if r.code != 0 {
		t.Errorf("remove: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = ragd(t, []string{"RAGD_DATA_DIR=" + data}, "audit", "--action", "webhook.added")
	// Two by the API, the refused and the accepted one by the CLI.
	if r.code != 0 || strings.Count(r.stdout, "webhook.added") != 4 || !strings.Contains(r.stdout, "4 event(s)") ||
		!regexp.MustCompile(`webhook\.added +failed`).MatchString(r.stdout) {
		t.Errorf("audit of webhook.added: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
