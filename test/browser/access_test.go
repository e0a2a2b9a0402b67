package browser

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragd/ragd/internal/testkit"
)

// TestAccessUI: signing in with a key shows its principal; the admin makes a user and its key on the admin
// page (the key shown once); a grant added in the document page's share dialog lets that user's key read
// the document; a read-only key gets neither the share button nor the admin page; a deleted document comes
// back from the documents page's deleted view. No console error; no page scrolls sideways at 390 px.
func TestAccessUI(t *testing.T) {
	ctx, _ := browser(t)
	errs := consoleErrors(t, ctx)
	const admin = "access-ui-bootstrap-admin-key-0123456789"
	srv := startRagd(t, "RAGD_ADMIN_KEY="+admin)
	call := func(key, method, path string, body any) (int, []byte) { return srv.Call(t, key, method, path, body) }
	code, body := call(admin, "POST", "/api/documents", map[string]any{"title": "보안 정책 handbook", "text": "The access policy of the handbook: keys, grants and teams."})
	var up struct {
		ID        string `json:"id"`
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	if err := json.Unmarshal(body, &up); err != nil || code >= 300 {
		t.Fatalf("upload: %d %s", code, body)
	}
	id := up.ID
	if id == "" && len(up.Documents) > 0 {
		id = up.Documents[0].ID
	}
	if id == "" {
		t.Fatalf("upload: no id in %s", body)
	}

	signIn := func(path, key, who string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+path),
			chromedp.WaitVisible(chromedp.ID("api-key-input")), chromedp.SendKeys(chromedp.ID("api-key-input"), key),
			chromedp.Click(chromedp.ID("api-key-save"))); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the principal "+who, `(document.getElementById('principal-name') || {}).textContent === `+jsString(who), 30*time.Second)
		if url := eval[string](t, ctx, `location.href`); strings.Contains(url, key) {
			t.Fatalf("the key is in the address: %s", url)
		}
	}
	signOut := func() {
		t.Helper()
		// Sign out reloads the page, which asks for a key again.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("api-key-input"))); err != nil {
			t.Fatal(err)
		}
		if k := eval[string](t, ctx, `sessionStorage.getItem('ragd.apiKey') || ''`); k != "" {
			t.Fatalf("signed out, the tab still holds a key")
		}
	}

	// Cancelling the key dialog leaves "Sign in" in the header, which asks again.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents"), chromedp.WaitVisible(chromedp.ID("api-key-cancel")),
		chromedp.Click(chromedp.ID("api-key-cancel")), chromedp.WaitVisible(chromedp.ID("sign-in")),
		chromedp.Click(chromedp.ID("sign-in")), chromedp.WaitVisible(chromedp.ID("api-key-input"))); err != nil {
		t.Fatal(err)
	}

	// The admin signs in; the header shows it, its scopes and the Admin link.
	signIn("/documents", admin, "admin")
	if s := eval[string](t, ctx, `document.getElementById('principal-scopes').textContent`); s != "read,write,admin" {
		t.Errorf("admin's scopes shown: %q", s)
	}
	waitFor(t, ctx, "the Admin link", `!!document.getElementById('nav-admin')`, 10*time.Second)

	// The admin page: a user, a key for it shown once, the audit log.
	if h := eval[string](t, ctx, `document.getElementById('nav-admin').getAttribute('href')`); h != "/admin" {
		t.Errorf("the Admin link goes to %q", h)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the admin page", `!document.getElementById('admin').hidden && document.querySelector('#user-rows tr[data-user="admin"]')`, 30*time.Second)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("user-name"), "otto"), chromedp.Click(chromedp.ID("user-add"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new user", `!!document.querySelector('#user-rows tr[data-user="otto"]')`, 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("key-user"), "otto"), chromedp.Click(chromedp.ID("key-create"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new key", `document.getElementById('new-key').textContent.startsWith('ragd_')`, 10*time.Second)
	otto := eval[string](t, ctx, `document.getElementById('new-key').textContent`)
	prefix := otto[:len("ragd_")+12]
	waitFor(t, ctx, "the key listed by prefix", `!!document.querySelector('#key-rows tr[data-prefix="`+prefix+`"][data-state="active"]')`, 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("new-key-done"))); err != nil {
		t.Fatal(err)
	}
	if eval[bool](t, ctx, `document.body.innerText.includes(`+jsString(otto)+`)`) {
		t.Error("the key is still shown after Done")
	}
	// Disable and enable otto from the users' table; a team with otto as its member.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#user-rows tr[data-user="otto"] button[data-action="disable"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#user-rows tr[data-user="otto"] button[data-action="enable"]`))); err != nil {
		t.Fatal(err)
	}
	if code, _ := call(otto, "GET", "/api/me", nil); code != http.StatusUnauthorized {
		t.Errorf("a disabled user's key: %d", code)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#user-rows tr[data-user="otto"] button[data-action="enable"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#user-rows tr[data-user="otto"] button[data-action="disable"]`))); err != nil {
		t.Fatal(err)
	}
	if code, b := call(otto, "GET", "/api/me", nil); code != http.StatusOK || !strings.Contains(string(b), `"user":"otto"`) {
		t.Errorf("an enabled user's key: %d %s", code, b)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("team-name"), "ops"), chromedp.Click(chromedp.ID("team-add")),
		chromedp.WaitVisible(chromedp.CSS(`#team-rows tr[data-team="ops"] button[data-action="members"]`)),
		chromedp.Click(chromedp.CSS(`#team-rows tr[data-team="ops"] button[data-action="members"]`)),
		chromedp.WaitVisible(chromedp.ID("member-user")), chromedp.SendKeys(chromedp.ID("member-user"), "otto"),
		chromedp.Click(chromedp.ID("member-add")), chromedp.WaitVisible(chromedp.CSS(`#member-list li[data-member="otto"]`))); err != nil {
		t.Fatal(err)
	}
	if code, b := call(otto, "GET", "/api/me", nil); code != http.StatusOK || !strings.Contains(string(b), `"teams":["ops"]`) {
		t.Errorf("otto's teams after joining in the UI: %d %s", code, b)
	}
	// Change otto's role in the member list (team admin), then remove otto from the team, then add again.
	if !eval[bool](t, ctx, `(() => { const s = document.querySelector('#member-list li[data-member="otto"] select[data-action="role"]');
		if (!s) return false; s.closest('li').dataset.stale = '1'; s.value = 'admin'; s.dispatchEvent(new Event('change')); return true; })()`) {
		t.Fatal("no role select for otto in the member list")
	}
	testkit.WaitFor(t, "otto made team admin from the UI", 10*time.Second, func() bool {
		_, b := call(admin, "GET", "/api/admin/teams/ops/members", nil)
		return strings.Contains(string(b), `{"team":"ops","user":"otto","role":"admin"}`)
	})
	// The change re-renders the list (the old row is marked stale): wait for the new row, then click its
	// Remove inside the page, so that no re-render can swap the node between finding and clicking it.
	waitFor(t, ctx, "the member list re-rendered with otto as team admin",
		`(() => { const s = document.querySelector('#member-list li[data-member="otto"]:not([data-stale]) select[data-action="role"]'); return !!s && s.value === 'admin'; })()`, 10*time.Second)
	if !eval[bool](t, ctx, `(() => { const b = document.querySelector('#member-list li[data-member="otto"] button[data-action="remove"]');
		if (!b) return false; b.click(); return true; })()`) {
		t.Fatal("no remove button for otto in the member list")
	}
	waitFor(t, ctx, "otto gone from the member list", `!document.querySelector('#member-list li[data-member="otto"]')`, 10*time.Second)
	if code, b := call(otto, "GET", "/api/me", nil); code != http.StatusOK || !strings.Contains(string(b), `"teams":[]`) {
		t.Errorf("otto's teams after removal in the UI: %d %s", code, b)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("member-user"), "otto"), chromedp.Click(chromedp.ID("member-add")),
		chromedp.WaitVisible(chromedp.CSS(`#member-list li[data-member="otto"]`))); err != nil {
		t.Fatal(err)
	}
	if code, _ := call(otto, "GET", "/api/documents/"+id, nil); code != http.StatusNotFound {
		t.Fatalf("before any grant otto's key reads the document: %d", code)
	}
	// The audit log pages: more than 50 events (document reads), newest first, "older" shows the next ones.
	for range 60 {
		if code, b := call(admin, "GET", "/api/documents/"+id, nil); code != http.StatusOK {
			t.Fatalf("read: %d %s", code, b)
		}
	}
	testkit.WaitFor(t, "the reads in the audit log", 10*time.Second, func() bool {
		_, b := call(admin, "GET", "/api/admin/audit?action=document.read&limit=60", nil)
		return strings.Count(string(b), `"document.read"`) >= 60
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "a full page of audit rows", `document.querySelectorAll('#audit-rows tr').length === 50 && !document.getElementById('audit-older').disabled`, 10*time.Second)
	last := eval[int](t, ctx, `Number([...document.querySelectorAll('#audit-rows tr')].at(-1).dataset.id)`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("audit-older"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the older page", `Number(document.querySelector('#audit-rows tr').dataset.id) < `+strconv.Itoa(last)+` && !document.getElementById('audit-first').disabled`, 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("a-action"), "key.created")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the audit log filtered by action",
		`(() => { const r = [...document.querySelectorAll('#audit-rows tr')]; return r.length > 0 && r.every((e) => e.dataset.action === 'key.created'); })()`, 10*time.Second)
	noOverflowAt390(t, ctx, "/admin", "access-admin-390.png")

	// The share dialog: a read grant to otto lets otto's key read the document.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents/"+id)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the share button", `document.getElementById('share-button').dataset.writable === 'true' && !document.getElementById('share-button').hidden`, 30*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("share-button")), chromedp.WaitVisible(chromedp.ID("grant-name")),
		chromedp.SendKeys(chromedp.ID("grant-name"), "otto"), chromedp.Click(chromedp.ID("grant-add"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the grant listed", `!!document.querySelector('#grant-list li[data-grant="user:otto"][data-access="read"]')`, 10*time.Second)
	noOverflowAt390(t, ctx, "/documents/{id} with the share dialog", "access-share-390.png")
	if code, b := call(otto, "GET", "/api/documents/"+id, nil); code != http.StatusOK || !strings.Contains(string(b), "보안 정책 handbook") {
		t.Fatalf("after the grant otto's key reads the document: %d %s", code, b)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("share-close"))); err != nil {
		t.Fatal(err)
	}

	// otto's read-only key: its name in the header, no share button, no admin page.
	signOut()
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("api-key-input"), otto), chromedp.Click(chromedp.ID("api-key-save"))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "otto signed in", `(document.getElementById('principal-name') || {}).textContent === 'otto'`, 30*time.Second)
	waitFor(t, ctx, "the grants read", `document.getElementById('share-button').dataset.writable === 'false'`, 30*time.Second)
	if !eval[bool](t, ctx, `document.getElementById('share-button').hidden && !document.getElementById('nav-admin')`) {
		t.Error("a read-only key sees the share button or the Admin link")
	}
	if s := eval[string](t, ctx, `document.getElementById('doc-title').textContent`); s != "보안 정책 handbook" {
		t.Errorf("otto's document page shows %q", s)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/documents")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "otto's documents, read only", `document.body.classList.contains('read-only') && !!document.getElementById('doc-`+id+`')`, 30*time.Second)
	if !eval[bool](t, ctx, `document.getElementById('upload-card').offsetParent === null && [...document.querySelectorAll('#doc-rows button')].every((b) => b.offsetParent === null)`) {
		t.Error("a read-only key sees the upload or the document buttons")
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/admin")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the admin page refused", `!document.getElementById('admin-refused').hidden && document.getElementById('admin').hidden`, 30*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#user-rows tr, #key-rows tr').length`); n != 0 {
		t.Errorf("a read-only key's admin page lists %d rows", n)
	}

	// The deleted view: restore before the purge.
	signOut()
	if code, b := call(admin, "DELETE", "/api/documents/"+id, nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", code, b)
	}
	signIn("/documents", admin, "admin")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('f-view'); s.value = 'deleted'; s.dispatchEvent(new Event('input', {bubbles: true})); })()`)); err != nil {
		t.Fatal(err)
	}
	row := `#doc-` + id + `[data-status="deleted"]`
	waitFor(t, ctx, "the deleted document", `!!document.querySelector('`+row+` [data-purge-at]:not([data-purge-at=""])')`, 30*time.Second)
	noOverflowAt390(t, ctx, "/documents (deleted view)", "access-deleted-390.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(row+` button[data-action="restore"]`))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the row gone from the deleted view", `!document.querySelector('`+row+`')`, 30*time.Second)
	if code, b := call(admin, "GET", "/api/documents/"+id, nil); code != http.StatusOK {
		t.Fatalf("restored document: %d %s", code, b)
	}

	// Every page's header holds the sign-in control on a phone.
	for _, p := range []string{"/", "/search", "/board", "/documents/" + id} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+p)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the principal on "+p, `(document.getElementById('principal-name') || {}).textContent === 'admin'`, 30*time.Second)
		noOverflowAt390(t, ctx, p, "access-header-"+strings.Trim(strings.ReplaceAll(p, "/", "-"), "-")+"-390.png")
	}

	for _, e := range errs() {
		// Each sign-in starts with the page's requests refused (no key yet): the browser logs those loads.
		if !strings.Contains(e, "401") {
			t.Errorf("console error: %s", e)
		}
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
