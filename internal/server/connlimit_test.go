package server

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestLimitListener holds exactly max connections open, sees the next one refused with 429 rate_limited
// and Retry-After, and sees a slot come back when one of the held connections closes.
func TestLimitListener(t *testing.T) {
	const max = 3
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	})}
	go srv.Serve(LimitListener(raw, max))
	t.Cleanup(func() { srv.Close() })
	addr := raw.Addr().String()

	get := func(c net.Conn) *http.Response {
		t.Helper()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	// max keep-alive connections, each served: all of them are under the limit.
	held := make([]net.Conn, max)
	for i := range held {
		held[i] = dial()
		if resp := get(held[i]); resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d of %d: status %d", i+1, max, resp.StatusCode)
		}
	}
	over := get(dial())
	if over.StatusCode != http.StatusTooManyRequests || over.Header.Get("Retry-After") == "" {
		t.Fatalf("connection %d: status %d Retry-After %q, want 429 with Retry-After", max+1, over.StatusCode, over.Header.Get("Retry-After"))
	}
	var body errorBody
	if err := json.NewDecoder(over.Body).Decode(&body); err != nil || body.Error != "rate_limited" {
		t.Fatalf("body %+v (%v), want rate_limited", body, err)
	}

	held[0].Close()
	// The server notices the close asynchronously; a new connection is served once it has.
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp := get(dial())
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a slot was never given back: status %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
