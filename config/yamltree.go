package config

import (
	"context"
	"errors"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// ErrExcessiveAliasing is returned for a YAML document whose aliases
// expand to more than maxAliasExpansion nodes per byte of input (a
// "billion laughs" document).
var ErrExcessiveAliasing = errors.New("yaml: document contains excessive aliasing")

// YAMLError is an error found in a YAML document's structure after it
// parsed (a key defined twice, a bad merge, an unknown anchor), at Line
// (1-based). Its message is "yaml: line N: ...".
type YAMLError struct {
	Line int
	Msg  string
}

func (e *YAMLError) Error() string { return fmt.Sprintf("yaml: line %d: %s", e.Line, e.Msg) }

// maxAliasExpansion bounds the nodes a YAML document may expand to, per
// byte of input (plus a constant for tiny documents): without aliases a
// document has at most about one node per byte; aliases reusing a block
// of middlewares in many routers stay far below this.
const (
	maxAliasExpansion = 8
	aliasSlack        = 100_000
)

// ctxCheckEvery is how many nodes the walk decodes between two looks at
// its context.
const ctxCheckEvery = 4096

// decodeYAML parses data as one YAML document into generic values
// (map[string]any, []any, string, int, float64, bool, nil, time.Time,
// ...), in time linear in len(data). yaml.v3's own decoding into
// interface{} compares every key of a mapping with every other one to
// refuse duplicates, which is quadratic in the keys of one mapping: one
// file of 80 000 routers took minutes (issue 23). This walks yaml.v3's
// node tree instead and finds duplicates with a set. Semantics follow
// yaml.v3: scalars resolve as YAML 1.2's core schema (yaml.v3's
// resolution, per scalar), merge keys ("<<", a mapping or a sequence of
// mappings) add the keys not set explicitly, earlier merged mappings
// first, a key defined twice is an error naming both lines, and keys that
// are not strings are written with fmt.Sprint (statusRewrites: {418:
// 404}), as Traefik's decoder reads them. The walk stops with ctx's error
// when ctx ends.
func decodeYAML(ctx context.Context, data []byte) (any, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, nil
	}
	w := &yamlWalker{ctx: ctx, budget: maxAliasExpansion*len(data) + aliasSlack}
	return w.value(root.Content[0])
}

type yamlWalker struct {
	ctx    context.Context
	budget int // nodes left to visit
	seen   int
}

func (w *yamlWalker) visit() error {
	w.budget--
	if w.budget < 0 {
		return ErrExcessiveAliasing
	}
	w.seen++
	if w.seen%ctxCheckEvery == 0 {
		return w.ctx.Err()
	}
	return nil
}

func (w *yamlWalker) value(n *yaml.Node) (any, error) {
	if err := w.visit(); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return w.value(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, &YAMLError{n.Line, fmt.Sprintf("unknown anchor %q referenced", n.Value)}
		}
		return w.value(n.Alias)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, err := w.value(e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		return w.mapping(n)
	}
	return nil, &YAMLError{n.Line, fmt.Sprintf("unexpected node kind %d", n.Kind)}
}

// mapping decodes a mapping node: explicit keys first (a duplicate is an
// error), then the merged mappings' keys that are not set yet.
func (w *yamlWalker) mapping(n *yaml.Node) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	line := make(map[string]int, len(n.Content)/2)
	var merges [][2]*yaml.Node // merge key, value
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, [2]*yaml.Node{k, v})
			continue
		}
		key, err := w.key(k)
		if err != nil {
			return nil, err
		}
		if at, dup := line[key]; dup {
			return nil, &YAMLError{k.Line, fmt.Sprintf("mapping key %q already defined at line %d", key, at)}
		}
		line[key] = k.Line
		val, err := w.value(v)
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	for _, m := range merges {
		if err := w.merge(out, m[0].Line, m[1]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// merge adds to out the keys of the mapping (or each mapping of the
// sequence) m that out does not have yet; line is the merge key's.
func (w *yamlWalker) merge(out map[string]any, line int, m *yaml.Node) error {
	for m.Kind == yaml.AliasNode && m.Alias != nil {
		if err := w.visit(); err != nil {
			return err
		}
		m = m.Alias
	}
	var maps []*yaml.Node
	switch m.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{m}
	case yaml.SequenceNode:
		for _, e := range m.Content {
			for e.Kind == yaml.AliasNode && e.Alias != nil {
				e = e.Alias
			}
			if e.Kind != yaml.MappingNode {
				return &YAMLError{line, "map merge requires map or sequence of maps as the value"}
			}
			maps = append(maps, e)
		}
	default:
		return &YAMLError{line, "map merge requires map or sequence of maps as the value"}
	}
	for _, mm := range maps {
		v, err := w.mapping(mm)
		if err != nil {
			return err
		}
		for k, e := range v {
			if _, ok := out[k]; !ok {
				out[k] = e
			}
		}
	}
	return nil
}

// key returns a mapping key as a string: a string key as written, any
// other scalar (or a collection) with fmt.Sprint of its value.
func (w *yamlWalker) key(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!str" {
		if err := w.visit(); err != nil {
			return "", err
		}
		return k.Value, nil
	}
	v, err := w.value(k)
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// scalar resolves one scalar node as yaml.v3 does: a string as written,
// anything else (int, float, bool, null, timestamp, binary) through
// yaml.v3's own resolution.
func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str":
		return n.Value, nil
	case "!!null":
		return nil, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, &YAMLError{n.Line, strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	return v, nil
}
