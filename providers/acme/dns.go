package acme

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-acme/lego/v5/challenge"
)

// The DNS-01 providers live in providers/acme/dnsproviders, which only
// cmd/gantry imports: their SDKs are linked and initialised only in the
// binary, and the binary registers them here before it builds a Manager.

// dnsRegistry is what RegisterDNSProviders set; zero: no DNS provider.
var dnsRegistry struct {
	lookup func(name string) (func() (challenge.Provider, error), bool)
	names  func() []string
}

// RegisterDNSProviders makes dnsChallenge.provider names resolve through
// lookup (a constructor per name, ok false when unknown) and names (the
// names to list when one is unknown). Call it once, before New (cmd/gantry
// does, from an init function, with dnsproviders.Lookup and Names).
func RegisterDNSProviders(lookup func(name string) (func() (challenge.Provider, error), bool), names func() []string) {
	dnsRegistry.lookup, dnsRegistry.names = lookup, names
}

// errNoDNSProviders: no registry was registered (a program that embeds
// providers/acme without dnsproviders).
var errNoDNSProviders = errors.New("this program has no DNS providers (providers/acme/dnsproviders is not registered)")

// newDNSProvider builds the named provider from its environment variables.
// An unknown name is an error listing the available ones.
func newDNSProvider(name string) (challenge.Provider, error) {
	if dnsRegistry.lookup == nil {
		return nil, fmt.Errorf("DNS provider %q: %w", name, errNoDNSProviders)
	}
	mk, ok := dnsRegistry.lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown DNS provider %q (available in this build: %s)", name, strings.Join(dnsRegistry.names(), ", "))
	}
	p, err := mk()
	if err != nil {
		return nil, fmt.Errorf("DNS provider %s: %w", strings.ToLower(name), err)
	}
	return p, nil
}
