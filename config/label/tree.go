package label

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// node is one segment of the key tree. Children are matched
// case-insensitively and keep the spelling of the first key (in byte order)
// that created them.
type node struct {
	name     string
	key      string // full key of the value set on this node, as written
	value    string
	hasValue bool
	children []*node
	byLower  map[string]*node
}

func (n *node) child(name string) *node {
	l := strings.ToLower(name)
	if c := n.byLower[l]; c != nil {
		return c
	}
	c := &node{name: name}
	if n.byLower == nil {
		n.byLower = map[string]*node{}
	}
	n.byLower[l] = c
	n.children = append(n.children, c)
	return c
}

func (n *node) get(name string) *node { return n.byLower[strings.ToLower(name)] }

// keys returns every full key set on n or below it, in tree order.
func (n *node) keys() []string {
	var out []string
	if n.hasValue {
		out = append(out, n.key)
	}
	for _, c := range n.children {
		out = append(out, c.keys()...)
	}
	return out
}

// splitKey splits "a.b[0].c" into a, b, 0, c. An index must be a
// non-negative decimal number.
func splitKey(rest string) ([]string, error) {
	var segs []string
	for seg := range strings.SplitSeq(rest, ".") {
		name, idx, hasIdx := strings.Cut(seg, "[")
		if name == "" {
			return nil, fmt.Errorf("empty segment in %q", rest)
		}
		segs = append(segs, name)
		for hasIdx {
			var i string
			i, idx, _ = strings.Cut(idx, "]")
			if !isIndex(i) {
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

func isIndex(s string) bool {
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

// buildTree parses every key under one of prefixes into a tree. Keys are
// visited in byte order so that spellings and errors are deterministic.
func buildTree(labels map[string]string, prefixes []string) (*node, []KeyError) {
	root := &node{}
	var errs []KeyError
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		var rest string
		ok := false
		for _, p := range prefixes {
			if rest, ok = cutPrefixFold(k, p+"."); ok {
				break
			}
		}
		if !ok {
			continue
		}
		if n := max(len(k), len(labels[k])); n > MaxValueBytes {
			what, obj := "value", objectOf(rest)
			if len(k) == n {
				what, obj = "key", "" // nothing of it is decoded
			}
			errs = append(errs, KeyError{Key: truncKey(k), Object: obj,
				Err: fmt.Errorf("%w: the %s is %d bytes, over %d", ErrTooLarge, what, n, MaxValueBytes)})
			continue
		}
		segs, err := splitKey(rest)
		if err != nil {
			errs = append(errs, KeyError{Key: k, Object: objectOf(rest), Err: err})
			continue
		}
		if slices.Contains(providerRoots, strings.ToLower(segs[0])) {
			continue // read with ProviderKeys
		}
		n := root
		for _, s := range segs {
			n = n.child(s)
		}
		v := labels[k]
		if n.hasValue && n.value != v {
			errs = append(errs, KeyError{Key: k, Object: objectOf(rest),
				Err: fmt.Errorf("conflicts with %s=%q (keys are case-insensitive and prefixes are merged)", n.key, n.value)})
			continue
		}
		if !n.hasValue {
			n.key, n.value, n.hasValue = k, v, true
		}
	}
	return root, errs
}

// overTotal reports labels under prefixes whose keys and values add up to
// more than MaxTotalBytes, as a KeyError naming the largest one.
func overTotal(labels map[string]string, prefixes []string) (KeyError, bool) {
	total, largest, size := 0, "", -1
	for k, v := range labels {
		for _, p := range prefixes {
			if _, ok := cutPrefixFold(k, p+"."); ok {
				n := len(k) + len(v)
				total += n
				if n > size || (n == size && k < largest) {
					largest, size = k, n
				}
				break
			}
		}
	}
	if total <= MaxTotalBytes {
		return KeyError{}, false
	}
	return KeyError{Key: truncKey(largest), Err: fmt.Errorf("%w: the keys and values add up to %d bytes, over %d (the largest: %d bytes)",
		ErrTotalTooLarge, total, MaxTotalBytes, size)}, true
}

// maxKeyShown bounds a key quoted in a KeyError: a key over the limit is
// shown by its start.
const maxKeyShown = 256

func truncKey(k string) string {
	if len(k) <= maxKeyShown {
		return k
	}
	return k[:maxKeyShown] + fmt.Sprintf("… (%d bytes)", len(k))
}

// objectOf names the object a key without prefix belongs to, for errors
// found before the tree exists: "router web" for "http.routers.web.rule".
func objectOf(rest string) string {
	segs := strings.Split(rest, ".")
	if len(segs) < 3 {
		return ""
	}
	name, _, _ := strings.Cut(segs[2], "[")
	switch strings.ToLower(segs[0] + "." + segs[1]) {
	case "http.routers":
		return "router " + name
	case "http.services":
		return "service " + name
	case "http.middlewares":
		return "middleware " + name
	case "http.serverstransports":
		return "serversTransport " + name
	case "tls.stores":
		return "tls store " + name
	case "tls.options":
		return "tls options " + name
	}
	return ""
}
