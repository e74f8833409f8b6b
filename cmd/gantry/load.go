package main

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/dataplane/entrypoints"
	"github.com/gantry-proxy/gantry/dataplane/generation"
	"github.com/gantry-proxy/gantry/instance"
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
// gives the same result whenever one source is used. As in Traefik, a key
// that names no option is an error, naming the key as written and where
// (the file and line, "flags", "environment"); a Traefik option Gantry
// does not support is a warning naming it. A malformed value is an error
// naming the option and where. Every error is reported, with the
// warnings: the error is then a *staticError.
func loadStatic(c cliArgs, environ []string) (*loaded, error) {
	l := &loaded{}
	var layers []*layer
	var errs []error

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
		fl, err := readConfigFile(file)
		if err != nil {
			return nil, err
		}
		l.File = file
		layers = append(layers, fl)
	}
	for _, el := range []*layer{env.traefik, env.gantry} {
		if el != nil {
			layers = append(layers, el)
		}
	}
	if len(c.flags) > 0 {
		fl, ferrs := flagLayer(c.flags)
		errs = append(errs, ferrs...)
		layers = append(layers, fl)
	}
	cfg := &static.Configuration{}
	for _, ly := range layers {
		lerrs, warns := ly.decode(cfg)
		errs = append(errs, lerrs...)
		l.Warnings = append(l.Warnings, warns...)
		l.Sources = append(l.Sources, ly.source)
	}
	applyDefaults(cfg)
	if err := checkStatic(cfg); err != nil {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, j.Unwrap()...)
		} else {
			errs = append(errs, err)
		}
	}
	l.Warnings = append(l.Warnings, unsupported(cfg)...)
	if len(errs) > 0 {
		return nil, &staticError{errs: errs, warnings: l.Warnings}
	}
	l.Config = cfg
	return l, nil
}

// staticError is every error of a static configuration, and its warnings
// (which an error must not hide).
type staticError struct {
	errs     []error
	warnings []string
}

// Error lists the errors, one a line, then the warnings ("warning: …").
func (e *staticError) Error() string {
	var b strings.Builder
	b.WriteString(errors.Join(e.errs...).Error())
	for _, w := range e.warnings {
		b.WriteString("\nwarning: " + w)
	}
	return b.String()
}

// Unwrap returns the errors.
func (e *staticError) Unwrap() []error { return e.errs }

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
		ep := c.EntryPoints[name]
		switch {
		case ep == nil || !ep.AsDefault:
		case name == internalEntryPoint:
			out = append(out, "entryPoints."+name+".asDefault is ignored: the API entrypoint is never a default entrypoint (routers without entryPoints are not served on it)")
		case instance.IsUDP(ep):
			out = append(out, "entryPoints."+name+".asDefault is ignored: UDP routers without entryPoints use every UDP entrypoint")
		}
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
		if proto != "" && !strings.EqualFold(proto, "tcp") && !strings.EqualFold(proto, "udp") {
			errs = append(errs, fmt.Errorf("entryPoints.%s.address %q: want tcp or udp, not %s", name, ep.Address, proto))
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
		if r := ep.HTTP; r != nil && r.NotFound != nil {
			if err := generation.CheckNotFound(r.NotFound); err != nil {
				errs = append(errs, fmt.Errorf("entryPoints.%s.http.%w", name, err))
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
	errs = append(errs, sharedAddresses(c.EntryPoints)...)
	if d := c.DynamicEntryPoints; d != nil {
		if _, err := entrypoints.ParseAllowed(d.Allowed); err != nil {
			errs = append(errs, err)
		}
		if err := entrypoints.CheckTemplate(d.Template); err != nil {
			errs = append(errs, err)
		}
		if d.MaxEntryPoints < 0 {
			errs = append(errs, fmt.Errorf("dynamicEntryPoints.maxEntryPoints %d: want a positive number (0 for %d)", d.MaxEntryPoints, entrypoints.DefaultMaxEntryPoints))
		}
		if t := d.Template; t != nil && t.ForwardedHeaders != nil {
			for i, ip := range t.ForwardedHeaders.TrustedIPs {
				if _, _, err := net.ParseCIDR(ip); err != nil && net.ParseIP(ip) == nil {
					errs = append(errs, fmt.Errorf("dynamicEntryPoints.template.forwardedHeaders.trustedIPs[%d]: %q is not an IP or CIDR", i, ip))
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

// sharedAddresses returns an error for each entrypoint whose address
// overlaps an earlier one's (by name): the same protocol and port, and the
// same IP or a wildcard covering the other (":p" and "[::]:p" are
// dual-stack, "0.0.0.0:p" covers IPv4). Only one of them could be bound
// (SO_REUSEPORT sockets of one process would split the connections between
// them), so the file is refused by name before anything listens. Host
// names are compared as written.
func sharedAddresses(eps map[string]*static.EntryPoint) []error {
	type bound struct {
		name, proto, port string
		ip                net.IP // nil: a host name (host set) or the dual-stack wildcard
		host              string
	}
	var seen []bound
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(eps)) {
		ep := eps[name]
		if ep == nil {
			continue
		}
		addr, proto, _ := strings.Cut(ep.Address, "/")
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			continue // reported by checkStatic
		}
		b := bound{name: name, proto: strings.ToLower(proto), port: port, ip: net.ParseIP(host), host: host}
		if b.proto == "" {
			b.proto = "tcp"
		}
		if b.ip != nil && b.ip.Equal(net.IPv6unspecified) {
			b.ip, b.host = nil, "" // dual-stack, as ":p"
		}
		for _, o := range seen {
			if o.proto != b.proto || o.port != b.port || !overlap(o.ip, o.host, b.ip, b.host) {
				continue
			}
			errs = append(errs, fmt.Errorf("entryPoints.%s.address %q: the address of entryPoints.%s (%q) covers it; only one can listen", name, ep.Address, o.name, eps[o.name].Address))
			break
		}
		seen = append(seen, b)
	}
	return errs
}

// overlap reports whether two listening hosts (ip nil with host "" for the
// dual-stack wildcard, or a host name) cannot both be bound on one port.
func overlap(aIP net.IP, aHost string, bIP net.IP, bHost string) bool {
	switch {
	case aIP == nil && aHost == "", bIP == nil && bHost == "":
		return true
	case aIP == nil || bIP == nil:
		return aIP == nil && bIP == nil && strings.EqualFold(aHost, bHost)
	case aIP.Equal(bIP):
		return true
	case aIP.Equal(net.IPv4zero):
		return bIP.To4() != nil
	case bIP.Equal(net.IPv4zero):
		return aIP.To4() != nil
	}
	return false
}
