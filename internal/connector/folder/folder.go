// Package folder is the "folder" source kind: a directory on the machine ragd runs on, listed in full at
// every sync and watched with fsnotify while ragd runs (docs/connectors.md "Folder").
//
// Settings: {"path": "/abs/dir", "include": ["*.md", "papers/**"], "exclude": ["drafts/**"]}. An item is a
// file under path whose type ragd reads (internal/extract), whose name and directories do not start with
// '.', that matches an include pattern (every file when there are none) and no exclude pattern. Its ID is
// its path relative to path, with '/' separators; its version its modification time and size. Moves are
// reported by inode: a file renamed or moved within the folder keeps its document.
package folder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/ragd/ragd/internal/connector"
	"github.com/ragd/ragd/internal/extract"
)

// Kind is the name of this kind.
const Kind = "folder"

// MaxPatterns bounds the include and exclude patterns of one source.
const MaxPatterns = 100

// Settings are a folder source's settings.
type Settings struct {
	Path    string   `json:"path"`
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// Folder is a folder source.
type Folder struct {
	set      Settings
	maxBytes int64
}

// New is the kind's connector.Factory: it checks the settings (an absolute path, valid patterns); the
// directory itself is checked at each sync.
func New(c connector.Config) (connector.Source, error) {
	var set Settings
	dec := json.NewDecoder(strings.NewReader(string(c.Settings)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf("folder settings: %w (path, include, exclude)", err)
	}
	switch {
	case set.Path == "":
		return nil, errors.New("a folder source needs a path")
	case !filepath.IsAbs(set.Path):
		return nil, fmt.Errorf("folder path %q is not absolute", set.Path)
	case len(set.Include) > MaxPatterns || len(set.Exclude) > MaxPatterns:
		return nil, fmt.Errorf("at most %d include and %d exclude patterns", MaxPatterns, MaxPatterns)
	}
	set.Path = filepath.Clean(set.Path)
	for _, p := range append(append([]string{}, set.Include...), set.Exclude...) {
		if err := checkPattern(p); err != nil {
			return nil, err
		}
	}
	return &Folder{set: set, maxBytes: c.MaxBytes}, nil
}

// cursor is what a folder remembers between syncs: the inode of each listed item, to tell moves.
type cursor map[string]string // item ID → "dev:ino"

// List walks the folder. The listing is always full; Moved pairs an item gone since the cursor with a new
// one that has its inode.
func (f *Folder) List(ctx context.Context, cur string) (connector.Listing, error) {
	info, err := os.Stat(f.set.Path)
	if err != nil {
		return connector.Listing{}, fmt.Errorf("folder %s: %w", f.set.Path, err)
	}
	if !info.IsDir() {
		return connector.Listing{}, fmt.Errorf("folder %s is not a directory", f.set.Path)
	}
	now := cursor{}
	var items []connector.Item
	err = filepath.WalkDir(f.set.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == f.set.Path {
				return err
			}
			return nil // unreadable below the root: skipped, as if absent
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		rel, _ := filepath.Rel(f.set.Path, p)
		rel = filepath.ToSlash(rel)
		if p != f.set.Path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != f.set.Path && matchAny(f.set.Exclude, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !f.wanted(rel) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		items = append(items, connector.Item{
			ID: rel, Name: d.Name(), Source: p,
			Version: strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "-" + strconv.FormatInt(fi.Size(), 10),
		})
		if id := inode(fi); id != "" {
			now[rel] = id
		}
		return nil
	})
	if err != nil {
		return connector.Listing{}, fmt.Errorf("folder %s: %w", f.set.Path, err)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	l := connector.Listing{Full: true, Items: items}
	var before cursor
	if cur != "" && json.Unmarshal([]byte(cur), &before) == nil {
		l.Moved = moves(before, now)
	}
	b, _ := json.Marshal(now)
	l.Cursor = string(b)
	return l, nil
}

// moves pairs each item of before that is gone in now with the new item of now that has its inode.
func moves(before, now cursor) map[string]string {
	added := map[string]string{} // inode → new item
	for id, ino := range now {
		if _, ok := before[id]; !ok {
			added[ino] = id
		}
	}
	out := map[string]string{}
	for id, ino := range before {
		if _, still := now[id]; still {
			continue
		}
		if to, ok := added[ino]; ok {
			out[id] = to
		}
	}
	return out
}

// wanted says whether the file rel is an item: a type ragd reads, included and not excluded.
func (f *Folder) wanted(rel string) bool {
	if !extract.Supported(rel) {
		return false
	}
	if len(f.set.Include) > 0 && !matchAny(f.set.Include, rel) {
		return false
	}
	return !matchAny(f.set.Exclude, rel)
}

// Fetch reads an item's file, refusing one over the item limit.
func (f *Folder) Fetch(ctx context.Context, it connector.Item) ([]byte, error) {
	p := filepath.Join(f.set.Path, filepath.FromSlash(it.ID))
	if rel, err := filepath.Rel(f.set.Path, p); err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("item %q is outside the folder", it.ID)
	}
	file, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	limit := f.maxBytes
	if limit <= 0 {
		limit = 1 << 62
	}
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is over the limit of %d bytes", it.ID, limit)
	}
	return data, nil
}

// Watch implements connector.Watcher with fsnotify: every directory of the folder is watched (new ones as
// they appear), a sync is asked for once the watch is set, and then any event on a path that could be an item, or on a directory, counts as a change.
func (f *Folder) Watch(ctx context.Context, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := f.addTree(w, f.set.Path); err != nil {
		return err
	}
	// What changed before the watch began (while ragd was down, or since the last sync) is found by a sync
	// now.
	changed()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("folder watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				changed() // events were lost: a sync lists everything anyway
				continue
			}
			return err
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("folder watcher closed")
			}
			if ev.Name == f.set.Path && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				changed()
				return fmt.Errorf("folder %s was removed or renamed", f.set.Path)
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					_ = f.addTree(w, ev.Name) // files created in it before the watch are listed by the sync
					changed()
					continue
				}
			}
			if ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write) {
				continue
			}
			if f.relevant(ev.Name) {
				changed()
			}
		}
	}
}

// relevant says whether an event on p may change the listing: an item, or something that may be a
// directory (a directory removed or renamed holds items).
func (f *Folder) relevant(p string) bool {
	rel, err := filepath.Rel(f.set.Path, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return false
	}
	rel = filepath.ToSlash(rel)
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return f.wanted(rel) || path.Ext(rel) == ""
}

// addTree watches dir and the directories under it that a listing enters.
func (f *Folder) addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if p != f.set.Path {
			rel, _ := filepath.Rel(f.set.Path, p)
			if strings.HasPrefix(d.Name(), ".") || matchAny(f.set.Exclude, filepath.ToSlash(rel)) {
				return filepath.SkipDir
			}
		}
		if err := w.Add(p); err != nil {
			if p == dir {
				return err
			}
		}
		return nil
	})
}
