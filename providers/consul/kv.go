package consul

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/hashicorp/consul/api"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// KV is the Consul KV provider (providers.consul). It implements
// providers.Provider; create it with NewKV.
type KV struct {
	clients []*api.Client
	root    string
	log     *slog.Logger
	spec    watchSpec
}

// NewKV checks opts and returns a KV provider. Defaults follow Traefik v3
// (https://doc.traefik.io/traefik/providers/consul/): endpoints
// ["127.0.0.1:8500"] (or CONSUL_HTTP_ADDR when set), rootKey "traefik". An
// endpoint is "host:port" or "http(s)://host:port"; with several, the next
// is tried after a failure. Unset options fall back to consul/api's
// CONSUL_* environment variables, as for the catalog.
// It returns an error for a bad endpoint or TLS block, and for namespaces
// (Consul Enterprise, not supported). log must not be nil.
func NewKV(opts static.ConsulKV, log *slog.Logger) (*KV, error) {
	if len(opts.Namespaces) > 0 {
		return nil, errors.New("consul: namespaces (Consul Enterprise) are not supported by gantry")
	}
	eps := opts.Endpoints
	if len(eps) == 0 {
		eps = []string{""} // CONSUL_HTTP_ADDR, else 127.0.0.1:8500
	}
	k := &KV{root: strings.Trim(opts.RootKey, "/"), log: log.With("provider", KVName)}
	if k.root == "" {
		k.root = DefaultRootKey
	}
	for _, ep := range eps {
		e := &static.ConsulEndpoint{Address: ep, Token: opts.Token, TLS: opts.TLS}
		if scheme, addr, ok := strings.Cut(ep, "://"); ok {
			e.Scheme, e.Address = scheme, addr
		}
		c, wait, err := newClient(e)
		if err != nil {
			return nil, fmt.Errorf("consul: endpoint %s: %w", ep, err)
		}
		k.clients = append(k.clients, c)
		k.spec.wait = wait
	}
	return k, nil
}

// Name returns "consul".
func (k *KV) Name() string { return KVName }

// Run watches every key under rootKey with a blocking query until ctx is
// done, and publishes DecodeKV's snapshot of the whole tree after each
// change of the result. Errors are logged and retried with backoff (trying
// the next endpoint); once every endpoint has failed in a row a Down
// snapshot is published (a problem, state "down"), and the last snapshot
// stays in effect until Consul answers again (case 019). Run returns nil when ctx is done.
func (k *KV) Run(ctx context.Context, publish func(providers.Snapshot)) error {
	cur := 0
	failing := false
	fails := 0                        // requests failed in a row
	var last []byte                   // canonical form of the last published snapshot
	var lastCfg *config.Configuration // the last configuration published
	watch(ctx, k.spec,
		func(q *api.QueryOptions) (api.KVPairs, *api.QueryMeta, error) {
			pairs, meta, err := k.clients[cur].KV().List(k.root+"/", q)
			if err != nil {
				cur = (cur + 1) % len(k.clients)
			}
			return pairs, meta, err
		},
		func(pairs api.KVPairs) {
			if failing {
				k.log.Info("consul reachable again")
				failing = false
			}
			fails = 0
			m := make(map[string]string, len(pairs))
			for _, p := range pairs {
				m[p.Key] = string(p.Value)
			}
			cfg, ps := DecodeKV(m, k.root)
			if tooLarge(ps) && lastCfg != nil {
				// Keys over label.MaxTotalBytes in all: the KV tree
				// is refused whole, and the last one kept.
				cfg = lastCfg
				ps[0].Message += "; keeping the last configuration"
			}
			lastCfg = cfg
			snap := providers.Snapshot{Config: cfg, Problems: ps}
			if sig := canonical(snap); !bytes.Equal(sig, last) {
				last = sig
				publish(snap)
			}
		},
		func(err error) {
			if !failing {
				k.log.Warn("consul request failed; keeping the last configuration", "err", err)
			} else {
				k.log.Debug("consul request failed", "err", err)
			}
			failing = true
			// Down once every endpoint has failed in a row (one failing
			// while the next answers is a failover, not an outage).
			if fails++; fails == len(k.clients) {
				last = nil // the first answer after the outage publishes again
				publish(providers.DownSnapshot(KVName, "consul kv "+k.root+"/", err))
			}
		})
	return nil
}
