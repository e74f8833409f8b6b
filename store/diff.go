package store

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/gantry-proxy/gantry/config"
)

// Changes is what differs between two configurations, per kind of HTTP
// object. Names are sorted.
type Changes struct {
	Routers     ObjectChanges `json:"routers"`
	Services    ObjectChanges `json:"services"`
	Middlewares ObjectChanges `json:"middlewares"`
}

// ObjectChanges lists the names added, removed and changed (present in both
// with a different definition).
type ObjectChanges struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return c.Routers.empty() && c.Services.empty() && c.Middlewares.empty()
}

func (o ObjectChanges) empty() bool {
	return len(o.Added) == 0 && len(o.Removed) == 0 && len(o.Changed) == 0
}

// Diff compares the HTTP routers, services and middlewares of a (older) and
// b (newer). Either may be nil (empty). Definitions are compared by their
// JSON encoding, so a nil and an empty list are equal.
func Diff(a, b *config.Configuration) Changes {
	ha, hb := httpOf(a), httpOf(b)
	return Changes{
		Routers:     diffMap(ha.Routers, hb.Routers),
		Services:    diffMap(ha.Services, hb.Services),
		Middlewares: diffMap(ha.Middlewares, hb.Middlewares),
	}
}

func httpOf(c *config.Configuration) *config.HTTPConfiguration {
	if c == nil || c.HTTP == nil {
		return &config.HTTPConfiguration{}
	}
	return c.HTTP
}

func diffMap[V any](a, b map[string]V) ObjectChanges {
	var o ObjectChanges
	for _, n := range slices.Sorted(maps.Keys(b)) {
		va, ok := a[n]
		if !ok {
			o.Added = append(o.Added, n)
			continue
		}
		ja, erra := json.Marshal(va)
		jb, errb := json.Marshal(b[n])
		if erra != nil || errb != nil || !bytes.Equal(ja, jb) {
			o.Changed = append(o.Changed, n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(a)) {
		if _, ok := b[n]; !ok {
			o.Removed = append(o.Removed, n)
		}
	}
	return o
}
