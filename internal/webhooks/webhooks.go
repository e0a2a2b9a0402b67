// Package webhooks sends a collection's events — a document indexed or failed, a board question answered —
// to the URLs registered for them (docs/integrations.md "Webhooks"). Emit turns an event into one durable
// delivery job per subscribed webhook (the job runner retries a failed one with exponential back-off);
// Deliver makes one attempt: the body is signed with HMAC-SHA256 under the webhook's secret, POSTed through
// the SSRF-guarded client of internal/netguard (no redirects, a bounded read of the answer, a timeout), and
// logged. A webhook's secret is shown once when it is added and stored sealed like sources' credentials.
package webhooks

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragd/ragd/internal/buildinfo"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// Headers of a delivery.
const (
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256 of the body under the webhook's secret.
	HeaderSignature = "X-Ragd-Signature"
	// HeaderEventID is the event's ID, the same in every attempt (receivers de-duplicate by it).
	HeaderEventID = "X-Ragd-Event-Id"
	// HeaderTimestamp is the Unix time of the attempt in seconds, also in the signed body as "timestamp".
	HeaderTimestamp = "X-Ragd-Timestamp"
	// HeaderEvent is the event's name.
	HeaderEvent = "X-Ragd-Event"
	// HeaderAttempt counts the attempts of this event on this webhook from 1.
	HeaderAttempt = "X-Ragd-Attempt"
)

// Limits of a webhook.
const (
	MaxURLBytes         = 2048
	MaxDescription      = 200 // characters
	MaxPerCollection    = 20
	MaxDeliveriesListed = 1000
)

// Store keeps webhooks and finds collections (rag.Store with rag.WebhookStore).
type Store interface {
	rag.WebhookStore
	GetCollection(ctx context.Context, idOrName string) (*rag.Collection, error)
}

// Enqueue queues the delivery of one event to one webhook (the job runner's EnqueueWebhook).
type Enqueue func(ctx context.Context, ev rag.WebhookEvent) error

// Options configure a Service.
type Options struct {
	// AllowPrivate lets webhooks target loopback and private addresses (RAGD_WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// Timeout bounds one attempt (default 10s).
	Timeout time.Duration
	// MaxResponseBytes is how much of a receiver's answer is read (default 64 KiB); the rest is dropped.
	MaxResponseBytes int64
	// Keep is how many attempts the delivery log keeps per webhook (default 1000).
	Keep int
	// Resolve looks a host name up at registration (default net.DefaultResolver.LookupNetIP).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Logger  *slog.Logger
	// Now is the clock of events and attempts (default time.Now).
	Now func() time.Time
}

// WithDefaults returns o with zero fields set to their defaults.
func (o Options) WithDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 64 << 10
	}
	if o.Keep <= 0 {
		o.Keep = MaxDeliveriesListed
	}
	if o.Resolve == nil {
		o.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Service registers webhooks, queues their events and delivers them.
type Service struct {
	store   Store
	enqueue Enqueue
	guard   netguard.Options
	client  *http.Client
	opt     Options
}

// New returns a Service. enqueue may be nil in a process that runs no jobs: its events are then dropped
// (logged), since nothing would deliver them.
func New(store Store, enqueue Enqueue, opt Options) *Service {
	opt = opt.WithDefaults()
	guard := netguard.Options{AllowPrivate: opt.AllowPrivate, Timeout: opt.Timeout}
	client := guard.Client()
	// A redirect is not followed: the receiver is the URL registered, and a redirect to an internal
	// address must not be the way around the guard. The 3xx answer is logged as a failure.
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Service{store: store, enqueue: enqueue, guard: guard, client: client, opt: opt}
}

// AddRequest describes a new webhook.
type AddRequest struct {
	// Collection is the collection's ID or name; it must exist.
	Collection string
	URL        string
	// Events are the events it receives; none means all of rag.WebhookEvents.
	Events      []string
	Description string
	// Owner is the principal that adds it.
	Owner string
}

// Added is a new webhook with its secret, which is shown this once.
type Added struct {
	*rag.Webhook
	Secret string `json:"secret"`
}

// Add validates and stores a webhook with a new secret. Errors: CodeInvalid (URL, events, description,
// too many webhooks), ErrNotFound (collection).
func (s *Service) Add(ctx context.Context, req AddRequest) (*Added, error) {
	c, err := s.collection(ctx, req.Collection)
	if err != nil {
		return nil, err
	}
	if err := s.CheckURL(ctx, req.URL); err != nil {
		return nil, err
	}
	events, err := checkEvents(req.Events)
	if err != nil {
		return nil, err
	}
	desc := strings.TrimSpace(req.Description)
	if n := utf8.RuneCountInString(desc); n > MaxDescription {
		return nil, rag.Errorf(rag.CodeInvalid, "a webhook's description is %d characters; at most %d", n, MaxDescription)
	}
	list, err := s.store.ListWebhooks(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	if len(list) >= MaxPerCollection {
		return nil, rag.Errorf(rag.CodeInvalid, "collection %s has %d webhooks, the most it may have; remove one first", c.Name, len(list))
	}
	secret := newSecret()
	w := &rag.Webhook{CollectionID: c.ID, URL: strings.TrimSpace(req.URL), Events: events, Description: desc, Owner: req.Owner}
	if err := s.store.CreateWebhook(ctx, w, []byte(secret)); err != nil {
		return nil, err
	}
	return &Added{Webhook: w, Secret: secret}, nil
}

func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b)
}

func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return slices.Clone(rag.WebhookEvents), nil
	}
	out := []string{}
	for _, e := range events {
		e = strings.TrimSpace(e)
		if !slices.Contains(rag.WebhookEvents, e) {
			return nil, rag.Errorf(rag.CodeInvalid, "unknown webhook event %q (known: %s)", e, strings.Join(rag.WebhookEvents, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// CheckURL says whether raw may be a webhook's URL: http or https with a host, no user name or password,
// and a host that is, or resolves to, only addresses the guard allows. CodeInvalid otherwise. Delivery
// checks the address dialled again, so a name that later resolves inside is refused then.
func (s *Service) CheckURL(ctx context.Context, raw string) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return rag.Errorf(rag.CodeInvalid, "a webhook needs a url")
	}
	if len(raw) > MaxURLBytes {
		return rag.Errorf(rag.CodeInvalid, "a webhook's url is %d bytes; at most %d", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return rag.Errorf(rag.CodeInvalid, "a webhook's url does not parse: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return rag.Errorf(rag.CodeInvalid, "a webhook's url must be http or https (got %q)", u.Scheme)
	}
	if u.User != nil {
		return rag.Errorf(rag.CodeInvalid, "a webhook's url must not hold a user name or password: it is stored in the clear; the receiver checks the signature instead")
	}
	host := u.Hostname()
	if host == "" {
		return rag.Errorf(rag.CodeInvalid, "a webhook's url needs a host")
	}
	addrs := []netip.Addr{}
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = append(addrs, ip)
	} else {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		addrs, err = s.opt.Resolve(lctx, host)
		cancel()
		if err != nil || len(addrs) == 0 {
			return rag.Errorf(rag.CodeInvalid, "a webhook's host %q does not resolve: %v", host, err)
		}
	}
	for _, ip := range addrs {
		if !s.guard.Allowed(ip) {
			return rag.Errorf(rag.CodeInvalid, "a webhook's url may not point at %s (%s): loopback, private and link-local addresses are refused unless RAGD_WEBHOOK_ALLOW_PRIVATE=true (link-local stays refused)", host, ip)
		}
	}
	return nil
}

func (s *Service) collection(ctx context.Context, idOrName string) (*rag.Collection, error) {
	if idOrName == "" {
		idOrName = rag.DefaultCollection
	}
	c, err := s.store.GetCollection(ctx, idOrName)
	if errors.Is(err, rag.ErrNotFound) {
		return nil, rag.WrapError(rag.CodeNotFound, err, "no collection %q", idOrName)
	}
	return c, err
}

// List returns a collection's webhooks, oldest first (never their secrets). ErrNotFound (collection).
func (s *Service) List(ctx context.Context, collection string) ([]*rag.Webhook, error) {
	c, err := s.collection(ctx, collection)
	if err != nil {
		return nil, err
	}
	return s.store.ListWebhooks(ctx, c.ID)
}

// Get returns a webhook of a collection. ErrNotFound (collection, or a webhook of another collection).
func (s *Service) Get(ctx context.Context, collection, id string) (*rag.Webhook, error) {
	c, err := s.collection(ctx, collection)
	if err != nil {
		return nil, err
	}
	w, err := s.store.GetWebhook(ctx, id)
	if err == nil && w.CollectionID != c.ID {
		err = fmt.Errorf("webhook %q: %w", id, rag.ErrNotFound)
	}
	if errors.Is(err, rag.ErrNotFound) {
		return nil, rag.WrapError(rag.CodeNotFound, err, "collection %s has no webhook %q", c.Name, id)
	}
	return w, err
}

// Remove deletes a webhook of a collection with its delivery log; deliveries still queued find it gone and
// stop. ErrNotFound.
func (s *Service) Remove(ctx context.Context, collection, id string) error {
	w, err := s.Get(ctx, collection, id)
	if err != nil {
		return err
	}
	return s.store.DeleteWebhook(ctx, w.ID)
}

// Deliveries returns up to limit (1 to MaxDeliveriesListed) attempts of a webhook of a collection,
// newest first. CodeInvalid (limit), ErrNotFound.
func (s *Service) Deliveries(ctx context.Context, collection, id string, limit int) ([]*rag.WebhookDelivery, error) {
	if limit < 1 || limit > MaxDeliveriesListed {
		return nil, rag.Errorf(rag.CodeInvalid, "limit must be between 1 and %d (got %d)", MaxDeliveriesListed, limit)
	}
	w, err := s.Get(ctx, collection, id)
	if err != nil {
		return nil, err
	}
	return s.store.WebhookDeliveries(ctx, w.ID, limit)
}

// Ping sends a "ping" event to a webhook of a collection now, once, outside the job runner, and returns
// the attempt as logged: how the receiver answered. ErrNotFound.
func (s *Service) Ping(ctx context.Context, collection, id string) (*rag.WebhookDelivery, error) {
	w, err := s.Get(ctx, collection, id)
	if err != nil {
		return nil, err
	}
	c, err := s.store.GetCollection(ctx, w.CollectionID)
	if err != nil {
		return nil, err
	}
	data, _ := json.Marshal(map[string]string{"message": "ping from ragd: this webhook is reachable and its signature verifies"})
	ev := rag.WebhookEvent{WebhookID: w.ID, ID: newEventID(), Event: rag.EventPing, CreatedAt: s.opt.Now().UTC(),
		CollectionID: c.ID, CollectionName: c.Name, Data: data}
	d, _, err := s.attempt(ctx, w, ev, 1, true)
	return d, err
}

func newEventID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return "evt_" + hex.EncodeToString(b)
}

// Emit queues event for every webhook of the collection that subscribes to it; data is the event's object
// ({"document": …}). It returns the first error of queueing: the caller logs it (an event is never a
// reason to fail the work it reports).
func (s *Service) Emit(ctx context.Context, event, collectionID string, data any) error {
	hooks, err := s.store.ListWebhooks(ctx, collectionID)
	if err != nil {
		return fmt.Errorf("webhooks of %s: %w", collectionID, err)
	}
	hooks = slices.DeleteFunc(hooks, func(w *rag.Webhook) bool { return !slices.Contains(w.Events, event) })
	if len(hooks) == 0 {
		return nil
	}
	if s.enqueue == nil {
		s.opt.Logger.Warn("webhooks: event not delivered: this process runs no jobs", slog.String("event", event),
			slog.String("collection", collectionID), slog.Int("webhooks", len(hooks)))
		return nil
	}
	c, err := s.store.GetCollection(ctx, collectionID)
	if err != nil {
		return fmt.Errorf("webhooks of %s: %w", collectionID, err)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("webhook event %s: %w", event, err)
	}
	ev := rag.WebhookEvent{ID: newEventID(), Event: event, CreatedAt: s.opt.Now().UTC(), CollectionID: c.ID, CollectionName: c.Name, Data: raw}
	var first error
	for _, w := range hooks {
		ev.WebhookID = w.ID
		if err := s.enqueue(ctx, ev); err != nil && first == nil {
			first = fmt.Errorf("queue webhook %s: %w", w.ID, err)
		}
	}
	return first
}

// Deliver makes attempt number attempt at delivering ev (final: no retry follows a failure) and logs it.
// nil when the receiver answered 2xx; rag.ErrNotFound (wrapped) when the webhook was removed; a *rag.Error with
// CodeInvalid when the URL may no longer be reached (retrying cannot help); another error to retry.
func (s *Service) Deliver(ctx context.Context, ev rag.WebhookEvent, attempt int, final bool) error {
	w, err := s.store.GetWebhook(ctx, ev.WebhookID)
	if err != nil {
		return err // ErrNotFound: removed since the event, nothing to deliver
	}
	_, retry, err := s.attempt(ctx, w, ev, attempt, final)
	if err != nil {
		return err
	}
	return retry
}

// Body is what a delivery POSTs (docs/integrations.md "Payload").
type Body struct {
	ID         string          `json:"id"`
	Event      string          `json:"event"`
	CreatedAt  time.Time       `json:"created_at"`
	Timestamp  int64           `json:"timestamp"`
	Attempt    int             `json:"attempt"`
	WebhookID  string          `json:"webhook_id"`
	Collection BodyCollection  `json:"collection"`
	Data       json.RawMessage `json:"data"`
}

// BodyCollection names the collection of an event.
type BodyCollection struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Sign returns the X-Ragd-Signature value of body under secret: "sha256=" and the hex HMAC-SHA256.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is body's under secret (constant time).
func Verify(secret, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// attempt POSTs ev to w once and logs the attempt. It returns the logged attempt; retry is non-nil when
// the attempt failed in a way a later one may not (an error answer, no answer); err is an error that is
// not the receiver's (the store, a URL no longer allowed — CodeInvalid).
func (s *Service) attempt(ctx context.Context, w *rag.Webhook, ev rag.WebhookEvent, attempt int, final bool) (d *rag.WebhookDelivery, retry, err error) {
	secret, err := s.store.WebhookSecret(ctx, w.ID)
	if err != nil {
		return nil, nil, err
	}
	now := s.opt.Now()
	body, err := json.Marshal(Body{ID: ev.ID, Event: ev.Event, CreatedAt: ev.CreatedAt, Timestamp: now.Unix(), Attempt: attempt,
		WebhookID: w.ID, Collection: BodyCollection{ID: ev.CollectionID, Name: ev.CollectionName}, Data: ev.Data})
	if err != nil {
		return nil, nil, err
	}
	d = &rag.WebhookDelivery{WebhookID: w.ID, EventID: ev.ID, Event: ev.Event, Attempt: attempt}
	start := time.Now()
	status, failure := s.post(ctx, w.URL, body, map[string]string{
		HeaderSignature: Sign(secret, body),
		HeaderEventID:   ev.ID,
		HeaderTimestamp: strconv.FormatInt(now.Unix(), 10),
		HeaderEvent:     ev.Event,
		HeaderAttempt:   strconv.Itoa(attempt),
	})
	d.DurationMS, d.StatusCode = time.Since(start).Milliseconds(), status
	var permanent error
	switch {
	case failure == nil:
		d.Outcome = rag.DeliveryDelivered
	case netguard.IsForbidden(failure):
		permanent = rag.Errorf(rag.CodeInvalid, "webhook %s: %v (RAGD_WEBHOOK_ALLOW_PRIVATE)", w.ID, failure)
		d.Error, d.Outcome = failure.Error(), rag.DeliveryFailed
	case final:
		d.Error, d.Outcome = failure.Error(), rag.DeliveryFailed
	default:
		d.Error, d.Outcome = failure.Error(), rag.DeliveryRetrying
	}
	if ctx.Err() != nil && failure != nil {
		// Shutdown: the job runner gives the attempt back; it is not the receiver's failure to log.
		return d, failure, nil
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.store.AddWebhookDelivery(lctx, d, s.opt.Keep); err != nil {
		return d, nil, err
	}
	s.opt.Logger.Info("webhook attempt", slog.String("webhook", w.ID), slog.String("event", ev.Event), slog.String("event_id", ev.ID),
		slog.Int("attempt", attempt), slog.Int("status", status), slog.String("outcome", d.Outcome), slog.Int64("ms", d.DurationMS))
	if permanent != nil {
		return d, nil, permanent
	}
	return d, failure, nil
}

// post sends body to target and returns the status (0 without an answer) and why the attempt failed
// (nil for a 2xx answer). At most MaxResponseBytes of the answer are read, the first 200 of them kept
// in the error.
func (s *Service) post(ctx context.Context, target string, body []byte, headers map[string]string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ragd-webhooks/"+buildinfo.Get().Version)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	head, err := io.ReadAll(io.LimitReader(resp.Body, s.opt.MaxResponseBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, nil
	}
	msg := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		msg += " (redirects are not followed)"
	}
	if text := strings.TrimSpace(strings.ToValidUTF8(string(head[:min(len(head), 200)]), "")); text != "" {
		msg += ": " + text
	}
	if err != nil {
		msg += fmt.Sprintf(" (reading the answer: %v)", err)
	}
	return resp.StatusCode, errors.New(msg)
}
