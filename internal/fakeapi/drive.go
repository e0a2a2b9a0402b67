package fakeapi

import (
	"crypto"
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Drive is a local stand-in for the Google Drive API v3 and Google's OAuth token endpoint, speaking their
// wire format: files.list, files.get (alt=media), files.export, changes.getStartPageToken and changes.list
// with page tokens, Google's JSON error bodies, and the service-account flow (a JWT signed with the
// account's key, checked against its public key, exchanged for an access token). Faults: a burst of 429
// rateLimitExceeded, and tokens that expire.
type Drive struct {
	srv *httptest.Server
	sourceFake
	accounts map[string]*rsa.PublicKey // service-account e-mail → key
	tokens   map[string]bool           // access tokens accepted
	issued   int
	files    map[string]*DriveFile
	log      []string // file IDs, one per change, in order
	clock    time.Time
}

// DriveFile is a file of the fake Drive. A Google Doc, Sheet or Slides deck has its Google MIME type and
// its text in Content (exported as HTML, CSV or text).
type DriveFile struct {
	ID       string
	Name     string
	MimeType string
	Content  []byte
	Trashed  bool
	Modified time.Time // set by Put
	removed  bool
}

// Google MIME types of the fake's native documents.
const (
	DriveDoc    = "application/vnd.google-apps.document"
	DriveSheet  = "application/vnd.google-apps.spreadsheet"
	DriveFolder = "application/vnd.google-apps.folder"
)

// NewDrive starts a fake Drive. Close stops it.
func NewDrive() *Drive {
	f := &Drive{sourceFake: newSourceFake(), accounts: map[string]*rsa.PublicKey{}, tokens: map[string]bool{},
		files: map[string]*DriveFile{}, clock: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("GET /drive/v3/files", f.guard("list", f.list))
	mux.HandleFunc("GET /drive/v3/files/{id}", f.guard("get", f.get))
	mux.HandleFunc("GET /drive/v3/files/{id}/export", f.guard("export", f.export))
	mux.HandleFunc("GET /drive/v3/changes/startPageToken", f.guard("start", f.startToken))
	mux.HandleFunc("GET /drive/v3/changes", f.guard("changes", f.changes))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.violate("%s %s: no such endpoint", r.Method, r.URL.Path)
		googleError(w, http.StatusNotFound, "notFound", "Not Found", "NOT_FOUND")
	})
	f.srv = httptest.NewServer(mux)
	return f
}

// Endpoint is the base URL to give the Drive client (option.WithEndpoint).
func (f *Drive) Endpoint() string { return f.srv.URL + "/drive/v3/" }

// TokenURL is the OAuth token endpoint (a service-account key's token_uri).
func (f *Drive) TokenURL() string { return f.srv.URL + "/token" }

// Close stops the server.
func (f *Drive) Close() { f.srv.Close() }

// ServiceAccount makes a service account whose key the token endpoint accepts, and returns its JSON key
// file as Google issues it (with token_uri pointing at the fake).
func (f *Drive) ServiceAccount(email string) ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.accounts[email] = &key.PublicKey
	f.mu.Unlock()
	return json.Marshal(map[string]string{
		"type": "service_account", "project_id": "ragd-test", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": email, "client_id": "1", "auth_uri": "https://accounts.google.com/o/oauth2/auth",
		"token_uri": f.TokenURL(),
	})
}

// AddToken makes an access token valid (an OAuth token obtained elsewhere).
func (f *Drive) AddToken(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = true
}

// ExpireTokens invalidates every access token issued or added so far: API calls with them get 401, as with
// an expired or revoked token.
func (f *Drive) ExpireTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = map[string]bool{}
}

// Put adds or changes a file (recorded as a change); Modified is set to the fake's clock.
func (f *Drive) Put(file DriveFile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clock = f.clock.Add(time.Minute)
	file.Modified = f.clock
	f.files[file.ID] = &file
	f.log = append(f.log, file.ID)
}

// Trash moves a file to the trash (a change: trashed).
func (f *Drive) Trash(id string) { f.change(id, func(file *DriveFile) { file.Trashed = true }) }

// Remove deletes a file for good, or unshares it (a change: removed).
func (f *Drive) Remove(id string) { f.change(id, func(file *DriveFile) { file.removed = true }) }

func (f *Drive) change(id string, do func(*DriveFile)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if file, ok := f.files[id]; ok {
		do(file)
		f.log = append(f.log, id)
	}
}

func googleError(w http.ResponseWriter, status int, reason, msg, state string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": msg,
		"errors": []map[string]any{{"message": msg, "domain": "global", "reason": reason}}, "status": state}})
}

func (f *Drive) guard(endpoint string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ok, ra := f.throttled(); ok {
			if ra > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(ra.Seconds())))
			}
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": 429, "message": "Rate Limit Exceeded",
				"errors": []map[string]any{{"domain": "usageLimits", "reason": "rateLimitExceeded", "message": "Rate Limit Exceeded"}}}})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		f.mu.Lock()
		valid := ok && f.tokens[tok]
		f.mu.Unlock()
		if !valid {
			googleError(w, http.StatusUnauthorized, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.", "UNAUTHENTICATED")
			return
		}
		f.count(endpoint)
		h(w, r)
	}
}

// token is the service-account flow: grant_type jwt-bearer with an RS256 assertion signed by a known key.
func (f *Drive) token(w http.ResponseWriter, r *http.Request) {
	oauthError := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		oauthError("unsupported_grant_type", "Invalid grant_type.")
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		oauthError("invalid_grant", "Invalid JWT.")
		return
	}
	var claims struct {
		Iss   string `json:"iss"`
		Scope string `json:"scope"`
		Aud   string `json:"aud"`
		Exp   int64  `json:"exp"`
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(raw, &claims) != nil {
		oauthError("invalid_grant", "Invalid JWT payload.")
		return
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	f.mu.Lock()
	key := f.accounts[claims.Iss]
	f.mu.Unlock()
	switch {
	case key == nil || rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig) != nil:
		oauthError("invalid_grant", "Invalid JWT Signature.")
		return
	case claims.Aud != f.TokenURL():
		oauthError("invalid_grant", "Invalid JWT: audience "+claims.Aud)
		return
	case !strings.Contains(claims.Scope, "https://www.googleapis.com/auth/drive"):
		oauthError("invalid_scope", "Invalid OAuth scope.")
		return
	}
	f.mu.Lock()
	f.issued++
	tok := fmt.Sprintf("ya29.fake-%d", f.issued)
	f.tokens[tok] = true
	f.calls["token"]++
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
}

func (file *DriveFile) object() map[string]any {
	o := map[string]any{"kind": "drive#file", "id": file.ID, "name": file.Name, "mimeType": file.MimeType,
		"modifiedTime": file.Modified.UTC().Format("2006-01-02T15:04:05.000Z"), "trashed": file.Trashed,
		"parents": []string{"root"}, "webViewLink": "https://drive.google.com/file/d/" + file.ID + "/view"}
	if !strings.HasPrefix(file.MimeType, "application/vnd.google-apps.") {
		sum := md5.Sum(file.Content)
		o["md5Checksum"] = hex.EncodeToString(sum[:])
		o["size"] = strconv.Itoa(len(file.Content))
	} else {
		o["webViewLink"] = "https://docs.google.com/document/d/" + file.ID + "/edit"
	}
	return o
}

func (f *Drive) size(r *http.Request) (int, bool) {
	f.mu.Lock()
	size := f.pageSize
	f.mu.Unlock()
	if ps := r.URL.Query().Get("pageSize"); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 1000 {
			return 0, false
		}
		size = min(size, n)
	}
	return size, true
}

func (f *Drive) list(w http.ResponseWriter, r *http.Request) {
	size, ok := f.size(r)
	if !ok {
		googleError(w, http.StatusBadRequest, "invalid", "Invalid value for pageSize", "INVALID_ARGUMENT")
		return
	}
	q := r.URL.Query().Get("q")
	if q != "" && q != "trashed = false" {
		f.violate("files.list q %q: the fake reads only \"trashed = false\"", q)
	}
	f.mu.Lock()
	var files []*DriveFile
	for _, file := range f.files {
		if !file.removed && !(file.Trashed && q == "trashed = false") {
			files = append(files, file)
		}
	}
	f.mu.Unlock()
	slices.SortFunc(files, func(a, b *DriveFile) int { return strings.Compare(a.ID, b.ID) })
	start := 0
	if pt := r.URL.Query().Get("pageToken"); pt != "" {
		n, err := strconv.Atoi(pt)
		if err != nil || n < 0 || n > len(files) {
			googleError(w, http.StatusBadRequest, "invalid", "Invalid Value", "INVALID_ARGUMENT")
			return
		}
		start = n
	}
	end := min(start+size, len(files))
	out := map[string]any{"kind": "drive#fileList", "incompleteSearch": false}
	objs := []map[string]any{}
	for _, file := range files[start:end] {
		objs = append(objs, file.object())
	}
	out["files"] = objs
	if end < len(files) {
		out["nextPageToken"] = strconv.Itoa(end)
	}
	writeGoogleJSON(w, out)
}

func writeGoogleJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *Drive) file(w http.ResponseWriter, id string) (DriveFile, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, ok := f.files[id]
	if !ok || file.removed {
		googleError(w, http.StatusNotFound, "notFound", "File not found: "+id+".", "NOT_FOUND")
		return DriveFile{}, false
	}
	return *file, true
}

func (f *Drive) get(w http.ResponseWriter, r *http.Request) {
	file, ok := f.file(w, r.PathValue("id"))
	if !ok {
		return
	}
	if r.URL.Query().Get("alt") != "media" {
		writeGoogleJSON(w, file.object())
		return
	}
	if strings.HasPrefix(file.MimeType, "application/vnd.google-apps.") {
		googleError(w, http.StatusForbidden, "fileNotDownloadable", "Only files with binary content can be downloaded. Use Export with Docs Editors files.", "PERMISSION_DENIED")
		return
	}
	w.Header().Set("Content-Type", file.MimeType)
	_, _ = w.Write(file.Content)
}

func (f *Drive) export(w http.ResponseWriter, r *http.Request) {
	file, ok := f.file(w, r.PathValue("id"))
	if !ok {
		return
	}
	mime := r.URL.Query().Get("mimeType")
	switch {
	case file.MimeType == DriveDoc && mime == "text/html":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body>", html.EscapeString(file.Name))
		for _, para := range strings.Split(string(file.Content), "\n\n") {
			fmt.Fprintf(w, "<p>%s</p>", html.EscapeString(para))
		}
		fmt.Fprint(w, "</body></html>")
	case file.MimeType == DriveDoc && mime == "text/plain", file.MimeType == DriveSheet && mime == "text/csv":
		w.Header().Set("Content-Type", mime)
		_, _ = w.Write(file.Content)
	case !strings.HasPrefix(file.MimeType, "application/vnd.google-apps."):
		googleError(w, http.StatusForbidden, "fileNotExportable", "Export only supports Docs Editors files.", "PERMISSION_DENIED")
	default:
		googleError(w, http.StatusBadRequest, "badRequest", "The requested conversion is not supported.", "INVALID_ARGUMENT")
	}
}

func (f *Drive) startToken(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := len(f.log)
	f.mu.Unlock()
	writeGoogleJSON(w, map[string]any{"kind": "drive#startPageToken", "startPageToken": strconv.Itoa(n + 1)})
}

// changes serves the change log: page token t means the changes from the t-th (1-based) on.
func (f *Drive) changes(w http.ResponseWriter, r *http.Request) {
	size, ok := f.size(r)
	if !ok {
		googleError(w, http.StatusBadRequest, "invalid", "Invalid value for pageSize", "INVALID_ARGUMENT")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := strconv.Atoi(r.URL.Query().Get("pageToken"))
	if err != nil || t < 1 || t > len(f.log)+1 {
		googleError(w, http.StatusBadRequest, "invalid", "Invalid Value", "INVALID_ARGUMENT")
		return
	}
	end := min(t-1+size, len(f.log))
	changes := []map[string]any{}
	for _, id := range f.log[t-1 : end] {
		file := f.files[id]
		c := map[string]any{"kind": "drive#change", "changeType": "file", "fileId": id, "removed": file.removed,
			"time": file.Modified.UTC().Format(time.RFC3339)}
		if !file.removed {
			c["file"] = file.object()
		}
		changes = append(changes, c)
	}
	out := map[string]any{"kind": "drive#changeList", "changes": changes}
	if end < len(f.log) {
		out["nextPageToken"] = strconv.Itoa(end + 1)
	} else {
		out["newStartPageToken"] = strconv.Itoa(len(f.log) + 1)
	}
	writeGoogleJSON(w, out)
}
