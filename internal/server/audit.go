package server

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ragd/ragd/internal/audit"
	"github.com/ragd/ragd/internal/mcpserver"
	"github.com/ragd/ragd/internal/rag"
)

// The audit log (docs/security.md "Audit log"): every /api/ request is recorded after it is answered, with
// the principal, the action its route stands for, its target and the documents it read or changed, the
// client address, the outcome and the status. Recording is a channel send into audit.Log's buffer; the
// database write happens in the log's own goroutine.

// AuditEvents lists the audit log (the stores implement it).
type AuditEvents interface {
	ListAudit(ctx context.Context, q audit.Query) ([]audit.Event, error)
}

// routeActions names the audit action of a route pattern; other /api/ routes are recorded as "request"
// with the route in Detail.
var routeActions = map[string]string{
	"POST /api/search":                                audit.Search,
	"POST /api/chat":                                  audit.Chat,
	"GET /api/documents":                              audit.DocumentList,
	"GET /api/documents/{id}":                         audit.DocumentRead,
	"GET /api/documents/{id}/chunks":                  audit.DocumentRead,
	"GET /api/documents/{id}/versions":                audit.DocumentRead,
	"GET /api/documents/{id}/history":                 audit.DocumentRead,
	"GET /api/documents/{id}/versions/{n}":            audit.DocumentRead,
	"GET /api/documents/{id}/versions/{n}/file":       audit.DocumentDownload,
	"POST /api/documents":                             audit.DocumentUpload,
	"PUT /api/documents/{id}":                         audit.DocumentUpdate,
	"DELETE /api/documents/{id}":                      audit.DocumentDelete,
	"POST /api/documents/{id}/restore":                audit.DocumentRestore,
	"POST /api/documents/{id}/versions/{n}/restore":   audit.DocumentRestore,
	"GET /api/admin/audit":                            "audit.read",
	"PUT /api/documents/{id}/grants":                  audit.Grant,
	"POST /api/admin/keys":                            audit.KeyCreated,
	"DELETE /api/admin/keys/{prefix}":                 audit.KeyRevoked,
	"POST /api/collections/{name}/sources":            audit.SourceAdded,
	"DELETE /api/collections/{name}/sources/{id}":     audit.SourceRemoved,
	"POST /api/collections/{name}/sources/{id}/sync":  audit.SourceSync,
	"POST /api/collections/{name}/webhooks":           audit.WebhookAdded,
	"DELETE /api/collections/{name}/webhooks/{id}":    audit.WebhookRemoved,
	"POST /api/collections/{name}/webhooks/{id}/ping": audit.WebhookPing,
	"POST /v1/chat/completions":                       audit.Chat,
	"PUT /api/admin/teams/{name}/members/{user}":      audit.MemberChanged,
	"DELETE /api/admin/teams/{name}/members/{user}":   audit.MemberRemoved,
}

// auditMCP records an MCP tool call or resource read (mcpserver.Deps.Audit) with the client address that
// routesMCP put in ctx.
func (s *Server) auditMCP(ctx context.Context, c mcpserver.Call) {
	client, _ := ctx.Value(clientAddrKey{}).(string)
	s.deps.Audit.Record(c.Event(client))
}

// clientAddrKey holds the client's address in the context of an MCP call (mcpserver's handlers see the
// context, not the request).
type clientAddrKey struct{}

// auditNote collects what a handler learns about the documents a request touched (the hits of a search,
// the passages of an answer, the documents an upload made).
type auditNote struct {
	mu     sync.Mutex
	docs   []string
	target string // set by a handler whose target is not in its path (a key made by POST /api/admin/keys)
	// principal is set by routes that authenticate inside their handler (/v1), refused says why they
	// turned the key away ("no key", "invalid key", "missing scope read").
	principal *rag.Principal
	refused   string
}

// notePrincipal names the principal of r's audit record, for routes that authenticate inside their
// handler; why, when not empty, says the key was refused.
func notePrincipal(r *http.Request, p *rag.Principal, why string) {
	if n, ok := r.Context().Value(auditNoteKey{}).(*auditNote); ok {
		n.mu.Lock()
		n.principal, n.refused = p, why
		n.mu.Unlock()
	}
}

// noteTarget names the target of r's audit record when its route has none in the path.
func noteTarget(r *http.Request, target string) {
	if n, ok := r.Context().Value(auditNoteKey{}).(*auditNote); ok {
		n.mu.Lock()
		n.target = target
		n.mu.Unlock()
	}
}

type auditNoteKey struct{}

// noteDocuments adds documents to the audit record of r's request (no-op when nothing records).
func noteDocuments(r *http.Request, ids ...string) {
	n, ok := r.Context().Value(auditNoteKey{}).(*auditNote)
	if !ok {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		if id != "" && !contains(n.docs, id) {
			n.docs = append(n.docs, id)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// noteHits adds the documents of hits to the request's audit record.
func noteHits(r *http.Request, hits []rag.Hit) {
	for _, h := range hits {
		noteDocuments(r, h.DocumentID)
	}
}

// noteSources adds the documents of an answer's passages to the request's audit record.
func noteSources(r *http.Request, sources []rag.Source) {
	for _, src := range sources {
		noteDocuments(r, src.DocumentID)
	}
}

// audited records each /api/ request in Deps.Audit once it is answered. It runs inside authenticate, so
// the principal is known; refused sign-ins are recorded by authentication itself.
// auditRefused records a request that authentication turned away before it reached a route (so before
// audited saw it): "login.failure" for a missing or invalid key (principal unknown), "access.denied" for
// a key without the scope the route needs. No key material is recorded.
func (s *Server) auditRefused(r *http.Request, principal string, status int, why string) {
	if s.deps.Audit == nil {
		return
	}
	action := "login.failure"
	if status == http.StatusForbidden {
		action = "access.denied"
	}
	s.deps.Audit.Record(audit.Event{At: time.Now(), Principal: principal, Action: action, Client: clientAddr(r),
		Outcome: audit.Denied, Status: status, Detail: r.Method + " " + r.URL.Path + ": " + why})
}

func (s *Server) audited(next http.Handler) http.Handler {
	if s.deps.Audit == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/v1/") {
			next.ServeHTTP(w, r)
			return
		}
		note := &auditNote{}
		r = r.WithContext(context.WithValue(r.Context(), auditNoteKey{}, note))
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(sw, r)
		action, ok := routeActions[r.Pattern]
		detail := r.Pattern
		if !ok {
			action = "request"
			if detail == "" {
				detail = r.Method + " " + r.URL.Path
			}
		}
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		principal := principalOf(r)
		note.mu.Lock()
		if note.principal != nil || note.refused != "" {
			principal = rag.Principal{}
			if note.principal != nil {
				principal = *note.principal
			}
		}
		refused := note.refused
		note.mu.Unlock()
		if refused != "" {
			// A /v1 request whose key was turned away: as auditRefused records an /api one.
			action, detail = "login.failure", r.Method+" "+r.URL.Path+": "+refused
			if status == http.StatusForbidden {
				action = "access.denied"
			}
		}
		e := audit.Event{At: start, Principal: principal.ID, Action: action, Target: cmp.Or(r.PathValue("id"), r.PathValue("prefix")), Client: clientAddr(r),
			Status: status, Detail: detail, Outcome: audit.OK}
		switch {
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			e.Outcome = audit.Denied
		case status >= 400:
			e.Outcome = audit.Failed
		}
		if n := r.PathValue("n"); n != "" {
			e.Detail += " version=" + n
		}
		note.mu.Lock()
		e.Documents = note.docs
		e.Target = cmp.Or(e.Target, note.target)
		note.mu.Unlock()
		if id := r.PathValue("id"); id != "" && strings.Contains(r.Pattern, "/api/documents/{id}") && !contains(e.Documents, id) {
			e.Documents = append([]string{id}, e.Documents...)
		}
		s.deps.Audit.Record(e)
	})
}

// clientAddr is the client's IP address (the connection's peer: ragd does not trust forwarding headers).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// handleListAudit is GET /api/admin/audit (admins only): principal, action, target, document, outcome,
// since, until (RFC 3339), limit (1–1000, default 100) and before (the last id of the previous page).
func (s *Server) handleListAudit(w http.ResponseWriter, r *http.Request) {
	if !principalOf(r).Admin {
		s.writeError(w, r, rag.Errorf(rag.CodeForbidden, "the audit log is for admins"))
		return
	}
	if s.deps.AuditEvents == nil {
		s.writeError(w, r, rag.Errorf(rag.CodeNotFound, "this server keeps no audit log"))
		return
	}
	v := r.URL.Query()
	q := audit.Query{Principal: v.Get("principal"), Action: v.Get("action"), Target: v.Get("target"), Document: v.Get("document"),
		Outcome: v.Get("outcome")}
	for name, dst := range map[string]*time.Time{"since": &q.Since, "until": &q.Until} {
		if t := v.Get(name); t != "" {
			at, err := time.Parse(time.RFC3339, t)
			if err != nil {
				s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "%s must be an RFC 3339 time (got %q)", name, t))
				return
			}
			*dst = at
		}
	}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), 100, 1, audit.MaxLimit); err != nil {
		s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "limit: %v", err))
		return
	}
	if b := v.Get("before"); b != "" {
		if q.BeforeID, err = strconv.ParseInt(b, 10, 64); err != nil || q.BeforeID < 1 {
			s.writeError(w, r, rag.Errorf(rag.CodeInvalid, "before must be an event id (got %q)", b))
			return
		}
	}
	events, err := s.deps.AuditEvents.ListAudit(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res := map[string]any{"events": events}
	if len(events) == q.Size() {
		res["next_before"] = events[len(events)-1].ID
	}
	writeJSON(w, http.StatusOK, res)
}
