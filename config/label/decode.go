package label

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/node"
)

// lbTypes take Traefik's label-slice-as-struct "server" key.
var lbTypes = map[reflect.Type]bool{
	reflect.TypeFor[config.ServersLoadBalancer]():    true,
	reflect.TypeFor[config.TCPServersLoadBalancer](): true,
	reflect.TypeFor[config.UDPServersLoadBalancer](): true,
}

// serverKey decodes Traefik's label-slice-as-struct: in a load balancer,
// "server.x" is servers[0].x.
func serverKey(v reflect.Value, n *node.Node, d node.Decoder) ([]node.Error, bool) {
	if !lbTypes[v.Type()] {
		return nil, false
	}
	var errs []node.Error
	rest := *n
	rest.Children = nil
	for _, c := range n.Children {
		if strings.EqualFold(c.Name, "server") {
			errs = append(errs, d.SetElems(v.FieldByName("Servers"), []node.Elem{{Index: 0, N: c}})...)
			continue
		}
		rest.Children = append(rest.Children, c)
	}
	inner := d
	inner.Special = nil
	return append(errs, inner.Set(v, &rest, false)...), true
}

// decodeObject decodes an object's subtree into v.
func decodeObject(v reflect.Value, n *node.Node, top bool) []node.Error {
	return node.Decoder{Options: node.Options{Special: serverKey}}.Set(v, n, top)
}

// section is one object map of the model that labels can fill.
type section struct {
	path []string // below the root, e.g. http, routers
	kind string   // "router"
	only string   // when set, the single object name allowed (tls.stores.default)
	all  bool     // decoded by DecodeAll only
}

var sections = []section{
	{path: []string{"http", "routers"}, kind: "router"},
	{path: []string{"http", "services"}, kind: "service"},
	{path: []string{"http", "middlewares"}, kind: "middleware"},
	{path: []string{"http", "serverstransports"}, kind: "serversTransport"},
	{path: []string{"tcp", "routers"}, kind: "tcp router"},
	{path: []string{"tcp", "services"}, kind: "tcp service"},
	{path: []string{"tcp", "middlewares"}, kind: "tcp middleware"},
	{path: []string{"tcp", "serverstransports"}, kind: "tcp serversTransport"},
	{path: []string{"udp", "routers"}, kind: "udp router"},
	{path: []string{"udp", "services"}, kind: "udp service"},
	{path: []string{"tls", "stores"}, kind: "tls store", only: "default"},
	{path: []string{"entrypoints"}, kind: "entrypoint"},
	{path: []string{"tls", "options"}, kind: "tls options", all: true},
}

func decode(labels map[string]string, prefixes []string, all bool) (*config.Configuration, []KeyError) {
	if e, ok := overTotal(labels, prefixes); ok {
		c := config.New()
		c.TLS = nil
		return c, []KeyError{e}
	}
	root, errs := buildTree(labels, prefixes)
	// Errors found while building the tree (bad index, conflicting values)
	// disable their object; names compare case-insensitively.
	disabled := map[string]bool{}
	for _, e := range errs {
		if e.Object != "" {
			disabled[strings.ToLower(e.Object)] = true
		}
	}
	canonical := map[string]string{}
	c := config.New()
	c.TLS = nil
	known := map[*node.Node]bool{}
	for _, sec := range sections {
		n := root
		for _, s := range sec.path {
			if n = n.Get(s); n == nil {
				break
			}
		}
		if n == nil || (sec.all && !all) {
			continue
		}
		known[n] = true
		if n.HasValue {
			errs = append(errs, KeyError{Key: n.Key, Err: fmt.Errorf("%s is a section of named objects, not a value", strings.Join(sec.path, "."))})
		}
		for _, obj := range n.Children {
			known[obj] = true
			if sec.only != "" && !all && !strings.EqualFold(obj.Name, sec.only) {
				for _, k := range obj.Keys() {
					errs = append(errs, KeyError{Key: k, Err: fmt.Errorf("only the %s %q can be set here: %w", sec.kind, sec.only, ErrIgnored)})
				}
				continue
			}
			objName := sec.kind + " " + obj.Name
			canonical[strings.ToLower(objName)] = objName
			if strings.Contains(obj.Name, "@") {
				for _, k := range obj.Keys() {
					errs = append(errs, KeyError{Key: k, Object: objName, Err: fmt.Errorf("%s name %q contains '@', which is reserved for provider qualifiers", sec.kind, obj.Name)})
				}
				continue
			}
			v := newObject(c, sec)
			ferrs := decodeObject(v, obj, true)
			for _, fe := range ferrs {
				errs = append(errs, KeyError{Key: fe.Key, Object: objName, Err: fe.Err})
			}
			if len(ferrs) == 0 && !disabled[strings.ToLower(objName)] {
				storeObject(c, sec, obj.Name, v)
			}
		}
	}
	if all {
		if n := root.Get("tls"); n != nil {
			if certs := n.Get("certificates"); certs != nil {
				known[certs] = true
				if c.TLS == nil {
					c.TLS = &config.TLSConfiguration{}
				}
				v := reflect.New(reflect.TypeFor[[]*config.CertAndStores]()).Elem()
				ferrs := decodeObject(v, certs, false)
				for _, fe := range ferrs {
					errs = append(errs, KeyError{Key: fe.Key, Object: "tls certificates", Err: fe.Err})
				}
				if len(ferrs) == 0 {
					c.TLS.Certificates = v.Interface().([]*config.CertAndStores)
				}
			}
		}
	}
	errs = append(errs, unknownKeys(root, known)...)
	for i, e := range errs {
		if name, ok := canonical[strings.ToLower(e.Object)]; ok {
			errs[i].Object = name
		}
	}
	slices.SortStableFunc(errs, func(a, b KeyError) int { return strings.Compare(a.Key, b.Key) })
	return c, errs
}

// unknownKeys reports every key not consumed by a section: unknown sections
// under http (an error, the user meant something) and keys outside the
// model (ErrIgnored).
func unknownKeys(root *node.Node, known map[*node.Node]bool) []KeyError {
	var errs []KeyError
	var walk func(n *node.Node, path string)
	walk = func(n *node.Node, path string) {
		if known[n] {
			return
		}
		p := strings.ToLower(path)
		report := func(k string) {
			switch {
			case p == "http" || strings.HasPrefix(p, "http."):
				errs = append(errs, KeyError{Key: k, Err: errors.New("unknown section: under http only routers, services, middlewares and serverstransports are read")})
			case p == "tcp" || strings.HasPrefix(p, "tcp."):
				errs = append(errs, KeyError{Key: k, Err: errors.New("unknown section: under tcp only routers, services, middlewares and serverstransports are read")})
			case p == "udp" || strings.HasPrefix(p, "udp."):
				errs = append(errs, KeyError{Key: k, Err: errors.New("unknown section: under udp only routers and services are read")})
			case hasAnyPrefix(p, "http", "tcp", "udp"):
				root, _, _ := strings.Cut(p, ".")
				errs = append(errs, KeyError{Key: k, Err: fmt.Errorf("%w %q (want http, tcp or udp): the whole container or service is skipped, as by Traefik", ErrUnknownRoot, root)})
			default:
				errs = append(errs, KeyError{Key: k, Err: fmt.Errorf("only http, tcp, udp, entrypoints and tls.stores.default are read (Traefik v1 keys such as port or frontend.rule are not): %w", ErrIgnored)})
			}
		}
		if !containsKnown(n, known) && path != "" {
			for _, k := range n.Keys() {
				report(k)
			}
			return
		}
		if n.HasValue {
			report(n.Key)
		}
		for _, c := range n.Children {
			cp := c.Name
			if path != "" {
				cp = path + "." + c.Name
			}
			walk(c, cp)
		}
	}
	walk(root, "")
	return errs
}

func containsKnown(n *node.Node, known map[*node.Node]bool) bool {
	for _, c := range n.Children {
		if known[c] || containsKnown(c, known) {
			return true
		}
	}
	return false
}

func newObject(c *config.Configuration, sec section) reflect.Value {
	switch sec.kind {
	case "router":
		return reflect.ValueOf(&config.Router{})
	case "service":
		return reflect.ValueOf(&config.Service{})
	case "middleware":
		return reflect.ValueOf(&config.Middleware{})
	case "serversTransport":
		return reflect.ValueOf(&config.ServersTransport{})
	case "tcp router":
		return reflect.ValueOf(&config.TCPRouter{})
	case "tcp service":
		return reflect.ValueOf(&config.TCPService{})
	case "tcp middleware":
		return reflect.ValueOf(&config.TCPMiddleware{})
	case "tcp serversTransport":
		return reflect.ValueOf(&config.TCPServersTransport{})
	case "udp router":
		return reflect.ValueOf(&config.UDPRouter{})
	case "udp service":
		return reflect.ValueOf(&config.UDPService{})
	case "tls store":
		return reflect.ValueOf(&config.TLSStore{})
	case "entrypoint":
		return reflect.ValueOf(&config.DynamicEntryPoint{})
	default:
		return reflect.ValueOf(&config.TLSOptions{})
	}
}

func storeObject(c *config.Configuration, sec section, name string, v reflect.Value) {
	if sec.kind == "tls store" || sec.kind == "tls options" {
		if c.TLS == nil {
			c.TLS = &config.TLSConfiguration{}
		}
	}
	switch o := v.Interface().(type) {
	case *config.Router:
		c.HTTP.Routers[name] = o
	case *config.Service:
		c.HTTP.Services[name] = o
	case *config.Middleware:
		c.HTTP.Middlewares[name] = o
	case *config.ServersTransport:
		c.HTTP.ServersTransports[name] = o
	case *config.TCPRouter:
		c.EnsureTCP().Routers[name] = o
	case *config.TCPService:
		c.EnsureTCP().Services[name] = o
	case *config.TCPMiddleware:
		c.EnsureTCP().Middlewares[name] = o
	case *config.TCPServersTransport:
		c.EnsureTCP().ServersTransports[name] = o
	case *config.UDPRouter:
		c.EnsureUDP().Routers[name] = o
	case *config.UDPService:
		c.EnsureUDP().Services[name] = o
	case *config.DynamicEntryPoint:
		if c.EntryPoints == nil {
			c.EntryPoints = map[string]*config.DynamicEntryPoint{}
		}
		c.EntryPoints[name] = o
	case *config.TLSStore:
		if c.TLS.Stores == nil {
			c.TLS.Stores = map[string]*config.TLSStore{}
		}
		c.TLS.Stores[name] = o
	case *config.TLSOptions:
		if c.TLS.Options == nil {
			c.TLS.Options = map[string]*config.TLSOptions{}
		}
		c.TLS.Options[name] = o
	}
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
