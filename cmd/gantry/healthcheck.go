package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config/static"
)

// healthcheckTimeout bounds the whole check.
const healthcheckTimeout = 5 * time.Second

// healthcheckCmd is Traefik's "healthcheck" subcommand, used in container
// HEALTHCHECK lines (images FROM scratch have no curl): it loads the same
// static configuration as run, GETs /ping on the ping entrypoint
// (ping.entryPoint, default "traefik") on loopback, and returns 0 when the
// answer is 200, 1 otherwise. Source:
// https://doc.traefik.io/traefik/operations/cli/#healthcheck
func healthcheckCmd(ctx context.Context, c cliArgs, environ []string, stdout io.Writer) int {
	l, err := loadStatic(c, environ)
	if err != nil {
		fmt.Fprintf(stdout, "error: static configuration: %v\n", err)
		return 1
	}
	url, err := pingURL(l.Config)
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\n", err)
		return 1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stdout, "error: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stdout, "bad health check status: %d from %s\n", resp.StatusCode, url)
		return 1
	}
	fmt.Fprintf(stdout, "OK: %s\n", url)
	return 0
}

// pingURL returns http://<loopback>:<port>/ping for the ping entrypoint.
func pingURL(c *static.Configuration) (string, error) {
	if c.Ping == nil {
		return "", errors.New("ping is not enabled: set ping (--ping) to use the health check")
	}
	name := c.Ping.EntryPoint
	if name == "" {
		name = internalEntryPoint
	}
	ep, ok := c.EntryPoints[name]
	if !ok || ep == nil {
		return "", fmt.Errorf("ping.entryPoint: no entrypoint %q", name)
	}
	addr, _, _ := strings.Cut(ep.Address, "/")
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("entryPoints.%s.address %q: %w", name, ep.Address, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/ping", nil
}
