package dashboard

import (
	"encoding/json"
	"sort"
	"sync/atomic"

	"github.com/gantry-proxy/gantry/dataplane/observe"
)

// Bounds of one "stats" WebSocket message, each second, per client.
const (
	// MaxStatsObjects is the most routers, services and servers (each) a
	// stats message carries. A configuration with more sends, per kind,
	// the objects the client watches, then the ones answering 5xx (most
	// errors first), then the busiest, up to the bound; Omitted counts the
	// rest (with 10 000 routers under load, the whole sample was 2.3 MB a
	// second per open page, and the loop fell behind).
	MaxStatsObjects = 500
	// maxWatch is the most names per kind a watch message is read with
	// (the rest are ignored); wsReadLimit the largest client message.
	maxWatch    = 250
	wsReadLimit = 1 << 20
)

// Watch is the one message a client sends on /api/ws: the objects its
// page shows, so their rates are in every stats message whatever the
// configuration's size. {"watch": {"routers": [names], "services":
// [names], "servers": [URLs]}}; each message replaces the previous one.
type Watch struct {
	Routers  []string `json:"routers,omitempty"`
	Services []string `json:"services,omitempty"`
	Servers  []string `json:"servers,omitempty"`
}

// Omitted counts what a stats message left out (MaxStatsObjects).
type Omitted struct {
	Routers  int `json:"routers,omitempty"`
	Services int `json:"services,omitempty"`
	Servers  int `json:"servers,omitempty"`
}

// watchSet is a Watch as sets, at most maxWatch names per kind.
type watchSet struct{ routers, services, servers map[string]bool }

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, min(len(names), maxWatch))
	for _, n := range names {
		if len(m) == maxWatch {
			break
		}
		m[n] = true
	}
	return m
}

// readWatch decodes a client message; ok is false for anything but a
// watch message (ignored).
func readWatch(data []byte) (*watchSet, bool) {
	var msg struct {
		Watch *Watch `json:"watch"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Watch == nil {
		return nil, false
	}
	w := msg.Watch
	return &watchSet{routers: setOf(w.Routers), services: setOf(w.Services), servers: setOf(w.Servers)}, true
}

// boundStats returns st cut to MaxStatsObjects per kind for a client
// watching w (nil: nothing), with what was left out in Omitted. st is not
// modified; a kind within the bound is shared, not copied.
func boundStats(st Stats, w *watchSet) Stats {
	if w == nil {
		w = &watchSet{}
	}
	var om Omitted
	st.Routers, om.Routers = pick(st.Routers, w.routers)
	st.Services, om.Services = pick(st.Services, w.services)
	st.Servers, om.Servers = pick(st.Servers, w.servers)
	if om != (Omitted{}) {
		st.Omitted = &om
	}
	return st
}

// pick keeps all of rates when within MaxStatsObjects; else the watched
// ones, then those with errors (most 5xx/s first), then the busiest, then
// by name, up to the bound. It returns how many it left out.
func pick(rates map[string]observe.Rate, watched map[string]bool) (map[string]observe.Rate, int) {
	if len(rates) <= MaxStatsObjects {
		return rates, 0
	}
	out := make(map[string]observe.Rate, MaxStatsObjects)
	for n := range watched {
		if r, ok := rates[n]; ok {
			out[n] = r
		}
	}
	rest := make([]string, 0, len(rates))
	for n, r := range rates {
		if _, in := out[n]; !in && (r.RequestsPerSecond > 0 || r.ErrorsPerSecond > 0) {
			rest = append(rest, n)
		}
	}
	sort.Slice(rest, func(i, j int) bool {
		a, b := rates[rest[i]], rates[rest[j]]
		if a.ErrorsPerSecond != b.ErrorsPerSecond {
			return a.ErrorsPerSecond > b.ErrorsPerSecond
		}
		if a.RequestsPerSecond != b.RequestsPerSecond {
			return a.RequestsPerSecond > b.RequestsPerSecond
		}
		return rest[i] < rest[j]
	})
	for _, n := range rest {
		if len(out) >= MaxStatsObjects {
			break
		}
		out[n] = rates[n]
	}
	return out, len(rates) - len(out)
}

// watchBox holds a connection's current watch (written by its read loop,
// read by its write loop).
type watchBox struct{ p atomic.Pointer[watchSet] }

// boundServers cuts a stats message's server list (the pool's view: up,
// in flight) to MaxStatsObjects: the watched servers, then the down ones,
// then the busiest; each names at most maxSharedServices services. It
// returns how many it left out.
func boundServers(servers []Server, w *watchSet) ([]Server, int) {
	cut := func(list []Server) []Server {
		out := make([]Server, len(list))
		for i, s := range list {
			s.Services = sharedCut(s.Services, "")
			out[i] = s
		}
		return out
	}
	if len(servers) <= MaxStatsObjects {
		return cut(servers), 0
	}
	var watched map[string]bool
	if w != nil {
		watched = w.servers
	}
	rank := func(s Server) int {
		switch {
		case watched[s.URL]:
			return 0
		case !s.Up:
			return 1
		}
		return 2
	}
	sorted := append([]Server(nil), servers...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		return a.InFlight > b.InFlight
	})
	return cut(sorted[:MaxStatsObjects]), len(servers) - MaxStatsObjects
}
