package file

import (
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-proxy/gantry/config"
)

// maxScans bounds the text searches one locator makes in a TOML or JSON
// file (each reads the whole file): a file with thousands of objects in
// error gets positions for the first maxScans and the file name for the
// rest, so locating stays linear in the file's size.
const maxScans = 64

// locator finds objects and keys in one file's rendered text, parsing a
// YAML file once and indexing each section on first use, so that locating
// every object of a large file costs one parse, not one per object.
type locator struct {
	data   []byte
	f      config.Format
	parsed bool
	root   *yaml.Node                      // YAML document's top node; nil if it does not parse
	index  map[string]map[string]yamlEntry // YAML: kind -> object name -> entry
	scans  int                             // TOML/JSON text searches made
}

// yamlEntry is one mapping entry: its key node and value node.
type yamlEntry struct{ key, val *yaml.Node }

func newLocator(data []byte, f config.Format) *locator { return &locator{data: data, f: f} }

// yaml returns the YAML document's top node, parsing on first use (nil for
// other formats or when it does not parse).
func (l *locator) yaml() *yaml.Node {
	if !l.parsed {
		l.parsed = true
		var root yaml.Node
		if l.f == config.YAML && yaml.Unmarshal(l.data, &root) == nil && len(root.Content) > 0 {
			l.root = root.Content[0]
		}
	}
	return l.root
}

// section returns the YAML mapping node holding objects of kind.
func (l *locator) section(kind string) *yaml.Node {
	section, parent := sectionOf(kind)
	if section == "" {
		return nil
	}
	return child(child(l.yaml(), parent, true), section, true)
}

// entry returns the YAML entry of the object kind name.
func (l *locator) entry(kind, name string) (yamlEntry, bool) {
	if l.index == nil {
		l.index = map[string]map[string]yamlEntry{}
	}
	idx, ok := l.index[kind]
	if !ok {
		idx = map[string]yamlEntry{}
		if n := l.section(kind); n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if _, dup := idx[n.Content[i].Value]; !dup {
					idx[n.Content[i].Value] = yamlEntry{n.Content[i], n.Content[i+1]}
				}
			}
		}
		l.index[kind] = idx
	}
	e, ok := idx[name]
	return e, ok
}

// scan returns the position of re's first submatch, within maxScans.
func (l *locator) scan(re func() *regexp.Regexp) pos {
	if l.scans >= maxScans {
		return pos{}
	}
	l.scans++
	return textKeyPos(l.data, re())
}

// object locates an object of the file: kind is a config.ValidationError
// Kind ("router", "service", "middleware", "tls", ...), name its name (for
// "tls", the certificate index as "[i]").
func (l *locator) object(kind, name string) pos {
	section, _ := sectionOf(kind)
	if section == "" {
		return pos{}
	}
	switch l.f {
	case config.YAML:
		if kind == "tls" {
			n := l.section(kind)
			i, err := strconv.Atoi(strings.Trim(name, "[]"))
			if n == nil || n.Kind != yaml.SequenceNode || err != nil || i < 0 || i >= len(n.Content) {
				return pos{}
			}
			return pos{n.Content[i].Line, n.Content[i].Column}
		}
		if e, ok := l.entry(kind, name); ok {
			return pos{e.key.Line, e.key.Column}
		}
		return pos{}
	case config.TOML:
		if kind == "tls" {
			return pos{}
		}
		return l.scan(func() *regexp.Regexp {
			return regexp.MustCompile(`(?i)` + section + `\.(?:"|')?(` + regexp.QuoteMeta(name) + `)(?:"|')?[\].]`)
		})
	default:
		if kind == "tls" {
			return pos{}
		}
		return l.scan(func() *regexp.Regexp { return regexp.MustCompile(`"(` + regexp.QuoteMeta(name) + `)"\s*:`) })
	}
}

// keyInObject locates err (from decoding one object alone): for YAML the
// offending key inside the object, else where the error's key first
// occurs in the file, else the object.
func (l *locator) keyInObject(kind, name string, err error) pos {
	obj := l.object(kind, name)
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	key := errorKey(msg)
	if key == "" {
		return obj
	}
	switch l.f {
	case config.YAML:
	case config.TOML:
		if p := l.scan(func() *regexp.Regexp { return tomlKeyRe(key) }); p.line != 0 {
			return p
		}
		return obj
	default:
		if p := l.scan(func() *regexp.Regexp { return jsonKeyRe(key) }); p.line != 0 {
			return p
		}
		return obj
	}
	e, ok := l.entry(kind, name)
	if !ok {
		return obj
	}
	var found *yaml.Node
	walkKeys(e.val, func(p *yaml.Node, i int) {
		if found == nil && strings.EqualFold(p.Content[i].Value, key) {
			found = p.Content[i]
		}
	})
	if found == nil {
		return obj
	}
	return pos{found.Line, found.Column}
}

// tomlKeyRe matches key as a TOML key or table name component.
func tomlKeyRe(key string) *regexp.Regexp {
	return regexp.MustCompile(`(?im)^\s*(?:\[+\s*)?(?:[^\s=\]]*\.)?"?(` + regexp.QuoteMeta(key) + `)"?\s*(?:=|\]|\.)`)
}

// jsonKeyRe matches key as a JSON object key.
func jsonKeyRe(key string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)"(` + regexp.QuoteMeta(key) + `)"\s*:`)
}
