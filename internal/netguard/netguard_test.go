package netguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr          string
		public, local bool // allowed without / with AllowPrivate
	}{
		{"8.8.8.8", true, true},
		{"2606:4700:4700::1111", true, true},
		{"127.0.0.1", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"10.1.2.3", false, true},
		{"172.16.0.1", false, true},
		{"192.168.1.1", false, true},
		{"169.254.169.254", false, false}, // cloud metadata: refused even when private addresses are allowed
		{"fd00:ec2::254", false, false},
		{"fe80::1", false, false},
		{"fd00::1", false, true},
		{"100.64.0.1", false, true},
		{"0.0.0.0", false, false},
		{"::", false, false},
		{"224.0.0.1", false, false},
		{"64:ff9b::7f00:1", false, true},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.addr)
		if got := (Options{}).Allowed(ip); got != c.public {
			t.Errorf("Allowed(%s) = %v, want %v", c.addr, got, c.public)
		}
		if got := (Options{AllowPrivate: true}).Allowed(ip); got != c.local {
			t.Errorf("AllowPrivate: Allowed(%s) = %v, want %v", c.addr, got, c.local)
		}
	}
}

func TestClient(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)

	t.Run("LoopbackRefused", func(t *testing.T) {
		_, err := Options{}.Client().Get(srv.URL)
		if !IsForbidden(err) {
			t.Fatalf("err = %v, want a forbidden address", err)
		}
	})
	t.Run("LoopbackAllowed", func(t *testing.T) {
		resp, err := Options{AllowPrivate: true}.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "ok" {
			t.Fatalf("body %q", b)
		}
	})
	t.Run("RedirectLoopStops", func(t *testing.T) {
		_, err := Options{AllowPrivate: true, MaxRedirects: 3}.Client().Get(srv.URL + "/loop")
		if err == nil {
			t.Fatal("a redirect loop was followed without end")
		}
	})
}
