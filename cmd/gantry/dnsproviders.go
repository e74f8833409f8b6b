package main

import (
	"github.com/gantry-proxy/gantry/providers/acme"
	"github.com/gantry-proxy/gantry/providers/acme/dnsproviders"
)

// The binary is the only importer of lego's DNS providers and their SDKs
// (dnsChallenge.provider); see package dnsproviders.
func init() { acme.RegisterDNSProviders(dnsproviders.Lookup, dnsproviders.Names) }
