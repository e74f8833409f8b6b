// Command gantry-dns holds lego's DNS-01 providers and their SDKs for
// gantry's ACME DNS challenge (certificatesResolvers.<name>.acme.
// dnsChallenge.provider). gantry runs it from its own directory, so ship
// both programs side by side (the Dockerfiles and scripts/image.sh do); a
// gantry without it serves everything but refuses a DNS challenge with an
// error naming the resolver's dnsChallenge.provider.
//
// Usage (gantry runs it; the protocol is package dnshelper's):
//
//	gantry-dns [-resolvers host:port,...] <provider> check|serve
//	gantry-dns names
//
// The provider reads its credentials from the environment, which gantry
// passes through: lego's documentation of each provider names its
// variables (https://go-acme.github.io/lego/dns/).
package main

import (
	"os"

	"github.com/gantry-proxy/gantry/providers/acme/dnshelper"
	"github.com/gantry-proxy/gantry/providers/acme/dnsproviders"
)

func main() {
	os.Exit(dnshelper.Run(dnshelper.Registry{Lookup: dnsproviders.Lookup, Names: dnsproviders.Names}))
}
