// Package dnsproviders is the registry of lego's DNS-01 providers
// (certificatesResolvers.<name>.acme.dnsChallenge.provider) with every SDK
// they pull in. Only cmd/gantry-dns imports it and serves Lookup and Names
// to gantry through package dnshelper's protocol, so gantry itself and the
// packages and tests that need no DNS provider (the dataplane, the
// dashboard, providers/acme's own tests) neither link nor initialise those
// SDKs (hundreds of package initialisers; one, bce-sdk-go, starts a
// goroutine).
//
// providers.go is generated from lego v5.6.0's provider list: every provider
// whose dependencies the module proxy serves and that builds with Go 1.26
// (207 of 229; alidns, azuredns, linode, tencentcloud and a few others need
// modules the proxy refuses).
package dnsproviders

import (
	"maps"
	"slices"
	"strings"

	"github.com/go-acme/lego/v5/challenge"
)

// Lookup returns the constructor of the named provider (lego's name or one
// of its aliases, any case); the constructor reads the provider's
// environment variables (lego's documentation of each provider names them).
// ok is false for an unknown name.
func Lookup(name string) (mk func() (challenge.Provider, error), ok bool) {
	n := strings.ToLower(name)
	if a, isAlias := aliases[n]; isAlias {
		n = a
	}
	mk, ok = providers[n]
	return mk, ok
}

// Names returns the provider names Lookup knows (aliases aside), sorted.
func Names() []string { return slices.Sorted(maps.Keys(providers)) }
