package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "ragd "+Version+" (go") ||
			!strings.HasPrefix(lines[1], "hosted providers: ") {
			t.Fatalf("%v: code %d, out %q, err %q", args, code, out.String(), errOut.String())
		}
	}
}

func TestHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	down.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	addr := strings.TrimPrefix(ok.URL, "http://")
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		code int
	}{
		{"OK", []string{"--url", ok.URL}, nil, 0},
		{"FromRAGD_ADDR", nil, map[string]string{"RAGD_ADDR": "0.0.0.0:" + port}, 0},
		{"Unhealthy", []string{"--url", failing.URL}, nil, 1},
		{"Unreachable", []string{"--url", down.URL}, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(context.Background(), append([]string{"healthcheck"}, tc.args...), strings.NewReader(""), &out, &errOut,
				func(k string) string { return tc.env[k] })
			if code != tc.code || (code == 0) != (out.String() == "ok\n") {
				t.Fatalf("code %d, out %q, err %q", code, out.String(), errOut.String())
			}
		})
	}
}
