package label

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// ErrIgnored marks a key that carries a known prefix but is not part of the
// configuration model, such as Traefik v1's "traefik.port" or
// "traefik.frontend.rule" (case 012), or TLS options in labels. Such keys are
// ignored, as Traefik ignores them; callers report them as warnings.
var ErrIgnored = errors.New("not a configuration key; ignored")

// ErrUnknownRoot marks a key whose root begins like http, tcp or udp but is
// none of them ("traefik.https.routers.z.rule"): Traefik's label filter
// (a string prefix match on "<prefix>.http", ".tcp", ".udp") takes such a
// key in, and its decoder then fails the whole container or Consul service
// ("field not found, node: https"). Providers skip the whole container or
// instance, as Traefik does (case 010), instead of routing it by defaults.
var ErrUnknownRoot = errors.New("unknown root")

// Size limits of label, tag and KV input, the file provider's defaults
// (providers.file.maxValueSize and maxFileSize): a key or value over
// MaxValueBytes leaves out its object; labels (under the prefixes) over
// MaxTotalBytes in all leave out the whole source (container, Consul
// service instance, KV tree). Issue 23: a 5 MB Consul tag was applied and
// cost each request through it 6.7 ms of CPU.
const (
	MaxValueBytes = 1 << 20
	MaxTotalBytes = 16 << 20
)

// ErrTooLarge marks a key or value over MaxValueBytes: the label is not
// decoded and its object is left out.
var ErrTooLarge = errors.New("over the size limit")

// ErrTotalTooLarge (which is also ErrTooLarge) marks labels over
// MaxTotalBytes in all: nothing is decoded and providers leave out the
// whole source; the KeyError names the largest key.
var ErrTotalTooLarge = fmt.Errorf("%w in all", ErrTooLarge)

// KeyError is one key that could not be decoded.
type KeyError struct {
	// Key is the full key as written, prefix included
	// ("traefik.http.routers.web.priority").
	Key string
	// Object is the object the key belongs to and that was left out because
	// of it: "router web", "service api", "middleware m",
	// "serversTransport t", "tls store default", "tls options o",
	// "tcp router r", "tcp service s", "tcp middleware m",
	// "tcp serversTransport t", "udp router r", "udp service s". Empty when
	// the key belongs to no object (an unknown root or section) and nothing
	// was disabled.
	Object string
	// Err says what is wrong. errors.Is(Err, ErrIgnored) for keys outside the
	// model, which disable nothing.
	Err error
}

// Error renders "label traefik.http.routers.web.priority: invalid integer "x"".
func (e KeyError) Error() string { return fmt.Sprintf("label %s: %v", e.Key, e.Err) }

// Unwrap returns Err.
func (e KeyError) Unwrap() error { return e.Err }

// Decode turns flat dotted keys into a configuration, following Traefik v3's
// label grammar (https://doc.traefik.io/traefik/routing/providers/docker/).
//
// A key is read when it starts with one of prefixes followed by a dot,
// matched case-insensitively; pass prefixes without the dot ("gantry",
// "traefik"). Keys with other prefixes are not Decode's business and are
// skipped silently. After the prefix, keys are case-insensitive; object names
// are too (routers.App.rule and routers.app.service describe one router,
// named as spelled in the first key in byte order, as in Traefik), while
// map keys such as header names keep the case written. The same key given
// twice (under two prefixes or in two spellings) with different values is an
// error.
//
// Only the roots http, tcp, udp and tls.stores.default are decoded, as in
// Traefik (pkg/config/label). The provider namespaces enable, docker.*,
// swarm.* and consulcatalog.* are skipped without error: read them with
// ProviderKeys. A key whose root starts like http, tcp or udp but is none
// of them (https, httpx) yields a KeyError wrapping ErrUnknownRoot; any
// other key under a prefix yields a KeyError wrapping ErrIgnored.
//
// Values: strings are taken verbatim (no trimming: a router's default
// priority is the rule's length); booleans are strconv.ParseBool's spellings
// (true, True, TRUE, t, T, 1 and the false ones; no trimming); integers are decimal; durations are config.Duration ("10s"
// or seconds); []string fields take a comma list, each item trimmed, empty
// items dropped; arrays take "[n]" (or ".n") indexes, ordered by number; a
// struct block may be declared empty with "=true" (tls=true,
// sticky.cookie=true, compress=true). The singular "loadbalancer.server.x"
// means servers[0] (Traefik's label-slice-as-struct). Gantry extension:
// weighted, mirroring and failover services decode too (Traefik forbids them
// in labels). TCP and UDP objects decode into config.TCPConfiguration and
// config.UDPConfiguration (Object "tcp router r", "udp service s", …),
// with the same rules; loadbalancer.server.port, .address and .tls fill
// servers[0].
//
// Decode returns the configuration built from every object whose keys all
// decoded (never nil; HTTP maps allocated), plus one KeyError per bad key, in
// key order. A bad key leaves out the whole object it belongs to, and only
// that object.
func Decode(labels map[string]string, prefixes ...string) (*config.Configuration, []KeyError) {
	return decode(labels, prefixes, false)
}

// DecodeAll is Decode for sources that may carry every part of the dynamic
// configuration, as Traefik's KV providers do: besides http, tcp and udp it
// decodes every tls.options.<name> and tls.stores.<name> object and the
// tls.certificates array (Object "tls certificates").
func DecodeAll(keys map[string]string, prefixes ...string) (*config.Configuration, []KeyError) {
	return decode(keys, prefixes, true)
}

// providerRoots are the provider-specific namespaces, not part of the model.
var providerRoots = []string{"enable", "docker", "swarm", "consulcatalog"}

// ProviderKeys returns the provider-specific keys among labels — enable,
// docker.network, docker.allownonrunning, swarm.*, consulcatalog.connect,
// consulcatalog.canary and anything else under docker., swarm. or
// consulcatalog. — with the prefix removed and the key lower-cased
// ("docker.network"). Values are verbatim. When the same key appears under
// several prefixes, the prefix listed first wins.
func ProviderKeys(labels map[string]string, prefixes ...string) map[string]string {
	out := map[string]string{}
	keys := slices.Sorted(maps.Keys(labels))
	for _, p := range slices.Backward(prefixes) {
		for _, k := range slices.Backward(keys) {
			v := labels[k]
			rest, ok := cutPrefixFold(k, p+".")
			if !ok {
				continue
			}
			rest = strings.ToLower(rest)
			root, _, _ := strings.Cut(rest, ".")
			if slices.Contains(providerRoots, root) {
				out[rest] = v
			}
		}
	}
	return out
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return "", false
	}
	return s[len(prefix):], true
}
