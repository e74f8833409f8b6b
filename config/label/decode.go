package label

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config"
)

// fieldError is an error at one key inside an object.
type fieldError struct {
	key string
	err error
}

var (
	durationType = reflect.TypeFor[config.Duration]()
	// lbTypes take Traefik's label-slice-as-struct "server" key.
	lbTypes = map[reflect.Type]bool{
		reflect.TypeFor[config.ServersLoadBalancer]():    true,
		reflect.TypeFor[config.TCPServersLoadBalancer](): true,
		reflect.TypeFor[config.UDPServersLoadBalancer](): true,
	}
)

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
	known := map[*node]bool{}
	for _, sec := range sections {
		n := root
		for _, s := range sec.path {
			if n = n.get(s); n == nil {
				break
			}
		}
		if n == nil || (sec.all && !all) {
			continue
		}
		known[n] = true
		if n.hasValue {
			errs = append(errs, KeyError{Key: n.key, Err: fmt.Errorf("%s is a section of named objects, not a value", strings.Join(sec.path, "."))})
		}
		for _, obj := range n.children {
			known[obj] = true
			if sec.only != "" && !all && !strings.EqualFold(obj.name, sec.only) {
				for _, k := range obj.keys() {
					errs = append(errs, KeyError{Key: k, Err: fmt.Errorf("only the %s %q can be set here: %w", sec.kind, sec.only, ErrIgnored)})
				}
				continue
			}
			objName := sec.kind + " " + obj.name
			canonical[strings.ToLower(objName)] = objName
			if strings.Contains(obj.name, "@") {
				for _, k := range obj.keys() {
					errs = append(errs, KeyError{Key: k, Object: objName, Err: fmt.Errorf("%s name %q contains '@', which is reserved for provider qualifiers", sec.kind, obj.name)})
				}
				continue
			}
			v := newObject(c, sec)
			ferrs := set(v, obj, true)
			for _, fe := range ferrs {
				errs = append(errs, KeyError{Key: fe.key, Object: objName, Err: fe.err})
			}
			if len(ferrs) == 0 && !disabled[strings.ToLower(objName)] {
				storeObject(c, sec, obj.name, v)
			}
		}
	}
	if all {
		if n := root.get("tls"); n != nil {
			if certs := n.get("certificates"); certs != nil {
				known[certs] = true
				if c.TLS == nil {
					c.TLS = &config.TLSConfiguration{}
				}
				v := reflect.New(reflect.TypeFor[[]*config.CertAndStores]()).Elem()
				ferrs := set(v, certs, false)
				for _, fe := range ferrs {
					errs = append(errs, KeyError{Key: fe.key, Object: "tls certificates", Err: fe.err})
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
func unknownKeys(root *node, known map[*node]bool) []KeyError {
	var errs []KeyError
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
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
			for _, k := range n.keys() {
				report(k)
			}
			return
		}
		if n.hasValue {
			report(n.key)
		}
		for _, c := range n.children {
			cp := c.name
			if path != "" {
				cp = path + "." + c.name
			}
			walk(c, cp)
		}
	}
	walk(root, "")
	return errs
}

func containsKnown(n *node, known map[*node]bool) bool {
	for _, c := range n.children {
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

// set decodes n into v (settable, or a pointer). top is true for an object
// root, where an unknown first segment gets a hint about dots in names.
func set(v reflect.Value, n *node, top bool) []fieldError {
	t := v.Type()
	switch {
	case t == durationType:
		return leaf(n, func(s string) error {
			d, err := config.ParseDuration(s)
			if err == nil {
				v.SetInt(int64(d))
			}
			return err
		})
	case t.Kind() == reflect.Pointer:
		return setPointer(v, n, top)
	case t.Kind() == reflect.Struct:
		return setStruct(v, n, top)
	case t.Kind() == reflect.Slice:
		return setSlice(v, n)
	case t.Kind() == reflect.Map:
		return setMap(v, n)
	case t.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf(generic(n)))
		return nil
	}
	return leaf(n, func(s string) error { return setScalar(v, s) })
}

// leaf checks that n is a value without sub-keys and applies f to it.
func leaf(n *node, f func(string) error) []fieldError {
	var errs []fieldError
	if len(n.children) > 0 {
		for _, k := range n.keys() {
			if k != n.key {
				errs = append(errs, fieldError{k, fmt.Errorf("%q takes a value, not sub-keys", n.name)})
			}
		}
	}
	if n.hasValue {
		if err := f(n.value); err != nil {
			errs = append(errs, fieldError{n.key, err})
		}
	}
	return errs
}

func setPointer(v reflect.Value, n *node, top bool) []fieldError {
	et := v.Type().Elem()
	if et.Kind() == reflect.Struct && et != durationType && n.hasValue {
		// An empty block declared with a boolean: tls=true, compress=true.
		b, err := parseBool(n.value)
		if err != nil {
			errs := []fieldError{{n.key, fmt.Errorf("%q is a block: set its fields, or true to enable it with defaults (%w)", n.name, err)}}
			return errs
		}
		if !b {
			if len(n.children) > 0 {
				return []fieldError{{n.key, fmt.Errorf("%q is false but has sub-keys", n.name)}}
			}
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(et))
		}
		if len(n.children) == 0 {
			return nil
		}
		stripped := *n
		stripped.hasValue = false
		return set(v.Elem(), &stripped, top)
	}
	if v.IsNil() {
		v.Set(reflect.New(et))
	}
	return set(v.Elem(), n, top)
}

// structField finds the field whose JSON name is name (case-insensitive),
// looking through embedded structs. It returns nil when there is none.
func structField(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			if fv, ok := structField(v.Field(i), name); ok {
				return fv, true
			}
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if strings.EqualFold(tag, name) {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func setStruct(v reflect.Value, n *node, top bool) []fieldError {
	var errs []fieldError
	if n.hasValue {
		errs = append(errs, fieldError{n.key, fmt.Errorf("%q is a block: set its fields, not a value", n.name)})
	}
	for _, c := range n.children {
		if lbTypes[v.Type()] && strings.EqualFold(c.name, "server") {
			// Traefik's label-slice-as-struct: loadbalancer.server.x is servers[0].x.
			errs = append(errs, setElems(v.FieldByName("Servers"), []elem{{0, c}})...)
			continue
		}
		fv, ok := structField(v, c.name)
		if !ok {
			msg := fmt.Errorf("unknown field %q", c.name)
			if top && len(c.children) > 0 {
				msg = fmt.Errorf("unknown field %q (object names cannot contain \".\")", c.name)
			}
			for _, k := range c.keys() {
				errs = append(errs, fieldError{k, msg})
			}
			continue
		}
		errs = append(errs, set(fv, c, false)...)
	}
	return errs
}

type elem struct {
	index int
	n     *node
}

func setSlice(v reflect.Value, n *node) []fieldError {
	var errs []fieldError
	if n.hasValue {
		if len(n.children) > 0 {
			errs = append(errs, fieldError{n.key, fmt.Errorf("%q is given both as a list and with indexes", n.name)})
			return errs
		}
		et := v.Type().Elem()
		if et.Kind() == reflect.Struct || et.Kind() == reflect.Pointer {
			return []fieldError{{n.key, fmt.Errorf("%q is an array of blocks: use %s[0].<field>", n.name, n.name)}}
		}
		items := reflect.MakeSlice(v.Type(), 0, 0)
		for item := range strings.SplitSeq(n.value, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			ev := reflect.New(et).Elem()
			if err := setScalar(ev, item); err != nil {
				return []fieldError{{n.key, err}}
			}
			items = reflect.Append(items, ev)
		}
		if items.Len() > 0 {
			v.Set(items)
		}
		return nil
	}
	var elems []elem
	for _, c := range n.children {
		i, err := strconv.Atoi(c.name)
		if err != nil || !isIndex(c.name) {
			for _, k := range c.keys() {
				errs = append(errs, fieldError{k, fmt.Errorf("%q is an array: want an index such as %s[0], got %q", n.name, n.name, c.name)})
			}
			continue
		}
		elems = append(elems, elem{i, c})
	}
	return append(errs, setElems(v, elems)...)
}

// setElems decodes indexed nodes into slice v. Indexes are ordered by
// number and compacted: [0] and [5] make a two-element slice.
func setElems(v reflect.Value, elems []elem) []fieldError {
	slices.SortStableFunc(elems, func(a, b elem) int { return a.index - b.index })
	var errs []fieldError
	pos := map[int]int{}
	for i := range v.Len() {
		pos[i] = i
	}
	for _, e := range elems {
		p, ok := pos[e.index]
		if !ok {
			p = v.Len()
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
			pos[e.index] = p
		}
		errs = append(errs, set(v.Index(p), e.n, false)...)
	}
	return errs
}

func setMap(v reflect.Value, n *node) []fieldError {
	var errs []fieldError
	if n.hasValue {
		errs = append(errs, fieldError{n.key, fmt.Errorf("%q is a map: set %s.<name>=<value>", n.name, n.name)})
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, c := range n.children {
		ev := reflect.New(v.Type().Elem()).Elem()
		ferrs := set(ev, c, false)
		errs = append(errs, ferrs...)
		if len(ferrs) == 0 {
			v.SetMapIndex(reflect.ValueOf(c.name).Convert(v.Type().Key()), ev)
		}
	}
	return errs
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
