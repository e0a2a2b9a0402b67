// Package git is the "git" source kind: the files of one branch of a Git repository, read with go-git (no
// git binary). A repository on this machine (a path or file:// URL) is opened where it is; one on an http or
// https URL is fetched into memory at each sync through the SSRF-guarded client. Syncs are incremental: the
// cursor is the commit last synced, and the next listing is the diff from it to the branch's tip (added and
// changed files, deleted ones, renames as moves).
package git

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/extract"
	"github.com/ragd/ragd/internal/netguard"
	"github.com/ragd/ragd/internal/rag"
)

// Kind is the name of the git kind in connector.Kinds.
const Kind = "git"

// Settings are a git source's settings.
type Settings struct {
	// URL is the repository: an http or https URL, or a path (or file:// URL) on this machine.
	URL string `json:"url"`
	// Branch is the branch synced ("" means the repository's default branch, its HEAD).
	Branch string `json:"branch"`
	// Paths, when set, limits the files to those under these folders (e.g. ["docs/"]).
	Paths []string `json:"paths"`
	// Username goes with the credentials (a token) for HTTP basic authentication (default "git"; hosts
	// such as GitHub and GitLab accept any name with a token).
	Username string `json:"username"`
}

// Source is one branch of one repository.
type Source struct {
	url      string // as given
	local    string // the repository's directory, for a local one
	remote   *transport.Endpoint
	branch   string
	paths    []string
	auth     transport.AuthMethod
	client   *http.Client
	maxBytes int64

	mu   sync.Mutex
	repo storer.EncodedObjectStorer // the objects of the last List, for Fetch
}

// New is the git kind's connector.Factory. Errors: CodeInvalid for bad settings (an ssh:// or git:// URL
// included: those would not go through the SSRF-guarded client).
func New(c connector.Config) (connector.Source, error) {
	var st Settings
	d := json.NewDecoder(strings.NewReader(string(c.Settings)))
	d.DisallowUnknownFields()
	if err := d.Decode(&st); err != nil {
		return nil, rag.Errorf(rag.CodeInvalid, "git source settings: %v", err)
	}
	s := &Source{url: strings.TrimSpace(st.URL), branch: strings.TrimSpace(st.Branch), client: c.HTTP, maxBytes: c.MaxBytes}
	if s.client == nil {
		s.client = netguard.Options{}.Client()
	}
	if s.maxBytes <= 0 {
		s.maxBytes = rag.DefaultMaxUploadBytes
	}
	for _, p := range st.Paths {
		p = strings.Trim(path.Clean("/"+p), "/")
		if p != "" {
			s.paths = append(s.paths, p+"/")
		}
	}
	if s.branch != "" && !plumbing.NewBranchReferenceName(s.branch).IsBranch() || strings.ContainsAny(s.branch, " ~^:?*[\\") {
		return nil, rag.Errorf(rag.CodeInvalid, "branch %q is not a branch name", s.branch)
	}
	u, err := url.Parse(s.url)
	switch {
	case s.url == "":
		return nil, rag.Errorf(rag.CodeInvalid, "a git source needs a repository \"url\"")
	case err == nil && (u.Scheme == "http" || u.Scheme == "https"):
		if u.Host == "" {
			return nil, rag.Errorf(rag.CodeInvalid, "repository URL %q has no host", s.url)
		}
		if s.remote, err = transport.NewEndpoint(s.url); err != nil {
			return nil, rag.Errorf(rag.CodeInvalid, "repository URL %q: %v", s.url, err)
		}
		if len(c.Credentials) > 0 {
			s.auth = &githttp.BasicAuth{Username: cmpOr(st.Username, "git"), Password: strings.TrimSpace(string(c.Credentials))}
		}
	case err == nil && u.Scheme == "file":
		s.local = u.Path
	case filepath.IsAbs(s.url):
		s.local = s.url
	default:
		return nil, rag.Errorf(rag.CodeInvalid, "repository %q: want an http(s) URL or an absolute path on this machine (ssh and git URLs are not supported)", s.url)
	}
	if s.local != "" {
		s.local = filepath.Clean(s.local)
	}
	return s, nil
}

// ReadsLocal reports whether a git source's settings name a repository on this machine (a path or a
// file:// URL) rather than an http(s) one: such a source reads the server's files, as a folder does.
func ReadsLocal(settings json.RawMessage) bool {
	var st struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(settings, &st)
	u, err := url.Parse(strings.TrimSpace(st.URL))
	return err != nil || (u.Scheme != "http" && u.Scheme != "https")
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// open returns the repository's objects and the commit at the tip of the branch. A remote repository is
// fetched whole into memory unless its tip is cursor, in which case nothing is downloaded and the
// returned storer is nil.
func (s *Source) open(ctx context.Context, cursor string) (storer.EncodedObjectStorer, plumbing.Hash, error) {
	if s.local != "" {
		repo, err := gogit.PlainOpen(s.local)
		if err != nil {
			return nil, plumbing.ZeroHash, rag.WrapError(rag.CodeInvalid, err, "%s is not a Git repository: %v", s.local, err)
		}
		ref, err := s.tip(repo)
		if err != nil {
			return nil, plumbing.ZeroHash, err
		}
		return repo.Storer, ref, nil
	}
	return s.fetch(ctx, cursor)
}

func (s *Source) tip(repo *gogit.Repository) (plumbing.Hash, error) {
	var ref *plumbing.Reference
	var err error
	if s.branch == "" {
		ref, err = repo.Head()
	} else {
		ref, err = repo.Reference(plumbing.NewBranchReferenceName(s.branch), true)
	}
	if err != nil {
		return plumbing.ZeroHash, rag.WrapError(rag.CodeNotFound, err, "%s has no branch %q", s.url, cmpOr(s.branch, "HEAD"))
	}
	return ref.Hash(), nil
}

// fetch runs the upload-pack protocol over s.client itself, rather than through go-git's Clone, whose
// transports are process-wide: every request then goes through the source's guarded client.
func (s *Source) fetch(ctx context.Context, cursor string) (storer.EncodedObjectStorer, plumbing.Hash, error) {
	sess, err := githttp.NewClient(s.client).NewUploadPackSession(s.remote, s.auth)
	if err != nil {
		return nil, plumbing.ZeroHash, s.remoteError(err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, plumbing.ZeroHash, s.remoteError(err)
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return nil, plumbing.ZeroHash, s.remoteError(err)
	}
	name := plumbing.HEAD
	if s.branch != "" {
		name = plumbing.NewBranchReferenceName(s.branch)
	}
	ref, err := storer.ResolveReference(refs, name)
	if err != nil {
		return nil, plumbing.ZeroHash, rag.WrapError(rag.CodeNotFound, err, "%s has no branch %q", s.url, cmpOr(s.branch, "HEAD"))
	}
	tip := ref.Hash()
	if tip.String() == cursor {
		return nil, tip, nil
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	req.Wants = []plumbing.Hash{tip}
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return nil, plumbing.ZeroHash, s.remoteError(err)
	}
	defer resp.Close()
	var r io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		r = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		r = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	st := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(st, r); err != nil {
		return nil, plumbing.ZeroHash, s.remoteError(err)
	}
	return st, tip, nil
}

// remoteError classifies a failure to reach a remote repository.
func (s *Source) remoteError(err error) error {
	switch {
	case netguard.IsForbidden(err):
		return rag.WrapError(rag.CodeForbidden, err, "%s: the address is private or reserved and private addresses are not allowed (RAGD_FETCH_ALLOW_PRIVATE)", s.url)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		return fmt.Errorf("%s: %w: %v", s.url, connector.ErrUnauthorized, err)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return rag.WrapError(rag.CodeNotFound, err, "%s: repository not found", s.url)
	case errors.Is(err, context.Canceled):
		return err
	}
	return rag.WrapError(rag.CodeInternal, err, "%s: fetch failed: %v", s.url, err)
}

// List reports the branch's files: all of them at the first sync (or when the commit of the cursor is no
// longer in the history, after a force push), else the diff from the cursor's commit to the tip. Files
// ragd does not extract, files over the size limit and files outside Paths are left out.
func (s *Source) List(ctx context.Context, cursor string) (connector.Listing, error) {
	st, tip, err := s.open(ctx, cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	if tip.String() == cursor {
		return connector.Listing{Cursor: cursor}, nil
	}
	s.mu.Lock()
	s.repo = st
	s.mu.Unlock()
	commit, err := object.GetCommit(st, tip)
	if err != nil {
		return connector.Listing{}, fmt.Errorf("%s: commit %s: %w", s.url, tip, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return connector.Listing{}, fmt.Errorf("%s: tree of %s: %w", s.url, tip, err)
	}
	l := connector.Listing{Cursor: tip.String()}
	var old *object.Tree
	if cursor != "" && plumbing.IsHash(cursor) {
		if oc, err := object.GetCommit(st, plumbing.NewHash(cursor)); err == nil {
			old, _ = oc.Tree()
		}
	}
	if old == nil {
		l.Full = true
		err := tree.Files().ForEach(func(f *object.File) error {
			if s.wanted(f.Name, f.Size) {
				l.Items = append(l.Items, s.item(f.Name, f.Hash, tip))
			}
			return ctx.Err()
		})
		if err != nil {
			return connector.Listing{}, fmt.Errorf("%s: files of %s: %w", s.url, tip, err)
		}
		return l, nil
	}
	changes, err := object.DiffTreeWithOptions(ctx, old, tree, object.DefaultDiffTreeOptions)
	if err != nil {
		return connector.Listing{}, fmt.Errorf("%s: diff %s..%s: %w", s.url, cursor, tip, err)
	}
	for _, c := range changes {
		from, to := c.From.Name, c.To.Name
		var size int64
		if to != "" {
			if f, err := tree.TreeEntryFile(&c.To.TreeEntry); err == nil {
				size = f.Size
			}
		}
		wasWanted := from != "" && s.wanted(from, 0)
		isWanted := to != "" && s.wanted(to, size)
		switch {
		case isWanted && wasWanted && from != to:
			if l.Moved == nil {
				l.Moved = map[string]string{}
			}
			l.Moved[from] = to
			l.Items = append(l.Items, s.item(to, c.To.TreeEntry.Hash, tip))
		case isWanted: // added, changed, or renamed from a file that was not synced
			l.Items = append(l.Items, s.item(to, c.To.TreeEntry.Hash, tip))
		case wasWanted: // deleted, or renamed out of view
			l.Deleted = append(l.Deleted, from)
		}
	}
	return l, nil
}

// wanted says whether a file is synced: under Paths, a type ragd extracts, within the size limit.
func (s *Source) wanted(name string, size int64) bool {
	if size > s.maxBytes || !extract.Supported(path.Base(name)) {
		return false
	}
	if len(s.paths) == 0 {
		return true
	}
	for _, p := range s.paths {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (s *Source) item(name string, blob, commit plumbing.Hash) connector.Item {
	src := name
	if s.local != "" {
		src = filepath.Join(s.local, filepath.FromSlash(name))
	} else {
		src = strings.TrimSuffix(strings.TrimSuffix(s.url, "/"), ".git") + "/" + name
	}
	return connector.Item{ID: name, Name: path.Base(name), Source: src, Version: blob.String(),
		Metadata: map[string]any{"path": name, "commit": commit.String(), "repository": s.url, "branch": s.branch}}
}

// Fetch returns a file's content at the commit List reported: the blob named by its version.
func (s *Source) Fetch(ctx context.Context, it connector.Item) ([]byte, error) {
	s.mu.Lock()
	st := s.repo
	s.mu.Unlock()
	if st == nil {
		var err error
		if st, _, err = s.open(ctx, ""); err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.repo = st
		s.mu.Unlock()
	}
	if !plumbing.IsHash(it.Version) {
		return nil, rag.Errorf(rag.CodeInvalid, "%s: version %q is not a blob hash", it.ID, it.Version)
	}
	blob, err := object.GetBlob(st, plumbing.NewHash(it.Version))
	if err != nil {
		return nil, fmt.Errorf("%s: blob %s: %w", it.ID, it.Version, err)
	}
	if blob.Size > s.maxBytes {
		return nil, rag.Errorf(rag.CodePayloadTooLarge, "%s is %d bytes, over the limit of %d bytes", it.ID, blob.Size, s.maxBytes)
	}
	r, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", it.ID, err)
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, s.maxBytes))
}
