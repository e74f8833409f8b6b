package dashboard

import (
	"encoding/json"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/router/routestats"
)

// item is one object of the API, HTTP, TCP or UDP, in Traefik's shape
// (pkg/api/handler_http.go, handler_tcp.go, handler_udp.go
// *Representation): its configuration's fields inline (C is config.Router,
// config.TCPService, …; nil for an internal service, which has none), then
// its runtime state. The kind decides which state is set: routers have
// using, services and middlewares usedBy and type, HTTP services
// serverStatus and serverDetails, TCP/UDP routers and services stats;
// unset fields are omitted. In /api/rawdata name and provider are left
// empty, as in Traefik.
type item[C any] struct {
	Conf *C
	itemState
}

// itemState is an object's runtime state. ServerDetails (in-flight
// requests and last error per server) and Stats (connections, bytes,
// datagrams) are Gantry's additions.
type itemState struct {
	Err           []string          `json:"error,omitempty"`
	Status        string            `json:"status,omitempty"`
	UsedBy        []string          `json:"usedBy,omitempty"`
	Using         []string          `json:"using,omitempty"`
	ServerStatus  map[string]string `json:"serverStatus,omitempty"`
	Name          string            `json:"name,omitempty"`
	Provider      string            `json:"provider,omitempty"`
	Type          string            `json:"type,omitempty"`
	ServerDetails []ServerDetail    `json:"serverDetails,omitempty"`
	Stats         *routestats.Stats `json:"stats,omitempty"`
}

// The API's objects.
type (
	routerItem        = item[config.Router]
	serviceItem       = item[config.Service]
	middlewareItem    = item[config.Middleware]
	tcpRouterItem     = item[config.TCPRouter]
	tcpServiceItem    = item[config.TCPService]
	tcpMiddlewareItem = item[config.TCPMiddleware]
	udpRouterItem     = item[config.UDPRouter]
	udpServiceItem    = item[config.UDPService]
)

// MarshalJSON writes the configuration's fields, then the state's, as one
// object (what embedding the configuration did, for every kind at once).
func (it item[C]) MarshalJSON() ([]byte, error) {
	state, err := json.Marshal(it.itemState)
	if err != nil || it.Conf == nil {
		return state, err
	}
	conf, err := json.Marshal(it.Conf)
	if err != nil {
		return nil, err
	}
	switch {
	case len(conf) <= 2: // "{}"
		return state, nil
	case len(state) <= 2:
		return conf, nil
	}
	out := make([]byte, 0, len(conf)+len(state))
	out = append(out, conf[:len(conf)-1]...)
	out = append(out, ',')
	return append(out, state[1:]...), nil
}

// status is the object's status in the report (list and count use it).
func (it item[C]) status() string { return it.Status }
