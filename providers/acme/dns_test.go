package acme

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/providers/dns/exec"

	"github.com/gantry-proxy/gantry/config/static"
)

// The tests register one DNS provider, lego's exec, as cmd/gantry
// registers the whole of dnsproviders: this package's tests link no
// provider SDK.
func init() {
	RegisterDNSProviders(func(name string) (func() (challenge.Provider, error), bool) {
		if strings.EqualFold(name, "exec") {
			return func() (challenge.Provider, error) { return exec.NewDNSProvider() }, true
		}
		return nil, false
	}, func() []string { return []string{"exec"} })
}

// Without a registered registry (a program embedding this package without
// dnsproviders), a dnsChallenge is refused with an error that says so; the
// other challenges work.
func TestNoDNSRegistry(t *testing.T) {
	saved := dnsRegistry
	dnsRegistry.lookup, dnsRegistry.names = nil, nil
	defer func() { dnsRegistry = saved }()
	_, err := New(staticWith(map[string]*static.ACME{"le": {DNSChallenge: &static.DNSChallenge{Provider: "exec"}}}), &memKV{}, slog.New(slog.DiscardHandler), "t")
	if err == nil || !strings.Contains(err.Error(), `dnsChallenge.provider: DNS provider "exec": this program has no DNS providers`) {
		t.Errorf("error %v, want one saying there are no DNS providers", err)
	}
	if _, err := New(staticWith(map[string]*static.ACME{"le": {TLSChallenge: &static.TLSChallenge{}}}), &memKV{}, slog.New(slog.DiscardHandler), "t"); err != nil {
		t.Errorf("tlsChallenge without DNS providers: %v", err)
	}
}
