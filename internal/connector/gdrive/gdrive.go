// Package gdrive is the "gdrive" source kind: the files a Google account can see in Drive — for a service
// account, the files and folders shared with it — read with Google's official client
// (google.golang.org/api/drive/v3). Google Docs are exported as HTML, Sheets as CSV and Slides as text;
// other files are downloaded. The first sync lists every file; later ones read the Drive changes API from
// the page token of the last (the cursor), so only what changed is listed.
package gdrive

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/connector/ratelimit"
	"github.com/ragd/ragd/internal/connector/web"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// Kind is the name of the gdrive kind in connector.Kinds.
const Kind = "gdrive"

// DefaultEndpoint is Drive's API.
const DefaultEndpoint = "https://www.googleapis.com/drive/v3/"

const folderType = "application/vnd.google-apps.folder"

// exports maps the Google Workspace types ragd reads to the format each is exported as and the extension
// that selects the extractor. Other Google types (forms, drawings, sites) are left out.
var exports = map[string]struct{ mime, ext, marker string }{
	"application/vnd.google-apps.document":     {"text/html", ".html", "gdoc"},
	"application/vnd.google-apps.spreadsheet":  {"text/csv", ".csv", "gsheet"},
	"application/vnd.google-apps.presentation": {"text/plain", ".txt", "gslides"},
}

// fileFields are the file fields a sync reads.
const fileFields = "id,name,mimeType,modifiedTime,md5Checksum,size,webViewLink,trashed,parents"

// Source is the files one Google account sees.
type Source struct {
	svc      *drive.Service
	http     *http.Client // the authorised client the service uses (downloads)
	maxBytes int64
}

// New is the gdrive kind's connector.Factory, against Google's API.
var New = Factory(DefaultEndpoint, nil)

// Factory returns a connector.Factory against the Drive API at endpoint (a fake in tests); sleep, when not
// nil, stands in for the back-off waits. The credentials are a service-account key (JSON, "type":
// "service_account"), an OAuth user's refresh token in the same JSON form gcloud writes ("type":
// "authorized_user"), or an access token ({"access_token": "…"}). Token requests go through the guarded
// client too. Errors: CodeInvalid for missing or malformed credentials or settings.
func Factory(endpoint string, sleep func(context.Context, time.Duration) error) connector.Factory {
	return func(c connector.Config) (connector.Source, error) {
		if len(c.Settings) > 0 && strings.TrimSpace(string(c.Settings)) != "{}" && strings.TrimSpace(string(c.Settings)) != "null" {
			return nil, rag.Errorf(rag.CodeInvalid, "a gdrive source takes no settings: it syncs what its account sees (share a folder with a service account to choose)")
		}
		base := c.HTTP
		if base == nil {
			base = netguard.Options{}.Client()
		}
		throttled := ratelimit.Client(base, ratelimit.Transport{Sleep: sleep, Throttled: throttled})
		ts, err := tokenSource(c.Credentials, throttled)
		if err != nil {
			return nil, err
		}
		authed := &http.Client{Timeout: throttled.Timeout, CheckRedirect: throttled.CheckRedirect,
			Transport: &oauth2.Transport{Source: ts, Base: throttled.Transport}}
		svc, err := drive.NewService(context.Background(), option.WithEndpoint(endpoint), option.WithHTTPClient(authed))
		if err != nil {
			return nil, fmt.Errorf("gdrive: %w", err)
		}
		s := &Source{svc: svc, http: authed, maxBytes: c.MaxBytes}
		if s.maxBytes <= 0 {
			s.maxBytes = rag.DefaultMaxUploadBytes
		}
		return s, nil
	}
}

// throttled says whether Drive asks to slow down: 429, 503, or 403 with reason rateLimitExceeded or
// userRateLimitExceeded.
func throttled(resp *http.Response, body []byte) bool {
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	case http.StatusForbidden:
		s := string(body)
		return strings.Contains(s, `"rateLimitExceeded"`) || strings.Contains(s, `"userRateLimitExceeded"`)
	}
	return false
}

// tokenSource reads the credentials. The token requests use client (through context: x/oauth2's way).
func tokenSource(creds []byte, client *http.Client) (oauth2.TokenSource, error) {
	var head struct {
		Type        string `json:"type"`
		AccessToken string `json:"access_token"`
	}
	if len(creds) == 0 {
		return nil, rag.Errorf(rag.CodeInvalid, "a gdrive source needs credentials: a service-account key, an authorized_user JSON or an access token")
	}
	if err := json.Unmarshal(creds, &head); err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "gdrive credentials are not JSON: %v", err)
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
	var kind google.CredentialsType
	switch {
	case head.Type == string(google.ServiceAccount):
		kind = google.ServiceAccount
	case head.Type == string(google.AuthorizedUser):
		kind = google.AuthorizedUser
	case head.Type == "" && head.AccessToken != "":
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: head.AccessToken, TokenType: "Bearer"}), nil
	default:
		return nil, rag.Errorf(rag.CodeInvalid, "gdrive credentials of type %q: want service_account, authorized_user or an access_token", head.Type)
	}
	gc, err := google.CredentialsFromJSONWithType(ctx, creds, kind, drive.DriveReadonlyScope)
	if err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "gdrive credentials: %v", err)
	}
	return gc.TokenSource, nil
}

// apiError classifies a Drive or token failure.
func apiError(what string, err error) error {
	var ge *googleapi.Error
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("gdrive: %s: the token was refused (%s): %w", what, re.ErrorCode, connector.ErrUnauthorized)
	case errors.As(err, &ge) && ge.Code == http.StatusUnauthorized:
		return fmt.Errorf("gdrive: %s: %s: %w", what, ge.Message, connector.ErrUnauthorized)
	case errors.As(err, &ge) && (ge.Code == http.StatusTooManyRequests || throttledError(ge)):
		return rag.Errorf(rag.CodeRateLimited, "gdrive: %s: rate limited, still after backing off", what)
	case errors.As(err, &ge) && ge.Code == http.StatusNotFound:
		return rag.Errorf(rag.CodeNotFound, "gdrive: %s: %s", what, ge.Message)
	case errors.As(err, &ge) && ge.Code < 500:
		return rag.Errorf(rag.CodeInvalid, "gdrive: %s: %d %s", what, ge.Code, ge.Message)
	case netguard.IsForbidden(err):
		return rag.WrapError(rag.CodeForbidden, err, "gdrive: %s: the API's address is not allowed", what)
	case errors.Is(err, context.Canceled):
		return err
	}
	return rag.WrapError(rag.CodeInternal, err, "gdrive: %s: %v", what, err)
}

func throttledError(ge *googleapi.Error) bool {
	for _, it := range ge.Errors {
		if it.Reason == "rateLimitExceeded" || it.Reason == "userRateLimitExceeded" {
			return true
		}
	}
	return false
}

// List reports the account's files. With no cursor (or one Drive no longer accepts) it lists them all, a
// full listing; else the changes since the cursor's page token: changed files, and removed or trashed ones
// as deleted. The new cursor is the page token to read the next changes from.
func (s *Source) List(ctx context.Context, cursor string) (connector.Listing, error) {
	if cursor != "" {
		l, err := s.changes(ctx, cursor)
		var ge *googleapi.Error
		if !errors.As(err, &ge) || (ge.Code != http.StatusBadRequest && ge.Code != http.StatusNotFound) {
			if err != nil {
				return connector.Listing{}, apiError("changes", err)
			}
			return l, nil
		}
		// The page token is no longer valid: start again from a full listing.
	}
	// The token first: a change made while the files are listed is read again at the next sync.
	start, err := s.svc.Changes.GetStartPageToken().Context(ctx).Do()
	if err != nil {
		return connector.Listing{}, apiError("start page token", err)
	}
	l := connector.Listing{Full: true, Cursor: start.StartPageToken}
	call := s.svc.Files.List().Q("trashed = false").PageSize(100).
		Fields(googleapi.Field("nextPageToken,files(" + fileFields + ")")).Context(ctx)
	err = call.Pages(ctx, func(fl *drive.FileList) error {
		for _, f := range fl.Files {
			if it, ok := s.item(f); ok {
				l.Items = append(l.Items, it)
			}
		}
		return nil
	})
	if err != nil {
		return connector.Listing{}, apiError("list files", err)
	}
	return l, nil
}

func (s *Source) changes(ctx context.Context, token string) (connector.Listing, error) {
	l := connector.Listing{}
	// A file changed several times is reported once, as it is now.
	var order []string
	last := map[string]*drive.Change{}
	for token != "" {
		cl, err := s.svc.Changes.List(token).PageSize(100).IncludeRemoved(true).
			Fields(googleapi.Field("nextPageToken,newStartPageToken,changes(changeType,fileId,removed,time,file(" + fileFields + "))")).
			Context(ctx).Do()
		if err != nil {
			return l, err
		}
		for _, c := range cl.Changes {
			if c.ChangeType != "" && c.ChangeType != "file" {
				continue // a shared drive's own change
			}
			if _, ok := last[c.FileId]; !ok {
				order = append(order, c.FileId)
			}
			last[c.FileId] = c
		}
		if cl.NewStartPageToken != "" {
			l.Cursor = cl.NewStartPageToken
		}
		token = cl.NextPageToken
	}
	for _, id := range order {
		c := last[id]
		if c.Removed || c.File == nil {
			l.Deleted = append(l.Deleted, id)
			continue
		}
		if it, ok := s.item(c.File); ok {
			l.Items = append(l.Items, it)
		} else if c.File.MimeType != folderType {
			l.Deleted = append(l.Deleted, id) // trashed, or no longer a file ragd reads
		}
	}
	return l, nil
}

// item turns a Drive file into an item, or reports it is not synced (a folder, a Google type ragd does not
// read, a file type ragd does not extract, a file over the size limit).
func (s *Source) item(f *drive.File) (connector.Item, bool) {
	stem := cmp.Or(connector.FileStem(strings.TrimSpace(f.Name)), "Untitled")
	if f.MimeType == folderType || f.Trashed {
		return connector.Item{}, false
	}
	it := connector.Item{ID: f.Id, Source: f.WebViewLink,
		Metadata: map[string]any{"drive_id": f.Id, "mime_type": f.MimeType, "modified_time": f.ModifiedTime}}
	if ex, ok := exports[f.MimeType]; ok {
		it.Name, it.Title = stem+ex.ext, f.Name
		it.Version = ex.marker + ":" + f.ModifiedTime
		return it, true
	}
	if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") || f.Size > s.maxBytes {
		return connector.Item{}, false
	}
	// The name's extension selects the extractor; a name without a readable one gets its type's.
	if it.Name = stem; !extract.Supported(it.Name) {
		it.Name = web.FileName(&url.URL{Path: "/" + it.Name}, f.MimeType)
	}
	if !extract.Supported(it.Name) {
		return connector.Item{}, false
	}
	it.Version = "modified:" + f.ModifiedTime
	if f.Md5Checksum != "" {
		it.Version = "md5:" + f.Md5Checksum // content only: a rename or a move re-embeds nothing
	}
	return it, true
}

// Fetch downloads a file, or exports a Google Doc, Sheet or Slides deck (the version says which).
func (s *Source) Fetch(ctx context.Context, it connector.Item) ([]byte, error) {
	marker, _, _ := strings.Cut(it.Version, ":")
	var resp *http.Response
	var err error
	switch marker {
	case "gdoc", "gsheet", "gslides":
		var mime string
		for _, ex := range exports {
			if ex.marker == marker {
				mime = ex.mime
			}
		}
		resp, err = s.svc.Files.Export(it.ID, mime).Context(ctx).Download()
	default:
		resp, err = s.svc.Files.Get(it.ID).Context(ctx).Download()
	}
	if err != nil {
		return nil, apiError("download "+it.ID, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	if err != nil {
		return nil, apiError("download "+it.ID, err)
	}
	if int64(len(data)) > s.maxBytes {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s is over the limit of %d bytes", it.Name, s.maxBytes)
	}
	return data, nil
}
