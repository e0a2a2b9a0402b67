package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/webhooks"
)

// receiver is a webhook receiver on loopback that answers with the next of its statuses (the last one
// once they run out) and keeps what it got.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []*http.Request
	bodies   [][]byte
	srv      *httptest.Server
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	rc := &receiver{statuses: statuses}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got, rc.bodies = append(rc.got, r), append(rc.bodies, body)
		status := rc.statuses[min(len(rc.got), len(rc.statuses))-1]
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func webhookJobs(t testing.TB, r *Runner) []*rivertype.JobRow {
	t.Helper()
	res, err := r.client.JobList(context.Background(), river.NewJobListParams().Kinds(WebhookArgs{}.Kind()).
		States(rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded,
			rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled))
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

// TestWebhookDeliveries runs deliveries as River jobs on both engines: a receiver that fails twice gets
// the event on the third try with the same event ID and a valid signature each time, every attempt in the
// log; one that never accepts it exhausts the attempts; a removed webhook's job stops without a request.
func TestWebhookDeliveries(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		// setup opens a working runner (not started) delivering for a webhook of collection "harbour" whose
		// receiver answers statuses.
		setup := func(t *testing.T, statuses ...int) (*Runner, *webhooks.Service, *webhooks.Added, *receiver, webhooks.Store) {
			db := b.fresh(t)
			st := b.store(t, db).(webhooks.Store)
			coll := &rag.Collection{Name: "harbour", Owner: "user:alice"}
			if err := st.(rag.Store).CreateCollection(t.Context(), coll); err != nil {
				t.Fatal(err)
			}
			rc := newReceiver(t, statuses...)
			var r *Runner
			svc := webhooks.New(st, func(ctx context.Context, ev rag.WebhookEvent) error { return r.EnqueueWebhook(ctx, ev) },
				webhooks.Options{AllowPrivate: true, Timeout: 5 * time.Second})
			opt := testOptions(t)
			opt.Webhooks, opt.WebhookMaxAttempts, opt.WebhookRetryBase, opt.WebhookRetryMax = svc, 3, 10*time.Millisecond, 50*time.Millisecond
			r = b.open(t, db, nil, newTestProc(), opt)
			added, err := svc.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: rc.srv.URL + "/hook", Owner: "user:alice"})
			if err != nil {
				t.Fatal(err)
			}
			return r, svc, added, rc, st
		}
		emit := func(t *testing.T, svc *webhooks.Service, st webhooks.Store) {
			t.Helper()
			c, err := st.GetCollection(t.Context(), "harbour")
			if err != nil {
				t.Fatal(err)
			}
			doc := &rag.Document{ID: "doc-1", CollectionID: c.ID, Title: "tide tables", Status: rag.StatusReady, Version: 1}
			if err := svc.Emit(t.Context(), rag.EventDocumentReady, c.ID, webhooks.DocumentData(doc)); err != nil {
				t.Fatal(err)
			}
		}

		t.Run("RetriedUntilAccepted", func(t *testing.T) {
			b.parallel(t)
			r, svc, added, rc, st := setup(t, 500, 503, 200)
			start(t, r)
			emit(t, svc, st)
			waitFor(t, "delivery job completed", func() bool {
				jobs := webhookJobs(t, r)
				return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCompleted
			})
			if n := rc.count(); n != 3 {
				t.Fatalf("receiver got %d requests, want 3", n)
			}
			ids := map[string]bool{}
			for i, req := range rc.got {
				m := hmac.New(sha256.New, []byte(added.Secret))
				m.Write(rc.bodies[i])
				if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); req.Header.Get("X-Ragd-Signature") != want {
					t.Errorf("attempt %d: signature %q, want %q", i+1, req.Header.Get("X-Ragd-Signature"), want)
				}
				ids[req.Header.Get("X-Ragd-Event-Id")] = true
			}
			if len(ids) != 1 {
				t.Errorf("event IDs across attempts %v, want one", ids)
			}
			log, err := st.WebhookDeliveries(t.Context(), added.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range log {
				got = append(got, d.Outcome+"/"+http.StatusText(d.StatusCode))
			}
			want := []string{"delivered/OK", "retrying/Service Unavailable", "retrying/Internal Server Error"}
			if !slices.Equal(got, want) {
				t.Fatalf("delivery log %v, want %v", got, want)
			}
		})

		t.Run("AttemptsExhausted", func(t *testing.T) {
			b.parallel(t)
			r, svc, added, rc, st := setup(t, 500)
			start(t, r)
			emit(t, svc, st)
			waitFor(t, "delivery job discarded", func() bool {
				jobs := webhookJobs(t, r)
				return len(jobs) == 1 && jobs[0].State == rivertype.JobStateDiscarded
			})
			if n := rc.count(); n != 3 {
				t.Fatalf("receiver got %d requests, want MaxAttempts = 3", n)
			}
			log, _ := st.WebhookDeliveries(t.Context(), added.ID, 10)
			if len(log) != 3 || log[0].Outcome != rag.DeliveryFailed || log[1].Outcome != rag.DeliveryRetrying {
				t.Fatalf("delivery log %+v", log)
			}
		})

		t.Run("RemovedWebhookStops", func(t *testing.T) {
			b.parallel(t)
			r, svc, added, rc, st := setup(t, 200)
			emit(t, svc, st) // queued before the runner works
			if err := svc.Remove(t.Context(), "harbour", added.ID); err != nil {
				t.Fatal(err)
			}
			start(t, r)
			waitFor(t, "delivery job cancelled", func() bool {
				jobs := webhookJobs(t, r)
				return len(jobs) == 1 && jobs[0].State == rivertype.JobStateCancelled
			})
			if n := rc.count(); n != 0 {
				t.Fatalf("receiver got %d requests for a removed webhook", n)
			}
		})
	})
}
