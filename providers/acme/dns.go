package acme

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/providers/dns/cloudflare"
	"github.com/go-acme/lego/v5/providers/dns/digitalocean"
	"github.com/go-acme/lego/v5/providers/dns/dnsupdate"
	"github.com/go-acme/lego/v5/providers/dns/exec"
	"github.com/go-acme/lego/v5/providers/dns/gandiv5"
	"github.com/go-acme/lego/v5/providers/dns/hetzner"
	"github.com/go-acme/lego/v5/providers/dns/httpreq"
	"github.com/go-acme/lego/v5/providers/dns/ovh"
	"github.com/go-acme/lego/v5/providers/dns/route53"
)

// dnsProviders maps the DNS provider names of dnsChallenge.provider
// (lego's codes, which Traefik uses) to their constructors. Each provider
// reads its own environment variables (CF_DNS_API_TOKEN, AWS_*, …). The
// list is chosen one by one, as lego's lego_dnslight build does: lego's
// all-providers registry pulls SDKs the module proxy does not serve.
var dnsProviders = map[string]func() (challenge.Provider, error){
	"cloudflare":   func() (challenge.Provider, error) { return cloudflare.NewDNSProvider() },
	"digitalocean": func() (challenge.Provider, error) { return digitalocean.NewDNSProvider() },
	"exec":         func() (challenge.Provider, error) { return exec.NewDNSProvider() },
	"gandiv5":      func() (challenge.Provider, error) { return gandiv5.NewDNSProvider() },
	"hetzner":      func() (challenge.Provider, error) { return hetzner.NewDNSProvider() },
	"httpreq":      func() (challenge.Provider, error) { return httpreq.NewDNSProvider() },
	"ovh":          func() (challenge.Provider, error) { return ovh.NewDNSProvider() },
	"rfc2136":      func() (challenge.Provider, error) { return dnsupdate.NewDNSProvider() },
	"route53":      func() (challenge.Provider, error) { return route53.NewDNSProvider() },
}

// dnsAliases are other names lego accepts for the same providers.
var dnsAliases = map[string]string{"dnsupdate": "rfc2136"}

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
