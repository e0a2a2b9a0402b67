package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// runHealthcheck asks a running server's /healthz and succeeds on 200: the container image's HEALTHCHECK,
// which has no shell or curl to do it.
func runHealthcheck(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet("healthcheck")
	url := fs.String("url", "", "server root URL (default: http:// and RAGD_ADDR, an unspecified host as 127.0.0.1)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if _, err := parse(fs, args, env.Stdout); err != nil {
		return err
	}
	if *url == "" {
		cfg, err := (&common{}).load(env)
		if err != nil {
			return err
		}
		*url = "http://" + dialAddr(cfg.Addr)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url+"/healthz", nil)
	if err != nil {
		return usageErr("--url: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unhealthy: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("unhealthy: %s/healthz answered %s", *url, resp.Status)
	}
	fmt.Fprintln(env.Stdout, "ok")
	return nil
}

// dialAddr turns a listen address into one to connect to: ":8080" and "0.0.0.0:8080" listen on every
// interface, which is reached through loopback.
func dialAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
