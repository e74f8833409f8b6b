package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-proxy/gantry/config"
)

// pos is a 1-based line and column; zero fields are unknown.
type pos struct{ line, col int }

func (p pos) String() string {
	switch {
	case p.line == 0:
		return ""
	case p.col == 0:
		return ":" + strconv.Itoa(p.line)
	}
	return fmt.Sprintf(":%d:%d", p.line, p.col)
}

var (
	reYAMLLine     = regexp.MustCompile(`line (\d+)`)
	reUnknownField = regexp.MustCompile(`^unknown field "([^"]+)"`)
	reFieldPath    = regexp.MustCompile(`^field ([^:]+):`)
	reTemplatePos  = regexp.MustCompile(`^template: [^:]*:(\d+)(?::(\d+))?:`)
)

// templateError returns where a text/template error points.
func templatePos(err error) pos {
	m := reTemplatePos.FindStringSubmatch(err.Error())
	if m == nil {
		return pos{}
	}
	l, _ := strconv.Atoi(m[1])
	c, _ := strconv.Atoi(m[2])
	return pos{l, c}
}

// errorKey is the key a decoding error message names: the unknown field,
// or the last element of the field path ("" when it names none).
func errorKey(msg string) string {
	if m := reUnknownField.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	if m := reFieldPath.FindStringSubmatch(msg); m != nil {
		return m[1][strings.LastIndexByte(m[1], '.')+1:]
	}
	return ""
}

// decodeError locates err, returned by config.Decode(data, f), in data, and
// returns a cleaned message.
func decodeError(err error, data []byte, f config.Format) (pos, string) {
	msg := errorMessage(err)
	if pe, ok := errors.AsType[toml.ParseError](err); ok {
		return pos{pe.Position.Line, pe.Position.Col}, msg
	}
	if ye, ok := errors.AsType[*config.YAMLError](err); ok {
		return pos{line: ye.Line}, msg
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return offsetPos(data, int(se.Offset)), msg
	}
	key := errorKey(msg)
	if key == "" {
		if f == config.YAML {
			if m := reYAMLLine.FindStringSubmatch(msg); m != nil {
				l, _ := strconv.Atoi(m[1])
				if fixed := yamlErrorLine(data, msg); fixed != 0 && fixed != l {
					l = fixed
					msg = strings.Replace(msg, m[0], "line "+strconv.Itoa(l), 1)
				}
				return pos{line: l}, msg
			}
		}
		return pos{}, msg
	}
	switch f {
	case config.YAML:
		return yamlKeyPos(data, key, msg), msg
	case config.TOML:
		return textKeyPos(data, tomlKeyRe(key)), msg
	default:
		return textKeyPos(data, jsonKeyRe(key)), msg
	}
}

// errorMessage is err's message as decodeError reports it, without
// locating it (no search of the file).
func errorMessage(err error) string {
	if pe, ok := errors.AsType[toml.ParseError](err); ok {
		return "toml: " + pe.Message
	}
	msg := strings.ReplaceAll(err.Error(), "yaml: yaml: ", "yaml: ")
	return strings.ReplaceAll(msg, "toml: toml: ", "toml: ")
}

// offsetPos converts a byte offset into a line and column.
func offsetPos(data []byte, off int) pos {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return pos{line, col}
}

// textKeyPos returns the position of the first submatch of re in data.
func textKeyPos(data []byte, re *regexp.Regexp) pos {
	m := re.FindSubmatchIndex(data)
	if m == nil {
		return pos{}
	}
	return offsetPos(data, m[2])
}

// maxKeyCandidates bounds the candidates yamlKeyPos tries (each costs a
// decode of the whole file); past it, the first occurrence is reported.
const maxKeyCandidates = 16

// yamlKeyPos finds the mapping key named key (case-insensitively, as
// Decode matches fields) that causes the decode error msg. When the name
// occurs more than once (an unknown "domains" under a router, while
// tls.domains is valid), each of the first maxKeyCandidates candidates is
// removed in turn, and the one whose removal changes the error is the
// culprit.
func yamlKeyPos(data []byte, key, msg string) pos {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return pos{}
	}
	var cands []*yaml.Node
	walkKeys(&root, func(parent *yaml.Node, i int) {
		if strings.EqualFold(parent.Content[i].Value, key) {
			cands = append(cands, parent.Content[i])
		}
	})
	switch len(cands) {
	case 0:
		return pos{}
	case 1:
		return pos{cands[0].Line, cands[0].Column}
	}
	for _, c := range cands[:min(len(cands), maxKeyCandidates)] {
		out, ok := withoutKey(&root, c)
		if !ok {
			continue
		}
		if _, err := config.Decode(out, config.YAML); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(msg, "yaml: ")) {
			return pos{c.Line, c.Column}
		}
	}
	return pos{cands[0].Line, cands[0].Column}
}

// walkKeys calls fn for every key of every mapping under n.
func walkKeys(n *yaml.Node, fn func(parent *yaml.Node, i int)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			fn(n, i)
		}
	}
	for _, c := range n.Content {
		walkKeys(c, fn)
	}
}

// withoutKey re-encodes root without the mapping entry whose key is k.
func withoutKey(root, k *yaml.Node) ([]byte, bool) {
	var parent *yaml.Node
	var idx int
	walkKeys(root, func(p *yaml.Node, i int) {
		if p.Content[i] == k {
			parent, idx = p, i
		}
	})
	if parent == nil {
		return nil, false
	}
	saved := parent.Content
	parent.Content = append(append([]*yaml.Node{}, saved[:idx]...), saved[idx+2:]...)
	out, err := yaml.Marshal(root)
	parent.Content = saved
	return out, err == nil
}

// objectPositions locates every router, service and middleware of a YAML
// file in one parse, keyed "router web", and each router's rule value,
// keyed "rule router web"; nil for other formats (the file name alone then
// locates them).
func objectPositions(data []byte, f config.Format) map[string]pos {
	if f != config.YAML {
		return nil
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return nil
	}
	out := map[string]pos{}
	for _, kind := range []string{"router", "service", "middleware"} {
		section, parent := sectionOf(kind)
		n := child(child(root.Content[0], parent, true), section, true)
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			key := kind + " " + n.Content[i].Value
			out[key] = pos{n.Content[i].Line, n.Content[i].Column}
			if kind == "router" {
				// A rule that does not parse is reported at the rule,
				// the line to edit (issue 15).
				if r := child(n.Content[i+1], "rule", true); r != nil {
					out["rule "+key] = pos{r.Line, r.Column}
				}
			}
		}
	}
	return out
}

// sectionOf is where objects of kind stand in a dynamic configuration
// file: section under parent ("routers" under "http"); "" for an unknown
// kind.
func sectionOf(kind string) (section, parent string) {
	s := sections[kind]
	return s[0], s[1]
}

// sections maps each kind to its section and parent (sectionOf).
var sections = map[string][2]string{
	"router":                       {"routers", "http"},
	"service":                      {"services", "http"},
	"middleware":                   {"middlewares", "http"},
	"serversTransport":             {"serversTransports", "http"},
	"tls":                          {"certificates", "tls"},
	config.KindTCPRouter:           {"routers", "tcp"},
	config.KindTCPService:          {"services", "tcp"},
	config.KindTCPMiddleware:       {"middlewares", "tcp"},
	config.KindTCPServersTransport: {"serversTransports", "tcp"},
	config.KindUDPRouter:           {"routers", "udp"},
	config.KindUDPService:          {"services", "udp"},
}

// child returns the value of key in mapping n (nil if absent).
func child(n *yaml.Node, key string, fold bool) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if k == key || (fold && strings.EqualFold(k, key)) {
			return n.Content[i+1]
		}
	}
	return nil
}

// objectError is one object left out of a file that does not decode as a
// whole: its kind ("router"), name, the decode error and where it is.
type objectError struct {
	kind, name string
	err        error
	at         pos
}

// isolatedKinds are the object kinds isolate decodes one by one: HTTP's,
// TCP's and UDP's routers, services, middlewares and serversTransports.
var isolatedKinds = []string{
	"router", "service", "middleware", "serversTransport",
	config.KindTCPRouter, config.KindTCPService, config.KindTCPMiddleware, config.KindTCPServersTransport,
	config.KindUDPRouter, config.KindUDPService,
}

// isolate decodes a file whose whole decode failed object by object: every
// router, service, middleware and serversTransport (HTTP, TCP, UDP) that does not decode on
// its own (an unknown field, a wrong type) is left out and returned as an
// objectError; the rest of the file is decoded without them. It returns an
// error when the file does not parse, or still does not decode without the
// bad objects (the error is then not inside one object: the bad objects
// are returned with it, so that both are reported). Gantry is better than
// Traefik here, which drops the whole file (issue 15).
func isolate(ctx context.Context, data []byte, f config.Format) (*config.Configuration, []objectError, error) {
	generic, err := config.DecodeGeneric(ctx, data, f)
	if err != nil {
		return nil, nil, err
	}
	root, ok := generic.(map[string]any)
	if !ok {
		return nil, nil, errors.New("top level is not a mapping")
	}
	var bad []objectError
	loc := newLocator(data, f)
	for _, kind := range isolatedKinds {
		section, parent := sectionOf(kind)
		pk, ok := foldKey(root, parent)
		if !ok {
			continue
		}
		h, _ := root[pk].(map[string]any)
		sk, ok := foldKey(h, section)
		if !ok {
			continue
		}
		objs, _ := h[sk].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(objs)) {
			one, err := yaml.Marshal(map[string]any{parent: map[string]any{section: map[string]any{name: jsonNumbers(objs[name])}}})
			if err == nil {
				_, err = config.Decode(one, config.YAML)
			}
			if err != nil {
				bad = append(bad, objectError{kind: kind, name: name, err: err, at: loc.keyInObject(kind, name, err)})
				delete(objs, name)
			}
		}
	}
	if len(bad) == 0 {
		return nil, nil, errors.New("no single object fails")
	}
	rest, err := yaml.Marshal(jsonNumbers(root))
	if err != nil {
		return nil, nil, err
	}
	c, err := config.Decode(rest, config.YAML)
	if err != nil {
		return nil, bad, err
	}
	return c, bad, nil
}

// foldKey returns the key of m equal to key case-insensitively (Decode
// matches field names so).
func foldKey(m map[string]any, key string) (string, bool) {
	for k := range m {
		if strings.EqualFold(k, key) {
			return k, true
		}
	}
	return "", false
}

// jsonNumbers replaces json.Number values (from a JSON file) with int64 or
// float64, which yaml.Marshal writes as numbers.
func jsonNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = jsonNumbers(e)
		}
	}
	return v
}

// lineSearchBudget bounds the bytes yamlErrorLine parses, as a multiple
// of the file's size plus a constant: small files are searched line by
// line, a large one only near the reported line.
const (
	lineSearchFactor = 4
	lineSearchSlack  = 4 << 20
)

// yamlErrorLine returns the line a YAML syntax error msg is about, the one
// the user must edit: the first line at which the file, cut after it, fails
// to parse with the same error. yaml.v3 reports the line where the
// construct in error began, often one or more lines earlier (an unclosed
// "[" on line 5 is reported at line 4, a mis-indented key on line 5 at the
// mapping's line 2), never later, so the search starts at the reported
// line. It returns 0 when no such line is found within the parse budget
// (lineSearchFactor times the file's size plus lineSearchSlack bytes).
func yamlErrorLine(data []byte, msg string) int {
	want := reYAMLLine.ReplaceAllString(strings.TrimPrefix(msg, "yaml: "), "")
	from := 1
	if m := reYAMLLine.FindStringSubmatch(msg); m != nil {
		from, _ = strconv.Atoi(m[1])
	}
	budget := lineSearchFactor*len(data) + lineSearchSlack
	lines := bytes.SplitAfter(data, []byte("\n"))
	end := 0
	for i, l := range lines {
		end += len(l)
		if i+1 < from {
			continue
		}
		if budget -= end; budget < 0 {
			return 0
		}
		var root yaml.Node
		err := yaml.Unmarshal(data[:end], &root)
		if err == nil {
			continue
		}
		if reYAMLLine.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "") == want {
			return i + 1
		}
	}
	return 0
}
