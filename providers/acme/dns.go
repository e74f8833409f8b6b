package acme

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-acme/lego/v5/challenge"

	"github.com/gantry-proxy/gantry/providers/acme/dnshelper"
)

// DNSHelper is the file name of the program holding lego's DNS-01 providers
// (cmd/gantry-dns), looked for in the directory of the running executable:
// gantry links none of their SDKs (package dnshelper).
const DNSHelper = "gantry-dns"

// dnsHelperPath returns the helper's path: DNSHelper beside the running
// executable. Tests point it at their own helper.
var dnsHelperPath = func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate %s: %w", DNSHelper, err)
	}
	return filepath.Join(filepath.Dir(exe), DNSHelper), nil
}

// errNoDNSHelper: the helper program is not installed.
var errNoDNSHelper = errors.New("the DNS-01 helper is not installed")

// newDNSProvider checks the named provider in the helper (its name, its
// environment variables) and returns it; resolvers is
// dnsChallenge.resolvers. An unknown name is an error listing the
// available ones; a missing helper is errNoDNSHelper, naming where it was
// looked for.
func newDNSProvider(name string, resolvers []string, log *slog.Logger) (challenge.Provider, error) {
	path, err := dnsHelperPath()
	if err != nil {
		return nil, fmt.Errorf("DNS provider %q: %w", name, err)
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("DNS provider %q: %w: %s (install %s, built from cmd/gantry-dns, beside gantry)", name, errNoDNSHelper, path, DNSHelper)
	}
	p, err := dnshelper.New(context.Background(), path, name, resolvers, log)
	if errors.Is(err, dnshelper.ErrUnknownProvider) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("DNS provider %s: %w", strings.ToLower(name), err)
	}
	return p, nil
}

// closeDNS ends the DNS-01 helper processes of m's resolvers (one runs only
// while a challenge is being solved).
func (m *Manager) closeDNS() {
	for name, r := range m.resolvers {
		if c, ok := r.dns.(io.Closer); ok {
			if err := c.Close(); err != nil {
				m.log.Warn("DNS-01 helper exited with an error", "resolver", name, "error", err)
			}
		}
	}
}
