package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/rag"
)

// ---- authentication ----

// keyring holds the sha256 of each configured API key. Presented keys are hashed and compared with every
// configured hash in constant time, so neither the comparison nor the number of keys checked depends on
// the presented key. Keys themselves are never logged.
type keyring struct {
	hashes [][32]byte
}

func newKeyring(keys []string) *keyring {
	k := &keyring{}
	for _, key := range keys {
		if key = strings.TrimSpace(key); key != "" {
			k.hashes = append(k.hashes, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

func (k *keyring) enabled() bool { return len(k.hashes) > 0 }

// principal returns the principal of a presented key: "key:<first 8 hex digits of sha256(key)>", an admin
// until users and permissions exist.
func (k *keyring) principal(presented string) (rag.Principal, bool) {
	h := sha256.Sum256([]byte(presented))
	match := 0
	for i := range k.hashes {
		match |= subtle.ConstantTimeCompare(h[:], k.hashes[i][:])
	}
	if match != 1 || presented == "" {
		return rag.Principal{}, false
	}
	return rag.Principal{ID: "key:" + hex.EncodeToString(h[:4]), Admin: true}, true
}

// presentedKey reads the key from X-RAG-API-Key or "Authorization: Bearer <key>".
func presentedKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-RAG-API-Key")); k != "" {
		return k
	}
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		return strings.TrimSpace(auth[7:])
	}
	return ""
}

type principalKey struct{}

// authenticated reports whether the request presented a valid key (the API needs keys).
func authenticated(r *http.Request) bool {
	_, ok := r.Context().Value(principalKey{}).(rag.Principal)
	return ok
}

// principalOf returns the request's principal (rag.LocalPrincipal when the server has no API keys).
func principalOf(r *http.Request) rag.Principal {
	if p, ok := r.Context().Value(principalKey{}).(rag.Principal); ok {
		return p
	}
	return rag.LocalPrincipal
}

// authenticate requires a valid key on /api/* when keys exist: configured (RAGD_API_KEYS) or stored
// (users' keys, see rag.PrincipalStore). The UI, /healthz and /readyz stay open: probes and the page that
// asks for the key must load without one. A key resolves to its principal, and the route's scope (see
// requiredScope) must be among the key's.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		required, err := s.authRequired(r.Context())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if !required {
			next.ServeHTTP(w, r)
			return
		}
		key := presentedKey(r)
		if key == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ragd"`)
			s.auditRefused(r, "", http.StatusUnauthorized, "no key")
			s.writeError(w, r, rag.Errorf(rag.CodeUnauthorized, "an API key is required (X-RAG-API-Key or Authorization: Bearer)"))
			return
		}
		p, err := s.resolveKey(r.Context(), key)
		if err != nil {
			if errors.Is(err, rag.ErrNotFound) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ragd", error="invalid_token"`)
				s.auditRefused(r, "", http.StatusUnauthorized, "invalid key")
				err = rag.Errorf(rag.CodeUnauthorized, "the API key is not valid (unknown, revoked or expired, or its user is disabled)")
			}
			s.writeError(w, r, err)
			return
		}
		if scope := requiredScope(r); !p.Allows(scope) {
			s.auditRefused(r, p.ID, http.StatusForbidden, "missing scope "+string(scope))
			s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "this key lacks the %s scope that %s %s needs", scope, r.Method, r.URL.Path))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// resolveKey returns the principal of a presented key: a configured key's, else a stored key's.
// ErrNotFound when neither knows it.
func (s *Server) resolveKey(ctx context.Context, key string) (rag.Principal, error) {
	if p, ok := s.keys.principal(key); ok {
		return p, nil
	}
	if s.deps.Principals == nil {
		return rag.Principal{}, rag.ErrNotFound
	}
	return s.deps.Principals.ResolveAPIKey(ctx, rag.HashAPIKey(key))
}

// keyPresence remembers whether the store holds keys. Keys are never deleted (a revoked key stays
// listed), so once some exist the answer stays yes; until then the store is asked at most once a second,
// so that a key made by `ragd keys create` beside a running server closes the API within a second.
type keyPresence struct {
	mu      sync.Mutex
	some    bool
	checked time.Time
}

// authRequired reports whether /api/ needs a key: some are configured or stored. A store that cannot say
// fails closed (db_error).
func (s *Server) authRequired(ctx context.Context) (bool, error) {
	if s.keys.enabled() {
		return true, nil
	}
	if s.deps.Principals == nil {
		return false, nil
	}
	s.stored.mu.Lock()
	defer s.stored.mu.Unlock()
	if s.stored.some {
		return true, nil
	}
	if now := time.Now(); now.Sub(s.stored.checked) >= time.Second {
		some, err := s.deps.Principals.HasAPIKeys(ctx)
		if err != nil {
			return false, err
		}
		s.stored.some, s.stored.checked = some, now
	}
	return s.stored.some, nil
}

// readPosts are the routes that read although not GET: searching, asking, and a principal's own ratings and
// conversations.
var readPosts = []string{"/api/chat", "/api/search", "/api/feedback", "/api/conversations"}

// requiredScope is the scope a request needs: admin for /api/admin/, the Q&A answer passes (/api/qa/,
// which answer every board) and for changing collections (their settings, profile, graph and tables); read for GET, search, chat and feedback; write for everything
// else (uploads, document updates and deletes, grants, board questions, a collection's sources and
// webhooks — even their GETs: a webhook's URL may carry the receiver's token).
func requiredScope(r *http.Request) rag.Scope {
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/api/admin/"), strings.HasPrefix(path, "/api/qa/"):
		return rag.ScopeAdmin
	case isCollectionPart(path, "webhooks"):
		return rag.ScopeWrite // the collection's write access is checked too
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return rag.ScopeRead
	case isCollectionPart(path, "sources"):
		return rag.ScopeWrite // adding to a collection, as uploads do; the collection's write access is checked too
	case path == "/api/collections" || strings.HasPrefix(path, "/api/collections/"):
		return rag.ScopeAdmin
	}
	for _, p := range readPosts {
		if path == p || strings.HasPrefix(path, p+"/") {
			return rag.ScopeRead
		}
	}
	return rag.ScopeWrite
}

// ---- CORS ----

// corsPolicy is the CORS allow-list. "*" in the list allows every origin (the origin is echoed, never "*",
// so that credentials and keys keep working).
type corsPolicy struct {
	origins []string
	any     bool
}

const (
	corsMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
	corsHeaders = "Content-Type, Authorization, X-RAG-API-Key"
)

func newCORSPolicy(origins []string) corsPolicy {
	p := corsPolicy{}
	for _, o := range origins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		if o == "*" {
			p.any = true
		} else if o != "" {
			p.origins = append(p.origins, strings.ToLower(o))
		}
	}
	return p
}

func (p corsPolicy) allows(origin string) bool {
	return p.any || slices.Contains(p.origins, strings.ToLower(origin))
}

// sameOrigin reports whether origin is this server's own (browsers send Origin on same-origin POSTs too).
func sameOrigin(r *http.Request, origin string) bool {
	o := strings.ToLower(origin)
	host := strings.ToLower(r.Host)
	return o == "http://"+host || o == "https://"+host
}

// withCORS answers preflights (204 with the allowed methods and headers for allowed origins) and marks
// responses to allowed origins. A cross-origin request to /api/ from an origin not on the list is refused
// with 403 forbidden and no Access-Control-Allow-Origin, so it has no effect on data either.
func (s *Server) withCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Origin")
		allowed := s.cors.allows(origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Add("Vary", "Access-Control-Request-Method")
			w.Header().Add("Vary", "Access-Control-Request-Headers")
			if !allowed {
				s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "origin %s is not allowed", origin))
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		switch {
		case allowed:
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Expose-Headers", "Retry-After")
		case sameOrigin(r, origin):
		case strings.HasPrefix(r.URL.Path, "/api/"):
			s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "origin %s is not allowed", origin))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ---- rate limits ----

// limiter allows each client perMinute requests per minute as a burst, then one every minute/perMinute
// (a token bucket of capacity perMinute, refilled continuously). It is implemented as GCRA: per client only
// the theoretical arrival time of the next request is kept, in integer time, so limits are exact.
type limiter struct {
	perMinute int
	interval  time.Duration // between requests at the sustained rate
	tolerance time.Duration // how far ahead of the sustained rate a burst may run
	now       func() time.Time

	mu    sync.Mutex
	tat   map[string]time.Time
	swept time.Time
}

func newLimiter(perMinute int, now func() time.Time) *limiter {
	l := &limiter{perMinute: perMinute, now: now, tat: map[string]time.Time{}}
	if perMinute > 0 {
		l.interval = time.Minute / time.Duration(perMinute)
		l.tolerance = l.interval * time.Duration(perMinute-1)
	}
	return l
}

// allow admits a request of client, or says how long until it would be admitted.
func (l *limiter) allow(client string) (bool, time.Duration) {
	if l.perMinute <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		// Clients whose allowance is whole again need no state: forget them so the map stays small.
		for k, t := range l.tat {
			if !t.After(now) {
				delete(l.tat, k)
			}
		}
		l.swept = now
	}
	tat, ok := l.tat[client]
	if !ok || tat.Before(now) {
		tat = now
	}
	if ahead := tat.Sub(now); ahead > l.tolerance {
		return false, ahead - l.tolerance
	}
	l.tat[client] = tat.Add(l.interval)
	return true, 0
}

// clientOf names the client a limit applies to: the API key's principal, or the client IP without keys.
func (s *Server) clientOf(r *http.Request) string {
	if p, ok := r.Context().Value(principalKey{}).(rag.Principal); ok {
		return p.ID
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "ip:" + host
}

// limited applies l to h: over the limit is 429 rate_limited with Retry-After in whole seconds.
func (s *Server) limited(l *limiter, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ok, wait := l.allow(s.clientOf(r))
		if !ok {
			secs := int(math.Ceil(wait.Seconds()))
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			s.writeError(w, r, rag.Errorf(rag.CodeRateLimited, "over %d requests per minute; retry in %d s", l.perMinute, secs))
			return
		}
		h(w, r)
	}
}

// ---- hosts and headers ----

// checkHost refuses requests whose Host is not on the allow-list (403 forbidden), before anything else
// runs: with DNS rebinding a page elsewhere reaches this server through its own name, and the Origin it
// sends then matches that Host, so the same-origin check alone lets it through.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host) {
			s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "host %q is not served here (RAGD_ALLOWED_HOSTS)", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withHeaders sets the headers every response carries: no content sniffing, and for the API no caching
// (answers and document lists are private and change).
func (s *Server) withHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if strings.HasPrefix(r.URL.Path, "/api/") {
			w.Header().Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// ---- panics and logging ----

// recoverPanics turns a handler panic into 500 internal (logged with its stack) instead of a dropped
// connection.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v) // net/http's way to abort a response on purpose
			}
			s.log.Error("handler panic", slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			writeJSON(w, http.StatusInternalServerError, errorBody{Error: rag.CodeInternal, Message: "internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// statusWriter records the status code for the request log. It forwards Flush (needed by SSE) through
// Unwrap, which http.ResponseController follows.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests logs each request at debug level: method, path (never the query, headers or keys), status,
// size and duration.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.log.Enabled(r.Context(), slog.LevelDebug) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		s.log.DebugContext(r.Context(), "http", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", sw.status), slog.Int64("bytes", sw.bytes), slog.Duration("took", time.Since(start)))
	})
}

// isCollectionPart reports whether path is under /api/collections/{name}/part (sources, webhooks).
func isCollectionPart(path, part string) bool {
	rest, ok := strings.CutPrefix(path, "/api/collections/")
	if !ok {
		return false
	}
	_, sub, ok := strings.Cut(rest, "/")
	return ok && (sub == part || strings.HasPrefix(sub, part+"/"))
}
