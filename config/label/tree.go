package label

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-proxy/gantry/config/node"
)

// buildTree parses every key under one of prefixes into a tree. Keys are
// visited in byte order so that spellings and errors are deterministic.
func buildTree(labels map[string]string, prefixes []string) (*node.Node, []KeyError) {
	root := &node.Node{}
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
		segs, err := node.SplitKey(rest)
		if err != nil {
			errs = append(errs, KeyError{Key: k, Object: objectOf(rest), Err: err})
			continue
		}
		if slices.Contains(providerRoots, strings.ToLower(segs[0])) {
			continue // read with ProviderKeys
		}
		n := root
		for _, s := range segs {
			n = n.Child(s)
		}
		v := labels[k]
		if n.HasValue && n.Value != v {
			errs = append(errs, KeyError{Key: k, Object: objectOf(rest),
				Err: fmt.Errorf("conflicts with %s=%q (keys are case-insensitive and prefixes are merged)", n.Key, n.Value)})
			continue
		}
		if !n.HasValue {
			n.Key, n.Value, n.HasValue = k, v, true
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
