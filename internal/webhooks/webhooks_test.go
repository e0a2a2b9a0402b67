package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/rag"
	"github.com/ragd/ragd/internal/store/sqlite"
	"github.com/ragd/ragd/internal/webhooks"
)

// setup opens a temp-file store with collection "harbour" and a Service over it that queues events into
// queued (nil: a process without jobs).
func setup(t *testing.T, opt webhooks.Options, queued *[]rag.WebhookEvent) (*webhooks.Service, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ragd.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateCollection(t.Context(), &rag.Collection{Name: "harbour", Owner: "user:alice"}); err != nil {
		t.Fatal(err)
	}
	var enq webhooks.Enqueue
	if queued != nil {
		enq = func(_ context.Context, ev rag.WebhookEvent) error { *queued = append(*queued, ev); return nil }
	}
	return webhooks.New(st, enq, opt), st
}

func add(t *testing.T, svc *webhooks.Service, url string, events ...string) *webhooks.Added {
	t.Helper()
	a, err := svc.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: url, Events: events, Owner: "user:alice"})
	if err != nil {
		t.Fatalf("Add(%s): %v", url, err)
	}
	return a
}

func TestAdd(t *testing.T) {
	t.Parallel()
	// Names resolve through this table, not DNS: the test reaches no network.
	names := map[string][]netip.Addr{
		"hooks.example.com": {netip.MustParseAddr("93.184.215.14")},
		"localhost":         {netip.MustParseAddr("127.0.0.1")},
		"inside.example":    {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.1.2.3")},
	}
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := names[host]; ok {
			return a, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	strict, _ := setup(t, webhooks.Options{Resolve: resolve}, nil)
	open, _ := setup(t, webhooks.Options{Resolve: resolve, AllowPrivate: true}, nil)

	t.Run("OK", func(t *testing.T) {
		a := add(t, strict, "https://hooks.example.com/ragd?team=ops", rag.EventDocumentFailed, rag.EventDocumentFailed)
		if !strings.HasPrefix(a.Secret, "whsec_") || len(a.Secret) != len("whsec_")+43 {
			t.Errorf("secret %q", a.Secret)
		}
		if len(a.Events) != 1 || a.Events[0] != rag.EventDocumentFailed {
			t.Errorf("events %v, want [document.failed] once", a.Events)
		}
		all := add(t, strict, "https://hooks.example.com/all")
		if strings.Join(all.Events, ",") != "document.ready,document.failed,question.answered" {
			t.Errorf("default events %v", all.Events)
		}
		list, err := strict.List(t.Context(), "harbour")
		if err != nil || len(list) != 2 {
			t.Fatalf("List = %v, %v", list, err)
		}
		b, _ := json.Marshal(list)
		if strings.Contains(string(b), a.Secret) || strings.Contains(string(b), "secret") {
			t.Errorf("the list shows a secret: %s", b)
		}
	})

	// The boundary of RAGD_WEBHOOK_ALLOW_PRIVATE: the same URLs refused without it and accepted with it;
	// link-local refused either way.
	for _, u := range []string{"http://127.0.0.1:9000/hook", "http://localhost/hook", "http://[::1]/hook", "http://10.0.0.7/",
		"http://192.168.1.20/", "http://100.64.0.1/", "https://inside.example/"} {
		t.Run("Private "+u, func(t *testing.T) {
			_, err := strict.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: u, Owner: "user:alice"})
			if rag.ErrorCode(err) != rag.CodeInvalid || !strings.Contains(rag.ErrorMessage(err), "RAGD_WEBHOOK_ALLOW_PRIVATE") {
				t.Errorf("without the variable: %v, want invalid_request naming RAGD_WEBHOOK_ALLOW_PRIVATE", err)
			}
			if _, err := open.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: u, Owner: "user:alice"}); err != nil {
				t.Errorf("with the variable: %v", err)
			}
		})
	}
	for _, u := range []string{"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://0.0.0.0/", "http://[fd00:ec2::254]/"} {
		t.Run("AlwaysRefused "+u, func(t *testing.T) {
			if _, err := open.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: u, Owner: "user:alice"}); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("with the variable: %v, want invalid_request", err)
			}
		})
	}

	bad := map[string]webhooks.AddRequest{
		"NoURL":           {URL: ""},
		"Scheme":          {URL: "ftp://hooks.example.com/"},
		"NoHost":          {URL: "https:///path"},
		"UserInfo":        {URL: "https://user:pw@hooks.example.com/"},
		"Unresolved":      {URL: "https://nowhere.invalid/"},
		"UnknownEvent":    {URL: "https://hooks.example.com/", Events: []string{"document.deleted"}},
		"PingNotAnEvent":  {URL: "https://hooks.example.com/", Events: []string{rag.EventPing}},
		"URLTooLong":      {URL: "https://hooks.example.com/" + strings.Repeat("a", webhooks.MaxURLBytes-len("https://hooks.example.com/")+1)},
		"DescriptionLong": {URL: "https://hooks.example.com/", Description: strings.Repeat("가", webhooks.MaxDescription+1)},
	}
	for name, req := range bad {
		t.Run("Err"+name, func(t *testing.T) {
			req.Collection, req.Owner = "harbour", "user:alice"
			if _, err := strict.Add(t.Context(), req); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("Add: %v, want invalid_request", err)
			}
		})
	}
	t.Run("AtTheLimits", func(t *testing.T) {
		u := "https://hooks.example.com/" + strings.Repeat("a", webhooks.MaxURLBytes-len("https://hooks.example.com/"))
		if _, err := open.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: u, Description: strings.Repeat("가", webhooks.MaxDescription),
			Owner: "user:alice"}); err != nil {
			t.Errorf("URL of %d bytes, description of %d characters: %v", len(u), webhooks.MaxDescription, err)
		}
	})
	t.Run("ErrUnknownCollection", func(t *testing.T) {
		_, err := strict.Add(t.Context(), webhooks.AddRequest{Collection: "nope", URL: "https://hooks.example.com/", Owner: "user:alice"})
		if !errors.Is(err, rag.ErrNotFound) {
			t.Errorf("Add to an unknown collection: %v", err)
		}
	})
	t.Run("MaxPerCollection", func(t *testing.T) {
		svc, _ := setup(t, webhooks.Options{Resolve: resolve}, nil)
		for i := range webhooks.MaxPerCollection {
			add(t, svc, "https://hooks.example.com/"+strconv.Itoa(i))
		}
		_, err := svc.Add(t.Context(), webhooks.AddRequest{Collection: "harbour", URL: "https://hooks.example.com/one-more", Owner: "user:alice"})
		if rag.ErrorCode(err) != rag.CodeInvalid {
			t.Errorf("webhook %d: %v, want invalid_request", webhooks.MaxPerCollection+1, err)
		}
	})
}

func TestEmit(t *testing.T) {
	t.Parallel()
	var queued []rag.WebhookEvent
	svc, st := setup(t, webhooks.Options{AllowPrivate: true}, &queued)
	ready := add(t, svc, "http://127.0.0.1:1/ready", rag.EventDocumentReady)
	both := add(t, svc, "http://127.0.0.1:1/both", rag.EventDocumentReady, rag.EventQuestionAnswered)
	c, _ := st.GetCollection(t.Context(), "harbour")
	if err := svc.Emit(t.Context(), rag.EventDocumentReady, c.ID, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 2 || queued[0].WebhookID != ready.ID || queued[1].WebhookID != both.ID || queued[0].ID != queued[1].ID ||
		queued[0].CollectionName != "harbour" || string(queued[0].Data) != `{"k":"v"}` {
		t.Fatalf("queued %+v", queued)
	}
	if err := svc.Emit(t.Context(), rag.EventDocumentFailed, c.ID, nil); err != nil || len(queued) != 2 {
		t.Fatalf("document.failed with no subscriber queued %d (%v)", len(queued)-2, err)
	}
	// A process without jobs drops the event rather than fail the work it reports.
	nojobs := webhooks.New(st, nil, webhooks.Options{AllowPrivate: true})
	if err := nojobs.Emit(t.Context(), rag.EventDocumentReady, c.ID, nil); err != nil {
		t.Fatalf("Emit without jobs: %v", err)
	}
}

func signature(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestDeliver(t *testing.T) {
	t.Parallel()
	type got struct {
		header http.Header
		body   []byte
	}
	serve := func(t *testing.T, h http.HandlerFunc) (*httptest.Server, chan got) {
		ch := make(chan got, 10)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			ch <- got{r.Header.Clone(), b}
			h(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv, ch
	}
	event := func(t *testing.T, st *sqlite.Store, w *webhooks.Added) rag.WebhookEvent {
		c, _ := st.GetCollection(t.Context(), "harbour")
		return rag.WebhookEvent{WebhookID: w.ID, ID: "evt_1", Event: rag.EventDocumentReady, CreatedAt: time.Now().UTC(), CollectionID: c.ID,
			CollectionName: c.Name, Data: json.RawMessage(`{"document":{"id":"d1"}}`)}
	}
	lastLog := func(t *testing.T, st *sqlite.Store, id string) *rag.WebhookDelivery {
		t.Helper()
		log, err := st.WebhookDeliveries(t.Context(), id, 1)
		if err != nil || len(log) != 1 {
			t.Fatalf("delivery log %v, %v", log, err)
		}
		return log[0]
	}

	t.Run("SignedAndLogged", func(t *testing.T) {
		srv, ch := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
		svc, st := setup(t, webhooks.Options{AllowPrivate: true}, nil)
		w := add(t, svc, srv.URL+"/hook")
		before := time.Now().Unix()
		if err := svc.Deliver(t.Context(), event(t, st, w), 2, false); err != nil {
			t.Fatal(err)
		}
		g := <-ch
		if sig := g.header.Get(webhooks.HeaderSignature); sig != signature(w.Secret, g.body) {
			t.Errorf("signature %q does not verify", sig)
		}
		var body webhooks.Body
		if err := json.Unmarshal(g.body, &body); err != nil {
			t.Fatal(err)
		}
		ts, _ := strconv.ParseInt(g.header.Get(webhooks.HeaderTimestamp), 10, 64)
		if body.ID != "evt_1" || g.header.Get(webhooks.HeaderEventID) != "evt_1" || body.Event != rag.EventDocumentReady ||
			g.header.Get(webhooks.HeaderEvent) != rag.EventDocumentReady || body.Timestamp != ts || ts < before || body.Attempt != 2 ||
			body.Collection.Name != "harbour" || string(body.Data) != `{"document":{"id":"d1"}}` || g.header.Get("Content-Type") != "application/json" {
			t.Errorf("body %s with headers %v", g.body, g.header)
		}
		if d := lastLog(t, st, w.ID); d.Outcome != rag.DeliveryDelivered || d.StatusCode != 204 || d.Attempt != 2 || d.EventID != "evt_1" {
			t.Errorf("logged %+v", d)
		}
		// A signature under another secret, or over a changed body, does not verify.
		if webhooks.Verify([]byte("whsec_other"), g.body, g.header.Get(webhooks.HeaderSignature)) ||
			webhooks.Verify([]byte(w.Secret), append(g.body, ' '), g.header.Get(webhooks.HeaderSignature)) {
			t.Error("Verify accepted a wrong secret or body")
		}
	})

	t.Run("ErrorAnswerRetriedThenFailed", func(t *testing.T) {
		long := strings.Repeat("x", 100<<10) // over MaxResponseBytes
		srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "database down "+long)
		})
		svc, st := setup(t, webhooks.Options{AllowPrivate: true, MaxResponseBytes: 1024}, nil)
		w := add(t, svc, srv.URL)
		err := svc.Deliver(t.Context(), event(t, st, w), 1, false)
		if err == nil || rag.ErrorCode(err) == rag.CodeInvalid {
			t.Fatalf("Deliver to a 500: %v, want an error to retry", err)
		}
		d := lastLog(t, st, w.ID)
		if d.Outcome != rag.DeliveryRetrying || d.StatusCode != 500 || !strings.HasPrefix(d.Error, "HTTP 500: database down") || len(d.Error) > 300 {
			t.Errorf("logged %+v", d)
		}
		if err := svc.Deliver(t.Context(), event(t, st, w), 2, true); err == nil {
			t.Fatal("final Deliver to a 500 succeeded")
		}
		if d := lastLog(t, st, w.ID); d.Outcome != rag.DeliveryFailed || d.Attempt != 2 {
			t.Errorf("final attempt logged %+v", d)
		}
	})

	t.Run("RedirectNotFollowed", func(t *testing.T) {
		var followed atomic.Bool
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { followed.Store(true) }))
		t.Cleanup(target.Close)
		srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		})
		svc, st := setup(t, webhooks.Options{AllowPrivate: true}, nil)
		w := add(t, svc, srv.URL)
		if err := svc.Deliver(t.Context(), event(t, st, w), 1, false); err == nil {
			t.Fatal("a redirect counted as delivered")
		}
		if followed.Load() {
			t.Error("the redirect was followed")
		}
		if d := lastLog(t, st, w.ID); d.StatusCode != 307 || !strings.Contains(d.Error, "redirects are not followed") {
			t.Errorf("logged %+v", d)
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { <-release })
		t.Cleanup(func() { close(release) })
		svc, st := setup(t, webhooks.Options{AllowPrivate: true, Timeout: 300 * time.Millisecond}, nil)
		w := add(t, svc, srv.URL)
		if err := svc.Deliver(t.Context(), event(t, st, w), 1, false); err == nil {
			t.Fatal("a receiver that never answers counted as delivered")
		}
		if d := lastLog(t, st, w.ID); d.StatusCode != 0 || d.Outcome != rag.DeliveryRetrying || !strings.Contains(d.Error, "Timeout") {
			t.Errorf("logged %+v", d)
		}
	})

	// A webhook registered while private addresses were allowed is refused at delivery once they are not:
	// the address dialled is checked, no request reaches the receiver, and retrying stops.
	t.Run("PrivateRefusedAtDelivery", func(t *testing.T) {
		srv, ch := serve(t, func(w http.ResponseWriter, r *http.Request) {})
		svc, st := setup(t, webhooks.Options{AllowPrivate: true}, nil)
		w := add(t, svc, srv.URL)
		strict := webhooks.New(st, nil, webhooks.Options{})
		err := strict.Deliver(t.Context(), event(t, st, w), 1, false)
		if rag.ErrorCode(err) != rag.CodeInvalid {
			t.Fatalf("Deliver to loopback without the variable: %v, want invalid_request (not retried)", err)
		}
		if len(ch) != 0 {
			t.Error("a request reached the receiver")
		}
		if d := lastLog(t, st, w.ID); d.Outcome != rag.DeliveryFailed || !strings.Contains(d.Error, "not allowed") {
			t.Errorf("logged %+v", d)
		}
	})

	t.Run("RemovedWebhook", func(t *testing.T) {
		svc, st := setup(t, webhooks.Options{AllowPrivate: true}, nil)
		w := add(t, svc, "http://127.0.0.1:1/")
		ev := event(t, st, w)
		if err := svc.Remove(t.Context(), "harbour", w.ID); err != nil {
			t.Fatal(err)
		}
		if err := svc.Deliver(t.Context(), ev, 1, false); !errors.Is(err, rag.ErrNotFound) {
			t.Fatalf("Deliver for a removed webhook: %v, want ErrNotFound", err)
		}
	})

	t.Run("Ping", func(t *testing.T) {
		srv, ch := serve(t, func(w http.ResponseWriter, r *http.Request) {})
		svc, st := setup(t, webhooks.Options{AllowPrivate: true}, nil)
		w := add(t, svc, srv.URL, rag.EventQuestionAnswered)
		d, err := svc.Ping(t.Context(), "harbour", w.ID)
		if err != nil || d.Outcome != rag.DeliveryDelivered || d.Event != rag.EventPing || d.StatusCode != 200 {
			t.Fatalf("Ping = %+v, %v", d, err)
		}
		g := <-ch
		if g.header.Get(webhooks.HeaderSignature) != signature(w.Secret, g.body) {
			t.Error("ping signature does not verify")
		}
		if _, err := svc.Ping(t.Context(), "harbour", "nope"); rag.ErrorCode(err) != rag.CodeNotFound {
			t.Errorf("Ping(nope): %v", err)
		}
		if log, _ := svc.Deliveries(t.Context(), "harbour", w.ID, 1); len(log) != 1 || log[0].ID != d.ID {
			t.Errorf("Deliveries = %v", log)
		}
		for _, limit := range []int{0, webhooks.MaxDeliveriesListed + 1} {
			if _, err := svc.Deliveries(t.Context(), "harbour", w.ID, limit); rag.ErrorCode(err) != rag.CodeInvalid {
				t.Errorf("Deliveries limit %d: %v", limit, err)
			}
		}
		if _, err := svc.Deliveries(t.Context(), "harbour", w.ID, webhooks.MaxDeliveriesListed); err != nil {
			t.Errorf("Deliveries limit %d: %v", webhooks.MaxDeliveriesListed, err)
		}
		_ = st
	})
}
