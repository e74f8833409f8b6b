package main

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config/node"
	"github.com/gantry-proxy/gantry/config/static"
)

// The static configuration's sources — the file, TRAEFIK_* and GANTRY_*
// variables, flags — each build a key tree (package config/node) that is
// decoded over the configuration in that order, later winning: sections
// and maps merge key by key, a list replaces the earlier one. Field names
// match case-insensitively, as in Traefik. As in Traefik, a key that names
// no option is an error naming it and where it was written; a Traefik
// option that Gantry does not support (traefikOnly) is a warning.

var staticType = reflect.TypeFor[static.Configuration]()

// layer is one source's tree.
type layer struct {
	source string // "file traefik.yml", "environment GANTRY_*", "flags"
	root   *node.Node
	// paths holds each node's option path (segments as written), for
	// matching traefikOnly and for suggestions.
	paths map[*node.Node][]string
	// joinKey renders a path the way the source writes keys
	// ("--a.b", "GANTRY_A_B", "a.b[0]").
	joinKey func(path []string) string
}

func newLayer(source string, joinKey func([]string) string) *layer {
	return &layer{source: source, root: &node.Node{}, paths: map[*node.Node][]string{}, joinKey: joinKey}
}

// add sets value at path (a value-less node when !hasValue), marking each
// node on the way with its key and where.
func (l *layer) add(path []string, value string, hasValue bool, where func(path []string) string) {
	n := l.root
	for i, seg := range path {
		n = n.Child(seg)
		if _, ok := l.paths[n]; !ok {
			p := slices.Clone(path[:i+1])
			l.paths[n] = p
			n.Key = l.joinKey(p)
			n.Where = where(p)
		}
	}
	if hasValue {
		n.Value, n.HasValue = value, true
	}
}

// decode decodes the layer over c and returns its errors and warnings,
// each naming where the key was written.
func (l *layer) decode(c *static.Configuration) (errs []error, warnings []string) {
	for _, e := range node.Decode(reflect.ValueOf(c), l.root, node.Options{Layer: true, Whole: true}) {
		where := e.Node.Where
		if where == "" {
			where = l.source
		}
		uf, ok := errors.AsType[*node.UnknownFieldError](e.Err)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: option %s: %w", where, e.Key, e.Err))
		case isTraefikOnly(l.paths[e.Node]):
			warnings = append(warnings, fmt.Sprintf("%s: option %s is a Traefik option Gantry does not support: ignored", where, e.Key))
		default:
			msg := fmt.Sprintf("%s: unknown option %s", where, e.Key)
			if p := l.paths[e.Node]; uf.Suggestion != "" && len(p) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", l.joinKey(append(slices.Clone(p[:len(p)-1]), uf.Suggestion)))
			}
			errs = append(errs, errors.New(msg))
		}
	}
	return errs, warnings
}

// flagLayer is the tree of the command line's options.
func flagLayer(flags []flagPair) (*layer, []error) {
	l := newLayer("flags", func(p []string) string { return "--" + strings.Join(p, ".") })
	var errs []error
	for _, f := range flags {
		path, err := node.SplitKey(f.key)
		if err != nil {
			errs = append(errs, fmt.Errorf("flags: option --%s: %w", f.key, err))
			continue
		}
		l.add(path, f.value, true, func([]string) string { return "flags" })
	}
	return l, errs
}

// splitKey splits a flag key at dots, and "name[3]" into "name", "3"
// (malformed keys are reported when the flags are decoded).
func splitKey(key string) []string {
	if p, err := node.SplitKey(key); err == nil {
		return p
	}
	return strings.Split(key, ".")
}

// takesValue reports whether the option at path needs a value (it is not a
// boolean or a section, which a bare flag switches on). Unknown paths take
// no value: they are reported as unknown later.
func takesValue(path []string) bool {
	t := staticType
	for _, seg := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := node.Field(reflect.New(t).Elem(), seg)
			if !ok {
				return false
			}
			t = f.Type()
		case reflect.Map, reflect.Slice:
			t = t.Elem()
		default:
			return false
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() != reflect.Bool && t.Kind() != reflect.Struct
}

// isRootOption reports whether name (any case) is a top-level option:
// only variables naming one are read, as Traefik's environment loader
// does (TRAEFIK_<OPTION>…), so GANTRY_IMAGE or TRAEFIK_VERSION set for
// other tools are not options.
func isRootOption(name string) bool {
	_, ok := node.Field(reflect.New(staticType).Elem(), name)
	return ok
}

// traefikOnly are Traefik v3 static options (from its static
// configuration reference, v3.7) that Gantry does not support: setting one
// is a warning naming it, not an error, so a traefik.yml loads. "*" is
// any name (an entrypoint, a resolver). An option under one of these is
// one of them.
var traefikOnly = []string{
	"api.dashboardName",
	"api.disableDashboardAd",
	"certificatesResolvers.*.tailscale",
	"certificatesResolvers.*.acme.tlsChallenge.delay",
	"entryPoints.*.forwardedHeaders.addXForwardedSchemeHeaders",
	"entryPoints.*.forwardedHeaders.connection",
	"entryPoints.*.forwardedHeaders.notAppendXForwardedFor",
	"entryPoints.*.http.encodeQuerySemicolons",
	"entryPoints.*.http.maxHeaderBytes",
	"entryPoints.*.http.underscoreHeadersStrategy",
	"entryPoints.*.http2.maxDecoderHeaderTableSize",
	"entryPoints.*.http2.maxEncoderHeaderTableSize",
	"entryPoints.*.observability",
	"entryPoints.*.reusePort",
	"experimental.abortOnPluginFailure",
	"experimental.fastProxy",
	"experimental.knative",
	"experimental.kubernetesGateway",
	"experimental.kubernetesIngressNGINX",
	"experimental.localPlugins",
	"experimental.plugins",
	"global.notAppendXForwardedFor",
	"hostResolver",
	"log.compress",
	"log.maxAge",
	"log.maxBackups",
	"log.maxSize",
	"metrics.datadog",
	"metrics.influxDB2",
	"metrics.statsD",
	"ocsp",
	"ping.manualRouting",
	"ping.terminatingStatusCode",
	"providers.ecs",
	"providers.etcd",
	"providers.http",
	"providers.knative",
	"providers.kubernetesIngressNGINX.defaultBackendService",
	"providers.kubernetesIngressNGINX.disableSvcExternalName",
	"providers.kubernetesIngressNGINX.publishService",
	"providers.kubernetesIngressNGINX.publishStatusAddress",
	"providers.kubernetesIngressNGINX.watchNamespaceSelector",
	"providers.nomad",
	"providers.plugin",
	"providers.redis",
	"providers.rest",
	"providers.swarm",
	"providers.zooKeeper",
	"serversTransport.spiffe",
	"spiffe",
	"tcpServersTransport",
	"accessLog.fields.queryParameters",
}

// isTraefikOnly reports whether path is, or is under, a traefikOnly
// option (case-insensitively).
func isTraefikOnly(path []string) bool {
	for _, pat := range traefikOnly {
		segs := strings.Split(pat, ".")
		if len(path) < len(segs) {
			continue
		}
		match := true
		for i, s := range segs {
			if s != "*" && !strings.EqualFold(s, path[i]) {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// indexKey renders a file's option path: "a.b[0].c".
func indexKey(p []string) string {
	var b strings.Builder
	for i, s := range p {
		if _, err := strconv.Atoi(s); err == nil && i > 0 && node.IsIndex(s) {
			b.WriteString("[" + s + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}
