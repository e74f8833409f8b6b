package node

import (
	"fmt"
	"strings"
)

// Node is one segment of a key tree. Children are matched
// case-insensitively and keep the spelling of the first key that created
// them.
type Node struct {
	// Name is the segment as written ("routers", "web", "0").
	Name string
	// Key is the full key as the user wrote it: the label
	// ("traefik.http.routers.web.rule"), the option path of a file
	// ("entryPoints.web.address"), the flag or the environment variable.
	// Empty on the inner nodes of flat keys, which nobody wrote as such.
	Key string
	// Where is the place the key was written, for messages: "traefik.yml:3",
	// "flags", "environment". Empty for labels (their Key says it).
	Where string
	// Value is the node's value, when HasValue.
	Value    string
	HasValue bool
	// List marks the children of a sequence written as one (a YAML or TOML
	// list): decoding a layer over an earlier one replaces the list
	// instead of merging it element by element.
	List     bool
	Children []*Node
	byLower  map[string]*Node
}

// Child returns the child named name (case-insensitively), adding it when
// there is none.
func (n *Node) Child(name string) *Node {
	l := strings.ToLower(name)
	if c := n.byLower[l]; c != nil {
		return c
	}
	c := &Node{Name: name}
	if n.byLower == nil {
		n.byLower = map[string]*Node{}
	}
	n.byLower[l] = c
	n.Children = append(n.Children, c)
	return c
}

// Get returns the child named name (case-insensitively), or nil.
func (n *Node) Get(name string) *Node { return n.byLower[strings.ToLower(name)] }

// Keys returns every full key set on n or below it, in tree order.
func (n *Node) Keys() []string {
	var out []string
	if n.HasValue {
		out = append(out, n.Key)
	}
	for _, c := range n.Children {
		out = append(out, c.Keys()...)
	}
	return out
}

// Leaves returns the nodes under n (n included) that carry a value or
// have no children, in tree order.
func (n *Node) Leaves() []*Node {
	if len(n.Children) == 0 {
		return []*Node{n}
	}
	var out []*Node
	if n.HasValue {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, c.Leaves()...)
	}
	return out
}

// SplitKey splits "a.b[0].c" into a, b, 0, c. An index must be a
// non-negative decimal number (IsIndex); no segment may be empty.
func SplitKey(key string) ([]string, error) {
	var segs []string
	for seg := range strings.SplitSeq(key, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		if name == "" {
			return nil, fmt.Errorf("empty segment in %q", key)
		}
		segs = append(segs, name)
		for hasIdx {
			var i string
			i, idx, _ = strings.Cut(idx, "]")
			if !IsIndex(i) {
				return nil, fmt.Errorf("bad index [%s] in segment %q: want a number", i, seg)
			}
			segs = append(segs, i)
			if idx == "" {
				break
			}
			if !strings.HasPrefix(idx, "[") {
				return nil, fmt.Errorf("bad index syntax in segment %q", seg)
			}
			idx = idx[1:]
		}
	}
	return segs, nil
}

// IsIndex reports whether s is an array index: 1 to 6 decimal digits.
func IsIndex(s string) bool {
	if s == "" || len(s) > 6 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
