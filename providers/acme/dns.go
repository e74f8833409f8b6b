package acme

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-acme/lego/v5/challenge"
)

// The providers (dns_providers.go) are chosen one by one, as lego's
// lego_dnslight build does: lego's all-providers registry pulls SDKs the
// module proxy does not serve. dns_providers.go lists every provider of
// lego v5.6.0 whose module graph resolves and builds here (207 of 229; the
// others, e.g. alidns, azuredns, linode, tencentcloud, need modules the
// proxy refuses).

// DNSProviders returns the available dnsChallenge.provider names, sorted.
func DNSProviders() []string { return slices.Sorted(maps.Keys(dnsProviders)) }

// newDNSProvider builds the named provider from its environment variables.
// An unknown name is an error listing the available ones.
func newDNSProvider(name string) (challenge.Provider, error) {
	n := strings.ToLower(name)
	if a, ok := dnsAliases[n]; ok {
		n = a
	}
	mk, ok := dnsProviders[n]
	if !ok {
		return nil, fmt.Errorf("unknown DNS provider %q (available in this build: %s)", name, strings.Join(DNSProviders(), ", "))
	}
	p, err := mk()
	if err != nil {
		return nil, fmt.Errorf("DNS provider %s: %w", n, err)
	}
	return p, nil
}
