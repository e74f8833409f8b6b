package file

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/static"
	"github.com/gantry-proxy/gantry/providers"
)

// name is the provider's name: objects are qualified "x@file".
const name = "file"

// input is one configuration file as read from disk.
type input struct {
	path string
	data []byte
	err  error // reading failed
}

// builder turns file contents into a Snapshot, remembering each file's last
// good decoded content. It is not safe for concurrent use.
type builder struct {
	log           *slog.Logger
	debugTemplate bool
	limits        limits
	good          map[string]*config.Configuration // path -> last content that decoded
	decoded       map[string]decoded               // path -> the last decode of its rendered text
}

// decoded is one file's decode, kept so that a change to another file
// does not decode an unchanged one again (a large file cost every other
// file's change its whole decode).
type decoded struct {
	rendered []byte
	good     *config.Configuration // what b.good holds for it
	c        *config.Configuration // what decodeFile returned
	probs    []providers.Problem
}

func newBuilder(log *slog.Logger, debugTemplate bool) *builder {
	return &builder{log: log, debugTemplate: debugTemplate, limits: defaultLimits,
		good: map[string]*config.Configuration{}, decoded: map[string]decoded{}}
}

// limits bound what one file may cost (providers.file.maxFileSize,
// maxValueSize, templateTimeout).
type limits struct {
	fileSize        int64 // bytes read, and bytes a template renders
	valueSize       int   // bytes of any one string (key or value) decoded
	templateTimeout time.Duration
}

// defaultLimits are far above any real configuration: 16 MiB holds some
// 50 000 routers; 1 MiB holds a long CA bundle given inline.
var defaultLimits = limits{fileSize: 16 << 20, valueSize: 1 << 20, templateTimeout: 5 * time.Second}

// limitsOf returns opts' limits, with defaults for unset (zero or negative)
// ones.
func limitsOf(opts static.File) limits {
	l := defaultLimits
	if opts.MaxFileSize > 0 {
		l.fileSize = opts.MaxFileSize
	}
	if opts.MaxValueSize > 0 {
		l.valueSize = int(min(opts.MaxValueSize, math.MaxInt32))
	}
	if opts.TemplateTimeout > 0 {
		l.templateTimeout = opts.TemplateTimeout.D()
	}
	return l
}

// build decodes files (already in name order) and merges them into one
// Snapshot.
//
// A file that fails to render or decode contributes its last good content,
// if any, and an error Problem naming file:line:col. Objects failing
// config.Validate are left out with an error Problem; warnings are kept.
// An object defined by an earlier file wins over a later duplicate, which
// gets a warning Problem. Files no longer present are forgotten.
//
// ctx bounds the rendering of templates (shutdown stops a render at once).
func (b *builder) build(ctx context.Context, files []input) providers.Snapshot {
	out := config.New()
	snap := providers.Snapshot{Config: out, Origins: map[string]string{}}
	seen := map[string]bool{}
	owner := map[string]string{} // "router x" -> defining file
	for _, in := range files {
		seen[in.path] = true
		c, probs, rendered := b.decodeFile(ctx, in)
		fresh := c != nil && b.good[in.path] != nil && probsFresh(probs)
		snap.Problems = append(snap.Problems, probs...)
		if c == nil {
			continue
		}
		snap.Problems = append(snap.Problems, mergeFile(out, c, in.path, rendered, owner)...)
		if !fresh {
			rendered = nil // the objects are the last good content: lines unknown
		}
		recordOrigins(snap.Origins, c, in.path, rendered, owner)
	}
	for p := range b.good {
		if !seen[p] {
			delete(b.good, p)
		}
	}
	for p := range b.decoded {
		if !seen[p] {
			delete(b.decoded, p)
		}
	}
	return snap
}

// decodeFile returns the configuration of one file with invalid objects
// removed (or its last good configuration, or nil), its problems, and the
// rendered text (nil when rendering failed).
func (b *builder) decodeFile(ctx context.Context, in input) (*config.Configuration, []providers.Problem, []byte) {
	f, _ := config.FormatOf(in.path)
	fail := func(p pos, msg string) (*config.Configuration, []providers.Problem) {
		prob := providers.Problem{Provider: name, Source: in.path + p.String(), Severity: providers.SeverityError, Message: msg}
		prev, ok := b.good[in.path]
		if !ok || empty(prev) {
			// Never read with content (a new file seen while being
			// written counts as empty first): say so, not "keeping".
			prob.Message += "; no usable content was read from this file yet: nothing from this file is used"
			return nil, []providers.Problem{prob}
		}
		prob.Message += "; keeping the last good content of this file"
		return withoutInvalid(prev), []providers.Problem{prob}
	}
	if in.err != nil {
		c, probs := fail(pos{}, fmt.Sprintf("read: %v", in.err))
		return c, probs, nil
	}
	if prev, ok := b.good[in.path]; ok && len(bytes.TrimSpace(in.data)) == 0 && !empty(prev) {
		// Truncated by an editor (or "> file") that has not written yet:
		// never publish a half-saved file (case 022). Deleting the file
		// removes its objects.
		return withoutInvalid(prev), []providers.Problem{{
			Provider: name, Source: in.path, Severity: providers.SeverityWarning,
			Message: "file is empty; keeping its last good content (delete the file to remove its objects)",
		}}, nil
	}
	if int64(len(in.data)) > b.limits.fileSize {
		c, probs := fail(pos{}, fmt.Sprintf("file is larger than providers.file.maxFileSize (%d bytes)", b.limits.fileSize))
		return c, probs, nil
	}
	rctx, cancel := context.WithTimeout(ctx, b.limits.templateTimeout)
	rendered, err := render(rctx, in.path, in.data, int(min(b.limits.fileSize, math.MaxInt32)))
	cancel()
	if err != nil {
		c, probs := fail(templatePos(err), err.Error())
		return c, probs, nil
	}
	if b.debugTemplate {
		b.log.Debug("rendered configuration template", "provider", name, "file", in.path, "content", string(rendered))
	}
	if d, ok := b.decoded[in.path]; ok && bytes.Equal(d.rendered, rendered) {
		b.good[in.path] = d.good
		return d.c, d.probs, rendered
	}
	c, err := config.DecodeContext(ctx, rendered, f)
	var isolated []providers.Problem
	if err != nil {
		// One bad object disables that object only (issue 15); an error
		// outside any object (syntax, a bad top-level section) fails the
		// file.
		ic, bad, ierr := isolate(ctx, rendered, f)
		if ierr != nil {
			// An error outside the objects fails the file. When some
			// objects are bad too, the file's own error is the one left
			// without them (err may be one of theirs), if it names a key
			// to find in the file; each bad object is reported as well,
			// so that one fix does not reveal the next.
			if len(bad) > 0 && errorKey(errorMessage(ierr)) != "" {
				err = ierr
			}
			p, msg := decodeError(err, rendered, f)
			c, probs := fail(p, msg)
			for _, o := range bad {
				probs = append(probs, objectProblem(in.path, o, "also wrong"))
			}
			return c, probs, rendered
		}
		c = ic
		for _, o := range bad {
			isolated = append(isolated, objectProblem(in.path, o, "left out (the rest of the file is used)"))
		}
	}
	if at, n := longValue(reflect.ValueOf(c), b.limits.valueSize, ""); at != "" {
		c, probs := fail(pos{}, fmt.Sprintf("%s is %d bytes, over providers.file.maxValueSize (%d)", at, n, b.limits.valueSize))
		return c, probs, rendered
	}
	b.good[in.path] = c
	loc := newLocator(rendered, f)
	probs := validate(c, func(kind, obj string) string {
		return in.path + loc.object(kind, obj).String()
	})
	d := decoded{rendered: rendered, good: c, c: withoutInvalid(c), probs: append(isolated, probs...)}
	b.decoded[in.path] = d
	return d.c, d.probs, rendered
}

// objectProblem is the Problem of an object of file that does not decode:
// where, what, and what became of it ("left out …").
func objectProblem(file string, o objectError, became string) providers.Problem {
	return providers.Problem{
		Provider: name, Source: file + o.at.String(), Severity: providers.SeverityError,
		Objects: []string{o.kind + " " + o.name},
		Message: fmt.Sprintf("%s; %s %s %s", errorMessage(o.err), o.kind, o.name, became),
	}
}

// empty reports whether c defines nothing.
func empty(c *config.Configuration) bool {
	e := true
	if h := c.HTTP; h != nil {
		e = len(h.Routers)+len(h.Services)+len(h.Middlewares)+len(h.ServersTransports) == 0
	}
	if t := c.TLS; t != nil {
		e = e && len(t.Certificates)+len(t.Options)+len(t.Stores) == 0
	}
	return e && c.TCP.Empty() && c.UDP.Empty() && len(c.EntryPoints) == 0
}

// validate returns config.Validate's findings as Problems, with the source
// of each object given by at.
func validate(c *config.Configuration, at func(kind, name string) string) []providers.Problem {
	var out []providers.Problem
	for _, e := range config.Validate(c) {
		p := providers.Problem{Provider: name, Message: e.Error(), Severity: providers.SeverityError}
		switch e.Kind {
		case "tls":
			p.Objects = []string{"tls certificate " + e.Field}
			p.Source = at(e.Kind, e.Field)
		default:
			p.Objects = []string{e.Kind + " " + e.Name}
			p.Source = at(e.Kind, e.Name)
		}
		out = append(out, p)
	}
	return out
}

// withoutInvalid returns c without the TLS certificates config.Validate
// rejects (c itself when there are none; c is never modified). Invalid
// routers, services and middlewares stay: router.Compile validates them
// again and shows each as disabled with its error in the API, so a router
// using a service with a bad server URL says why (instead of "service does
// not exist"), and the Problem from validate gives the file and line.
func withoutInvalid(c *config.Configuration) *config.Configuration {
	drop := map[string]bool{}
	for _, e := range config.Validate(c) {
		if e.Kind == "tls" {
			drop["tls "+e.Field] = true
		}
	}
	if len(drop) == 0 || c.TLS == nil {
		return c
	}
	cp := *c
	tc := *c.TLS
	tc.Certificates = nil
	for i, cert := range c.TLS.Certificates {
		if !drop[fmt.Sprintf("tls [%d]", i)] {
			tc.Certificates = append(tc.Certificates, cert)
		}
	}
	cp.TLS = &tc
	return &cp
}

// mergeFile adds c's objects to out, skipping (with a warning) names some
// earlier file already defined.
func mergeFile(out, c *config.Configuration, path string, rendered []byte, owner map[string]string) []providers.Problem {
	var probs []providers.Problem
	f, _ := config.FormatOf(path)
	loc := newLocator(rendered, f)
	dup := func(kind, obj string) bool {
		key := kind + " " + obj
		first, ok := owner[key]
		if !ok {
			owner[key] = path
			return false
		}
		probs = append(probs, providers.Problem{
			Provider: name, Source: path + loc.object(kind, obj).String(), Severity: providers.SeverityWarning,
			Objects: []string{key},
			Message: fmt.Sprintf("%s %q is already defined in %s; this definition is skipped", kind, obj, first),
		})
		return true
	}
	if h := c.HTTP; h != nil {
		add(out.HTTP.Routers, h.Routers, "router", dup)
		add(out.HTTP.Services, h.Services, "service", dup)
		add(out.HTTP.Middlewares, h.Middlewares, "middleware", dup)
		add(out.HTTP.ServersTransports, h.ServersTransports, "serversTransport", dup)
	}
	if t := c.TLS; t != nil {
		out.TLS.Certificates = append(out.TLS.Certificates, t.Certificates...)
		add(out.TLS.Options, t.Options, "tlsOptions", dup)
		add(out.TLS.Stores, t.Stores, "tlsStore", dup)
	}
	if t := c.TCP; !t.Empty() {
		o := out.EnsureTCP()
		add(o.Routers, t.Routers, config.KindTCPRouter, dup)
		add(o.Services, t.Services, config.KindTCPService, dup)
		add(o.Middlewares, t.Middlewares, config.KindTCPMiddleware, dup)
		add(o.ServersTransports, t.ServersTransports, config.KindTCPServersTransport, dup)
	}
	if u := c.UDP; !u.Empty() {
		o := out.EnsureUDP()
		add(o.Routers, u.Routers, config.KindUDPRouter, dup)
		add(o.Services, u.Services, config.KindUDPService, dup)
	}
	if len(c.EntryPoints) > 0 { // dynamic entrypoints (dataplane/entrypoints)
		if out.EntryPoints == nil {
			out.EntryPoints = map[string]*config.DynamicEntryPoint{}
		}
		add(out.EntryPoints, c.EntryPoints, "entrypoint", dup)
	}
	return probs
}

// probsFresh reports whether none of a file's problems says its last good
// content is being used instead of what it holds now.
func probsFresh(probs []providers.Problem) bool {
	for _, p := range probs {
		if strings.Contains(p.Message, "keeping the last good content") || strings.Contains(p.Message, "keeping its last good content") {
			return false
		}
	}
	return true
}

// recordOrigins notes where each router, service and middleware that c
// contributed (not a skipped duplicate) is defined: "file:line:col" for
// YAML, the file name otherwise (or when the text is the last good content).
func recordOrigins(origins map[string]string, c *config.Configuration, path string, rendered []byte, owner map[string]string) {
	for n := range c.EntryPoints {
		if owner["entrypoint "+n] == path {
			origins["entrypoint "+n] = path
		}
	}
	if c.HTTP == nil {
		return
	}
	f, _ := config.FormatOf(path)
	var at map[string]pos
	if rendered != nil {
		at = objectPositions(rendered, f)
	}
	note := func(kind string, names []string) {
		for _, n := range names {
			key := kind + " " + n
			if owner[key] != path {
				continue
			}
			origins[key] = path + at[key].String()
			if p, ok := at["rule "+key]; ok {
				origins["rule "+key] = path + p.String()
			}
		}
	}
	note("router", slices.Collect(maps.Keys(c.HTTP.Routers)))
	note("service", slices.Collect(maps.Keys(c.HTTP.Services)))
	note("middleware", slices.Collect(maps.Keys(c.HTTP.Middlewares)))
}

func add[V any](dst, src map[string]V, kind string, dup func(kind, name string) bool) {
	for _, n := range slices.Sorted(maps.Keys(src)) {
		if !dup(kind, n) {
			dst[n] = src[n]
		}
	}
}

// longValue returns the path (as in the file: "http.middlewares.h.headers.
// customRequestHeaders.X-Big") and length of the first string under v longer
// than max bytes, map keys included; "" when there is none.
func longValue(v reflect.Value, max int, at string) (string, int) {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch v.Kind() {
	case reflect.String:
		if v.Len() > max {
			return at, v.Len()
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return longValue(v.Elem(), max, at)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if n == "" || n == "-" {
				n = f.Name
			}
			sub := join(n)
			if f.Anonymous && f.Tag.Get("json") == "" {
				sub = at // embedded: its fields are the parent's
			}
			if p, l := longValue(v.Field(i), max, sub); p != "" {
				return p, l
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := fmt.Sprint(it.Key().Interface())
			if len(k) > max {
				return join(k[:32] + "…"), len(k)
			}
			if p, l := longValue(it.Value(), max, join(k)); p != "" {
				return p, l
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Len() > max {
				return at, v.Len()
			}
			return "", 0
		}
		for i := range v.Len() {
			if p, l := longValue(v.Index(i), max, fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p, l
			}
		}
	}
	return "", 0
}
