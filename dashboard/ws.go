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

// serveWS is /api/ws: after the origin check it upgrades the request,
// reads the client's watch messages on a goroutine it joins, and sends the
// WSMessage stream until the client leaves or the API closes.
func (a *API) serveWS(w http.ResponseWriter, r *http.Request) {
	if !a.sec.originAllowed(r) {
		writeError(w, http.StatusForbidden, "websocket: origin "+r.Header.Get("Origin")+" is not allowed")
		return
	}
	if !a.work.Enter() {
		writeError(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	defer a.work.Leave()
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		CheckOrigin:      func(*http.Request) bool { return true }, // checked above
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	ctx, cancel := context.WithCancel(a.work.Context())
	c := &wsClient{a: a, conn: conn}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel()
		c.read()
	}()
	defer func() {
		cancel()
		_ = conn.Close()
		<-readDone
	}()
	stop := c.arm()
	defer stop()
	c.run(ctx)
}

// wsClient is the state of one /api/ws connection's send loop: what the
// client was last told (the table, each server's up state, the providers'
// fingerprint) and the wake-up sources the loop waits on. Only run and the
// methods it calls touch it, except watching, which read stores.
type wsClient struct {
	a        *API
	conn     *websocket.Conn
	watching watchBox

	tbl         Table           // the table the client saw last
	lastUp      map[string]bool // server URL -> up, as last sent
	lastSources string          // sourcesKey as last sent
	healthCh    <-chan struct{} // nil without a health source
	tick        <-chan time.Time
	sampled     <-chan struct{}
}

// read handles control frames, detects the close and stores the client's
// watch messages (at most wsReadLimit bytes each), until a read fails.
func (c *wsClient) read() {
	c.conn.SetReadLimit(wsReadLimit)
	for {
		typ, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		if w, ok := readWatch(data); ok && typ == websocket.TextMessage {
			c.watching.p.Store(w)
		}
	}
}

// arm takes the current table and arms every wake-up source before the
// first message, so a change that lands while it is being written is not
// missed. With live statistics the loop wakes at each sample, so every
// client gets every sample once; without, on its own ticker of
// StatsInterval, which the returned stop releases.
func (c *wsClient) arm() (stop func()) {
	a := c.a
	c.tbl = a.tables.Current()
	c.lastUp = map[string]bool{}
	if a.health != nil {
		c.healthCh = a.health.Changed()
		for _, s := range a.health.Servers() {
			c.lastUp[s.URL] = s.Up
		}
	}
	c.lastSources = a.sourcesKey()
	switch {
	case a.sampler != nil:
		c.sampled = a.sampler.Changed()
	case a.health != nil || a.opts.Sources != nil:
		t := time.NewTicker(a.opts.StatsInterval)
		c.tick = t.C
		return t.Stop
	}
	return func() {}
}

// run sends the first config message, then one message per wake-up, until
// ctx ends (the client gets a going-away close) or a send fails.
func (c *wsClient) run(ctx context.Context) {
	if !c.send(c.a.configMessage(c.tbl, "", nil)) {
		return
	}
	for {
		var ok bool
		select {
		case <-ctx.Done():
			_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "closing"), time.Now().Add(time.Second))
			return
		case <-c.tbl.Replaced():
			ok = c.sendConfig()
		case <-c.healthCh:
			c.healthCh = c.a.health.Changed() // re-arm before reading, so no change is missed
			ok = c.sendHealth()
		case <-c.tick:
			ok = c.sendStats()
		case <-c.sampled:
			c.sampled = c.a.sampler.Changed() // re-arm first
			ok = c.sendStats()
		}
		if !ok {
			return
		}
	}
}

// send writes m (redacted) within wsWriteTimeout; false when the client
// is gone or m cannot be encoded.
func (c *wsClient) send(m WSMessage) bool {
	body, err := marshalRedacted(m)
	if err != nil {
		c.a.log.Error("websocket: encode", "error", err)
		return false
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
	return c.conn.WriteMessage(websocket.TextMessage, body) == nil
}

// sendConfig sends the "config" message of the table that replaced the
// one the client saw, with the changes between them.
func (c *wsClient) sendConfig() bool {
	next := c.a.tables.Current()
	ch := store.Diff(c.tbl.Merged().Config, next.Merged().Config)
	if !c.send(c.a.configMessage(next, c.tbl.Version(), &ch)) {
		return false
	}
	c.tbl = next
	return true
}

// sendHealth sends the "health" message: every server, and the ones whose
// up state differs from what the client was last told, sorted by URL.
func (c *wsClient) sendHealth() bool {
	servers := c.a.health.Servers()
	var changes []HealthChange
	for _, s := range servers {
		if was, ok := c.lastUp[s.URL]; !ok || was != s.Up {
			changes = append(changes, HealthChange{URL: s.URL, Up: s.Up})
		}
		c.lastUp[s.URL] = s.Up
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].URL < changes[j].URL })
	return c.send(WSMessage{Type: "health", At: c.a.opts.Now(), Version: c.tbl.Version(), Servers: servers, HealthChanges: changes})
}

// sendStats sends a "providers" message when the providers' states
// changed, then, with a sampler or health source, the "stats" message
// bounded to what the client watches (see boundStats, boundServers).
func (c *wsClient) sendStats() bool {
	a := c.a
	if k := a.sourcesKey(); k != c.lastSources {
		c.lastSources = k
		if !c.send(WSMessage{Type: "providers", At: a.opts.Now(), Version: c.tbl.Version(), Providers: a.providerList(a.viewOf(c.tbl))}) {
			return false
		}
	}
	if a.sampler == nil && a.health == nil {
		return true
	}
	m := WSMessage{Type: "stats", At: a.opts.Now(), Version: c.tbl.Version()}
	w := c.watching.p.Load()
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
	return c.send(m)
}

func (a *API) configMessage(t Table, previous string, changes *store.Changes) WSMessage {
	v := a.viewOf(t)
	o := a.overview(v)
	return WSMessage{
		Type: "config", At: a.opts.Now(), Version: t.Version(), Previous: previous,
		Changes: changes, Overview: &o, Problems: a.problems(v), Servers: v.servers,
	}
}

// sourcesKey fingerprints the providers' states ("" without Sources).
func (a *API) sourcesKey() string {
	if a.opts.Sources == nil {
		return ""
	}
	b, _ := json.Marshal(a.opts.Sources.Sources()) // map keys are sorted
	return string(b)
}
