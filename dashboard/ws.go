package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gantry-proxy/gantry/dataplane/observe"
	"github.com/gantry-proxy/gantry/providers"
	"github.com/gantry-proxy/gantry/store"
)

// wsWriteTimeout bounds one WebSocket write; a client that cannot take a
// message in that time is disconnected.
const wsWriteTimeout = 10 * time.Second

// WSMessage is one message on /api/ws. Type is:
//   - "config": sent on connect and after every swap. Version is the new
//     table's, Previous the one this client saw before (empty on connect),
//     Changes what differs between them (nil on connect), plus the new
//     overview and problem list.
//   - "health": a server changed state. Servers is the full list,
//     HealthChanges the servers whose up/down state flipped.
//   - "stats": every StatsInterval, the rates of the last sample (Stats:
//     the proxy total, each router and each service, as stored for the
//     charts of /api/series; beyond MaxStatsObjects per kind, the ones
//     the client watches and the failing and busiest ones), each router's
//     rates again as Routers (for older clients) and each server's
//     in-flight requests (Servers).
//
// A client may send {"watch": {...}} (Watch): the routers, services and
// servers its page shows, whose rates every later stats message carries.
//   - "providers": a provider's state changed without a new configuration
//     (its source failed, it restarted); Providers is the full list. Checked
//     every StatsInterval.
type WSMessage struct {
	Type          string                  `json:"type"`
	At            time.Time               `json:"at"`
	Version       string                  `json:"version,omitempty"`
	Previous      string                  `json:"previous,omitempty"`
	Changes       *store.Changes          `json:"changes,omitempty"`
	Overview      *overview               `json:"overview,omitempty"`
	Problems      []providers.Problem     `json:"problems,omitempty"`
	Servers       []Server                `json:"servers,omitempty"`
	HealthChanges []HealthChange          `json:"healthChanges,omitempty"`
	Routers       map[string]observe.Rate `json:"routers,omitempty"`
	Stats         *Stats                  `json:"stats,omitempty"`
	Providers     []providerItem          `json:"providers,omitempty"`
}

// HealthChange is one server whose state flipped.
type HealthChange struct {
	URL string `json:"url"`
	Up  bool   `json:"up"`
}

func (a *API) serveWS(w http.ResponseWriter, r *http.Request) {
	if !a.sec.originAllowed(r) {
		writeError(w, http.StatusForbidden, "websocket: origin "+r.Header.Get("Origin")+" is not allowed")
		return
	}
	if !a.track() {
		writeError(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	defer a.wg.Done()
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		CheckOrigin:      func(*http.Request) bool { return true }, // checked above
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	ctx, cancel := context.WithCancel(a.ctx)
	readDone := make(chan struct{})
	var watching watchBox
	go func() { // control frames, close detection and the client's watch messages
		defer close(readDone)
		defer cancel()
		conn.SetReadLimit(wsReadLimit)
		for {
			typ, data, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if w, ok := readWatch(data); ok && typ == websocket.TextMessage {
				watching.p.Store(w)
			}
		}
	}()
	defer func() {
		cancel()
		_ = conn.Close()
		<-readDone
	}()

	send := func(m WSMessage) bool {
		body, err := marshalRedacted(m)
		if err != nil {
			a.log.Error("websocket: encode", "error", err)
			return false
		}
		_ = conn.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
		return conn.WriteMessage(websocket.TextMessage, body) == nil
	}

	// Arm every wake-up source before the first message, so a change that
	// lands while it is being written is not missed.
	tbl := a.tables.Current()
	var healthCh <-chan struct{}
	lastUp := map[string]bool{}
	if a.health != nil {
		healthCh = a.health.Changed()
		for _, s := range a.health.Servers() {
			lastUp[s.URL] = s.Up
		}
	}
	lastSources := a.sourcesKey()
	// With live statistics the loop wakes at each sample, so every client
	// gets every sample once; without, on its own ticker.
	var tick <-chan time.Time
	var sampled <-chan struct{}
	switch {
	case a.sampler != nil:
		sampled = a.sampler.Changed()
	case a.health != nil || a.opts.Sources != nil:
		t := time.NewTicker(a.opts.StatsInterval)
		defer t.Stop()
		tick = t.C
	}
	if !send(a.configMessage(tbl, "", nil)) {
		return
	}
	for {
		var stats bool

		select {
		case <-ctx.Done():
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "closing"), time.Now().Add(time.Second))
			return
		case <-tbl.Replaced():
			next := a.tables.Current()
			ch := store.Diff(tbl.Merged().Config, next.Merged().Config)
			if !send(a.configMessage(next, tbl.Version(), &ch)) {
				return
			}
			tbl = next
		case <-healthCh:
			healthCh = a.health.Changed() // re-arm before reading, so no change is missed
			servers := a.health.Servers()
			var changes []HealthChange
			for _, s := range servers {
				if was, ok := lastUp[s.URL]; !ok || was != s.Up {
					changes = append(changes, HealthChange{URL: s.URL, Up: s.Up})
				}
				lastUp[s.URL] = s.Up
			}
			sort.Slice(changes, func(i, j int) bool { return changes[i].URL < changes[j].URL })
			if !send(WSMessage{Type: "health", At: a.opts.Now(), Version: tbl.Version(), Servers: servers, HealthChanges: changes}) {
				return
			}
		case <-tick:
			stats = true
		case <-sampled:
			sampled = a.sampler.Changed() // re-arm first
			stats = true
		}
		if stats {
			if k := a.sourcesKey(); k != lastSources {
				lastSources = k
				if !send(WSMessage{Type: "providers", At: a.opts.Now(), Version: tbl.Version(), Providers: a.providerList(a.viewOf(tbl))}) {
					return
				}
			}
			if a.sampler == nil && a.health == nil {
				continue
			}
			m := WSMessage{Type: "stats", At: a.opts.Now(), Version: tbl.Version()}
			w := watching.p.Load()
			var st Stats
			if a.sampler != nil {
				st = boundStats(a.sampler.Latest(), w)
				m.At, m.Stats, m.Routers = st.At, &st, st.Routers
			}
			if a.health != nil {
				var left int
				m.Servers, left = boundServers(a.health.Servers(), w)
				if left > 0 && m.Stats != nil {
					om := Omitted{}
					if st.Omitted != nil {
						om = *st.Omitted
					}
					om.Servers = max(om.Servers, left)
					st.Omitted = &om
				}
			}
			if !send(m) {
				return
			}
		}
	}
}

func (a *API) configMessage(t Table, previous string, changes *store.Changes) WSMessage {
	v := a.viewOf(t)
	o := a.overview(v)
	return WSMessage{
		Type: "config", At: a.opts.Now(), Version: t.Version(), Previous: previous,
		Changes: changes, Overview: &o, Problems: a.problems(v), Servers: v.servers,
	}
}

// track registers one WebSocket loop; false once Close has begun.
func (a *API) track() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.wg.Add(1)
	return true
}

// sourcesKey fingerprints the providers' states ("" without Sources).
func (a *API) sourcesKey() string {
	if a.opts.Sources == nil {
		return ""
	}
	b, _ := json.Marshal(a.opts.Sources.Sources()) // map keys are sorted
	return string(b)
}
