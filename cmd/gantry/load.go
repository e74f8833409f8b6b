package main

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/gantry-proxy/gantry/config/static"
	yaml "go.yaml.in/yaml/v3"
)

// defaultConfigFiles are searched, in order, when no --configFile is given
// (Traefik searches /etc/traefik, $XDG_CONFIG_HOME, $HOME/.config and the
// working directory for traefik.{yml,yaml,toml}).
var defaultConfigFiles = func() []string {
	var out []string
	for _, dir := range []string{".", "/etc/gantry", "/etc/traefik"} {
		for _, base := range []string{"gantry", "traefik"} {
			for _, ext := range []string{".yml", ".yaml", ".toml"} {
				out = append(out, filepath.Join(dir, base+ext))
			}
		}
	}
	return out
}()

// cliArgs is the parsed command line.
type cliArgs struct {
	command    string     // "run" (default), "validate", "version", "help"
	configFile string     // --configFile
	flags      []flagPair // every other --key=value, in order
}

type flagPair struct{ key, value string }

// parseArgs splits the command line into the subcommand, --configFile and
// Traefik-style option flags: "--entryPoints.web.address=:80",
// "--entrypoints.web.address :80", "--api.insecure" (booleans and sections
// need no value). Keys are case-insensitive. One or two leading dashes.
func parseArgs(args []string) (cliArgs, error) {
	c := cliArgs{command: "run"}
	sawCommand := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			if sawCommand {
				return c, fmt.Errorf("unexpected argument %q (one subcommand at most: run, validate, version)", a)
			}
			switch a {
			case "run", "validate", "version", "help":
				c.command, sawCommand = a, true
				continue
			}
			return c, fmt.Errorf("unknown subcommand %q (want run, validate or version)", a)
		}
		key, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if key == "" {
			return c, fmt.Errorf("bad flag %q", a)
		}
		switch strings.ToLower(key) {
		case "h", "help":
			c.command = "help"
			continue
		case "configfile":
			if !hasValue {
				if i+1 >= len(args) {
					return c, errors.New("flag --configFile needs a value")
				}
				i++
				value = args[i]
			}
			c.configFile = value
			continue
		}
		if !hasValue {
			if takesValue(splitKey(key)) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				value = args[i]
			} else {
				value = "true"
			}
		}
		c.flags = append(c.flags, flagPair{key, value})
	}
	return c, nil
}

// splitKey splits a flag key at dots, and "name[3]" into "name", "3".
func splitKey(key string) []string {
	var out []string
	for seg := range strings.SplitSeq(key, ".") {
		for {
			name, rest, ok := strings.Cut(seg, "[")
			if !ok {
				break
			}
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				break
			}
			if name != "" {
				out = append(out, name)
			}
			out = append(out, idx)
			seg = after
		}
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// takesValue reports whether the option at path needs a value (it is not a
// boolean or a section, which a bare flag switches on). Unknown paths take
// no value: they are reported as unknown later.
func takesValue(path []string) bool {
	t := reflect.TypeFor[static.Configuration]()
	for _, seg := range path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByName(t, seg)
			if !ok {
				return false
			}
			t = f.Type
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

// setPath stores value at the dotted path in tree, replacing a boolean
// section switch ("providers.docker=true") by a mapping when a sub-option
// follows.
func setPath(tree map[string]any, path []string, value string) {
	for _, seg := range path[:len(path)-1] {
		next, ok := tree[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			tree[seg] = next
		}
		tree = next
	}
	last := path[len(path)-1]
	if _, isMap := tree[last].(map[string]any); isMap && isTrue(value) {
		return // "--api" after "--api.insecure": the section is on already
	}
	tree[last] = value
}

func isTrue(s string) bool { return strings.EqualFold(s, "true") }

// loaded is a static configuration and how it was obtained.
type loaded struct {
	Config   *static.Configuration
	File     string   // the configuration file read, "" when none
	Sources  []string // "file x", "environment", "flags"
	Warnings []string // unknown or unsupported options, each naming its source
}

// loadStatic builds the static configuration from, in increasing
// precedence: the configuration file (--configFile, $GANTRY_CONFIGFILE,
// $TRAEFIK_CONFIGFILE, else the first of defaultConfigFiles that exists),
// TRAEFIK_* and then GANTRY_* environment variables, and flags.
// Traefik uses only the first source it finds; Gantry layers them, which
// gives the same result whenever one source is used. Every key the
// configuration does not know is a warning naming it; a malformed value is
// an error naming the option and the source.
func loadStatic(c cliArgs, environ []string) (*loaded, error) {
	l := &loaded{}
	var layers []map[string]any
	var errs []error
	add := func(source string, tree map[string]any) {
		n := &normalizer{source: source}
		v, _ := n.structValue(tree, reflect.TypeFor[static.Configuration](), "")
		l.Warnings = append(l.Warnings, n.warnings...)
		errs = append(errs, n.errs...)
		if m, ok := v.(map[string]any); ok {
			layers = append(layers, m)
		}
		l.Sources = append(l.Sources, source)
	}

	env := envTrees(environ)
	file := c.configFile
	if file == "" {
		file = env.configFile
	}
	explicit := file != ""
	if !explicit {
		for _, f := range defaultConfigFiles {
			if _, err := os.Stat(f); err == nil {
				file = f
				break
			}
		}
	}
	if file != "" {
		tree, err := readConfigFile(file)
		if err != nil {
			return nil, err
		}
		l.File = file
		add("file "+file, tree)
	}
	if len(env.traefik) > 0 {
		add("environment TRAEFIK_*", env.traefik)
	}
	if len(env.gantry) > 0 {
		add("environment GANTRY_*", env.gantry)
	}
	if len(c.flags) > 0 {
		tree := map[string]any{}
		for _, f := range c.flags {
			setPath(tree, splitKey(f.key), f.value)
		}
		add("flags", tree)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var merged map[string]any
	for _, m := range layers {
		merged = merge(merged, m)
	}
	cfg := &static.Configuration{}
	if err := decodeInto(merged, cfg); err != nil {
		return nil, err
	}
	applyDefaults(cfg)
	if err := checkStatic(cfg); err != nil {
		return nil, err
	}
	l.Warnings = append(l.Warnings, unsupported(cfg)...)
	l.Config = cfg
	return l, nil
}

// envConfig holds the option trees read from the environment.
type envConfig struct {
	traefik, gantry map[string]any
	configFile      string // GANTRY_CONFIGFILE, else TRAEFIK_CONFIGFILE
}

// envTrees reads TRAEFIK_* and GANTRY_* variables: the name after the
// prefix, split at "_" and lower-cased, is the option path
// (GANTRY_ENTRYPOINTS_WEB_ADDRESS=:80 is entryPoints.web.address, as in
// Traefik's environment loader, so entrypoint names come out lower-case).
// GANTRY_CONFIGFILE / TRAEFIK_CONFIGFILE name the configuration file.
func envTrees(environ []string) envConfig {
	e := envConfig{traefik: map[string]any{}, gantry: map[string]any{}}
	var traefikFile string
	for _, kv := range slices.Sorted(slices.Values(environ)) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var tree map[string]any
		var rest string
		if r, ok := strings.CutPrefix(k, "GANTRY_"); ok {
			tree, rest = e.gantry, r
		} else if r, ok := strings.CutPrefix(k, "TRAEFIK_"); ok {
			tree, rest = e.traefik, r
		} else {
			continue
		}
		if rest == "" {
			continue
		}
		path := strings.Split(strings.ToLower(rest), "_")
		if len(path) == 1 && path[0] == "configfile" {
			if strings.HasPrefix(k, "GANTRY_") {
				e.configFile = v
			} else {
				traefikFile = v
			}
			continue
		}
		setPath(tree, path, v)
	}
	if e.configFile == "" {
		e.configFile = traefikFile
	}
	return e
}

// readConfigFile decodes a YAML or TOML file (by extension; YAML otherwise)
// into a generic tree. Errors name the file (and the line, for syntax).
func readConfigFile(name string) (map[string]any, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read configuration file: %w", err)
	}
	tree := map[string]any{}
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		if _, err := toml.Decode(string(b), &tree); err != nil {
			return nil, fmt.Errorf("configuration file %s: %w", name, err)
		}
	} else if err := yaml.Unmarshal(b, &tree); err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", name, err)
	}
	return genericTree(tree), nil
}

// genericTree converts the decoders' typed containers ([]map[string]any
// from TOML array tables, map[any]any from YAML) to map[string]any / []any.
func genericTree(v map[string]any) map[string]any {
	out := make(map[string]any, len(v))
	for k, x := range v {
		out[k] = generic(x)
	}
	return out
}

func generic(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return genericTree(x)
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, y := range x {
			m[fmt.Sprint(k)] = generic(y)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = generic(y)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = genericTree(y)
		}
		return out
	}
	return v
}

// Default addresses, as in Traefik: the "http" entrypoint when none is
// configured, and the "traefik" entrypoint for the API, ping and metrics.
const (
	defaultEntryPointName    = "http"
	defaultEntryPointAddress = ":80"
	internalEntryPoint       = "traefik"
	internalEntryPointAddr   = ":8080"
)

// applyDefaults fills what Traefik fills: an "http" entrypoint on :80 when
// none is defined, and a "traefik" entrypoint on :8080 when the API
// (insecure), ping or Prometheus metrics need it and it is not defined.
func applyDefaults(c *static.Configuration) {
	if len(c.EntryPoints) == 0 {
		c.EntryPoints = map[string]*static.EntryPoint{defaultEntryPointName: {Address: defaultEntryPointAddress}}
	}
	needInternal := c.API != nil && c.API.Insecure
	if c.Ping != nil && (c.Ping.EntryPoint == "" || c.Ping.EntryPoint == internalEntryPoint) {
		needInternal = true
	}
	if c.Metrics != nil && c.Metrics.Prometheus != nil && !c.Metrics.Prometheus.ManualRouting &&
		(c.Metrics.Prometheus.EntryPoint == "" || c.Metrics.Prometheus.EntryPoint == internalEntryPoint) {
		needInternal = true
	}
	if _, ok := c.EntryPoints[internalEntryPoint]; needInternal && !ok {
		c.EntryPoints[internalEntryPoint] = &static.EntryPoint{Address: internalEntryPointAddr}
	}
}

// unsupported lists options that decode but that Gantry does not act on,
// when they are set, so none is ignored silently.
func unsupported(c *static.Configuration) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		if h := c.EntryPoints[name].HTTP; h != nil && h.TLS != nil {
			out = append(out, fmt.Sprintf("static configuration: option entryPoints.%s.http.tls is not supported: ignored; set tls on the routers instead", name))
		}
	}
	if c.API != nil && c.API.Debug {
		out = append(out, "static configuration: option api.debug is not supported: ignored")
	}
	if g := c.Global; g != nil && (g.CheckNewVersion || g.SendAnonymousUsage) {
		out = append(out, "static configuration: options global.checkNewVersion and global.sendAnonymousUsage have no effect: Gantry never contacts the network on its own")
	}
	return out
}

// checkStatic reports every invalid static option, naming it.
func checkStatic(c *static.Configuration) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.EntryPoints)) {
		ep := c.EntryPoints[name]
		if ep == nil {
			errs = append(errs, fmt.Errorf("entryPoints.%s: empty entrypoint (set address)", name))
			continue
		}
		addr, proto, _ := strings.Cut(ep.Address, "/")
		if proto != "" && !strings.EqualFold(proto, "tcp") {
			errs = append(errs, fmt.Errorf("entryPoints.%s.address %q: only tcp is supported, not %s", name, ep.Address, proto))
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("entryPoints.%s.address %q: want [host]:port: %w", name, ep.Address, err))
		}
		if r := ep.HTTP; r != nil && r.Redirections != nil && r.Redirections.EntryPoint != nil {
			to := r.Redirections.EntryPoint.To
			_, isEP := c.EntryPoints[to]
			_, portErr := strconv.ParseUint(strings.TrimPrefix(to, ":"), 10, 16)
			if !isEP && portErr != nil {
				errs = append(errs, fmt.Errorf("entryPoints.%s.http.redirections.entryPoint.to: no entrypoint %q (and not a port)", name, to))
			}
		}
		if fh := ep.ForwardedHeaders; fh != nil {
			for i, ip := range fh.TrustedIPs {
				if _, _, err := net.ParseCIDR(ip); err != nil && net.ParseIP(ip) == nil {
					errs = append(errs, fmt.Errorf("entryPoints.%s.forwardedHeaders.trustedIPs[%d]: %q is not an IP or CIDR", name, i, ip))
				}
			}
		}
	}
	if p := c.Providers; p != nil && p.File != nil {
		switch {
		case p.File.Directory != "" && p.File.Filename != "":
			errs = append(errs, errors.New("providers.file: set directory or filename, not both"))
		case p.File.Directory == "" && p.File.Filename == "":
			errs = append(errs, errors.New("providers.file: set directory or filename"))
		}
	}
	if c.Log != nil {
		if _, err := parseLevel(c.Log.Level); err != nil {
			errs = append(errs, fmt.Errorf("log.level: %w", err))
		}
		switch strings.ToLower(c.Log.Format) {
		case "", "common", "json":
		default:
			errs = append(errs, fmt.Errorf("log.format %q: want common or json", c.Log.Format))
		}
	}
	return errors.Join(errs...)
}
