package docker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/providers"
)

// merge combines the containers' pieces in the order of their sort keys
// with providers.MergeParts (Traefik's provider.Merge): same-named
// load-balancer services with identical settings are merged and their
// servers unioned, which is how scaled replicas share one service; any
// other object defined differently by two containers is left out, with a
// problem naming the containers. origins locates each dynamic entrypoint
// kept ("entrypoint redis" → its container and label).
func (b *builder) merge(pieces []piece) (*config.Configuration, map[string]string) {
	slices.SortFunc(pieces, func(x, y piece) int { return cmp.Compare(x.sortKey, y.sortKey) })
	parts := make([]providers.Part[string], len(pieces))
	for i, p := range pieces {
		parts[i] = p.part
	}
	cfg, origins, ps := providers.MergeParts(parts, func(obj string, from []string) providers.Problem {
		return providers.Problem{
			Provider: providerName, Source: "containers " + strings.Join(slices.Sorted(slices.Values(from)), ", "),
			Objects: []string{obj}, Message: fmt.Sprintf("%s is defined differently by several containers; left out", obj),
			Severity: providers.SeverityError,
		}
	})
	b.problems = append(b.problems, ps...)
	return cfg, origins
}
