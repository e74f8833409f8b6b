package consul

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/providers"
)

// KVName is the KV provider's name, qualifying its objects as "api@consul".
const KVName = "consul"

// DefaultRootKey is the KV prefix read by default (Traefik's rootKey).
const DefaultRootKey = "traefik"

// DecodeKV turns Consul KV pairs (full key → value) into a configuration,
// following Traefik's KV layout
// (https://doc.traefik.io/traefik/routing/providers/kv/): under rootKey,
// path segments mirror the file structure, keys are case-insensitive, and
// numeric segments index arrays — both arrays of blocks
// (…/servers/0/url) and lists of strings (…/entrypoints/0). A list of
// strings may also be given as one comma-separated value. Weighted,
// mirroring and failover services, TLS options, stores and certificates
// decode too.
//
// Keys outside rootKey and folder keys (ending in "/") are skipped. A key
// or value over label.MaxValueBytes leaves out its object; keys and values
// over label.MaxTotalBytes in all leave out everything, with one Problem
// naming the largest key (tooLarge reports it). A key
// that cannot be decoded disables only the object it belongs to and yields
// a Problem whose Source is "consul key <full key>". Segments containing
// '.', '[' or ']' cannot be represented and are such problems too.
//
// DecodeKV is pure and safe for concurrent use; the result is never nil.
func DecodeKV(pairs map[string]string, rootKey string) (*config.Configuration, []providers.Problem) {
	rootKey = strings.Trim(rootKey, "/")
	if rootKey == "" {
		rootKey = DefaultRootKey
	}
	labels := make(map[string]string, len(pairs))
	origin := make(map[string]string, len(pairs))
	var ps []providers.Problem
	for _, k := range slices.Sorted(maps.Keys(pairs)) {
		rest, ok := strings.CutPrefix(k, rootKey+"/")
		if !ok || rest == "" || strings.HasSuffix(rest, "/") {
			continue
		}
		segs := strings.Split(rest, "/")
		if err := checkSegments(segs); err != nil {
			ps = append(ps, kvProblem(k, providers.SeverityError, objectOfSegments(segs), err.Error()))
			continue
		}
		lk := "kv." + strings.Join(segs, ".")
		labels[lk] = pairs[k]
		origin[lk] = k
	}
	cfg, kerrs := label.DecodeAll(labels, "kv")
	if len(kerrs) == 1 && errors.Is(kerrs[0].Err, label.ErrTotalTooLarge) {
		key := origin[kerrs[0].Key]
		if key == "" {
			key = kerrs[0].Key
		}
		return config.New(), []providers.Problem{kvProblem(key, providers.SeverityError, nil,
			kerrs[0].Err.Error()+"; nothing under "+rootKey+"/ is used")}
	}
	for _, ke := range kerrs {
		key := origin[ke.Key]
		if key == "" {
			key = ke.Key
		}
		sev, objs := providers.KeyErrorKind(ke)
		ps = append(ps, kvProblem(key, sev, objs, ke.Err.Error()))
	}
	if cfg == nil {
		cfg = config.New()
	}
	return cfg, ps
}

func checkSegments(segs []string) error {
	for _, s := range segs {
		switch {
		case s == "":
			return errors.New("empty path segment")
		case strings.ContainsAny(s, ".[]"):
			return fmt.Errorf("path segment %q contains '.', '[' or ']', which gantry cannot decode", s)
		}
	}
	return nil
}

// objectOfSegments names the object of a KV path without rootKey, as
// label.KeyError.Object does: "router web" for http/routers/web/rule.
func objectOfSegments(segs []string) []string {
	if len(segs) < 3 {
		return nil
	}
	kinds := map[string]string{
		"http/routers": "router", "http/services": "service", "http/middlewares": "middleware",
		"http/serverstransports": "serversTransport", "tls/stores": "tls store", "tls/options": "tls options",
	}
	if k, ok := kinds[strings.ToLower(segs[0]+"/"+segs[1])]; ok {
		return []string{k + " " + segs[2]}
	}
	return nil
}

// tooLarge reports whether DecodeKV refused the whole tree as over
// label.MaxTotalBytes.
func tooLarge(ps []providers.Problem) bool {
	return len(ps) == 1 && strings.Contains(ps[0].Message, label.ErrTotalTooLarge.Error())
}

func kvProblem(key string, sev providers.Severity, objects []string, msg string) providers.Problem {
	return providers.Problem{Provider: KVName, Source: "consul key " + key, Objects: objects, Message: msg, Severity: sev}
}
