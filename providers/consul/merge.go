package consul

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// item is the configuration decoded from one instance. It is immutable
// once built, so Run can reuse it across snapshots.
type item struct {
	key  string // node + "\x00" + service ID: unique per instance (case 018)
	from origin
	cfg  *config.Configuration
	// forms holds the comparable form of each object
	// (providers.PartForms), computed once per instance.
	forms map[string][]byte
	// epSources locates each dynamic entrypoint the instance asks for:
	// "consul service redis instance n1/redis-1 tag gantry.entrypoints.x.address".
	epSources map[string]string
}

// origin is one instance: its Consul service name and "node/serviceID".
type origin struct{ service, instance string }

// mergeItems merges instance configurations in the given order with
// providers.MergeParts (Traefik's provider.Merge): an object defined
// identically by several instances is kept once; load-balancer services
// whose settings other than their servers agree are merged with the union
// of their servers (case 018); any other object defined differently by
// two instances is left out, with an error naming every instance that
// defines it. items are not modified. origins locates each dynamic
// entrypoint kept at the first instance asking for it.
func mergeItems(items []item) (cfg *config.Configuration, origins map[string]string, ps []providers.Problem) {
	parts := make([]providers.Part[origin], len(items))
	for i, it := range items {
		parts[i] = providers.Part[origin]{From: it.from, Config: it.cfg, Forms: it.forms, EntryPoints: it.epSources}
	}
	cfg, origins, ps = providers.MergeParts(parts, func(obj string, from []origin) providers.Problem {
		return providers.Problem{
			Provider: CatalogName,
			Source:   "consul " + describe(from),
			Objects:  []string{obj},
			Message:  fmt.Sprintf("%s defined multiple times with different configurations; left out until the tags agree", obj),
			Severity: providers.SeverityError,
		}
	})
	if cfg.TLS == nil {
		cfg.TLS = config.New().TLS // Consul snapshots always carry a TLS section
	}
	return cfg, origins, ps
}

// describe names instances for a problem's Source, grouped by service:
// "service web instances n1/web, n3/web; service api instance n1/api-1".
func describe(from []origin) string {
	from = slices.Clone(from)
	slices.SortFunc(from, func(a, b origin) int {
		return cmp.Or(strings.Compare(a.service, b.service), strings.Compare(a.instance, b.instance))
	})
	var parts []string
	for i := 0; i < len(from); {
		j := i
		var insts []string
		for ; j < len(from) && from[j].service == from[i].service; j++ {
			insts = append(insts, from[j].instance)
		}
		word := "instance"
		if len(insts) > 1 {
			word = "instances"
		}
		parts = append(parts, fmt.Sprintf("service %s %s %s", from[i].service, word, strings.Join(insts, ", ")))
		i = j
	}
	return strings.Join(parts, "; ")
}

// canonical is v's JSON encoding. Config values always encode.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}
