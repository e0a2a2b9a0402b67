package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragd/ragd/internal/slots"
)

// With RAGD_SEARCH_SLOTS=1 and the slot taken, a search waits in line and is answered once the slot is
// given back; a chat, whose several searches run under its one slot, is answered with the single slot.
func TestSearchWaitsForASlot(t *testing.T) {
	b := setup(t, nil)
	b.ingestFile(t, "md/ko_react_importing-and-exporting-components.md", nil)
	gate := slots.New(1)
	b.deps.Slots = gate
	b.serve(t)

	_, release, err := gate.Enter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type answered struct {
		status int
		body   string
	}
	done := make(chan answered, 1)
	go func() { // not b.do: t.Fatal belongs to the test's goroutine
		resp, err := b.ts.Client().Post(b.ts.URL+"/api/search", "application/json", strings.NewReader(`{"query":"컴포넌트 export"}`))
		if err != nil {
			done <- answered{0, err.Error()}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		done <- answered{resp.StatusCode, string(body)}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r, w := gate.Counts(); r == 1 && w == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the search did not wait for the slot")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case a := <-done:
		t.Fatalf("answered while the only slot was held: %d %s", a.status, a.body)
	default:
	}
	release()
	a := <-done
	if a.status != http.StatusOK || !strings.Contains(a.body, `"hits"`) {
		t.Fatalf("search after the slot was given back: %d %s", a.status, a.body)
	}

	resp, body := b.do(t, request{method: http.MethodPost, path: "/api/chat", ctype: "application/json",
		body: strings.NewReader(`{"question":"컴포넌트를 export 하는 방법은?"}`)})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"answer"`) {
		t.Fatalf("chat with one slot: %d %s", resp.StatusCode, body)
	}
	if r, w := gate.Counts(); r != 0 || w != 0 {
		t.Fatalf("after the requests the gate shows %d running, %d waiting", r, w)
	}
}
