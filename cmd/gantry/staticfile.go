package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-proxy/gantry/config"
	yaml "go.yaml.in/yaml/v3"
)

// maxStaticFileSize bounds the static configuration file (bytes): a static
// configuration is a few KiB; a file edited or replaced by mistake (a log,
// a dump) is refused by name before it is parsed, which for 22 MB of YAML
// took seconds and hundreds of MB — also at a live reload.
const maxStaticFileSize = 4 << 20

// readConfigFile reads a YAML or TOML file (by extension; YAML otherwise)
// into a layer whose every node names the file and the line of its key
// ("traefik.yml:3"; YAML and TOML). Syntax errors name the file and the
// line. As in Traefik, a key with no value (YAML null) is left out.
func readConfigFile(name string) (*layer, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read configuration file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxStaticFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read configuration file: %w", err)
	}
	if len(b) > maxStaticFileSize {
		return nil, fmt.Errorf("configuration file %s: larger than %d MiB; a static configuration is a few KiB", name, maxStaticFileSize>>20)
	}
	format, lines := config.YAML, yamlLines
	if strings.EqualFold(filepath.Ext(name), ".toml") {
		format, lines = config.TOML, tomlLines
	}
	v, err := config.DecodeGeneric(context.Background(), b, format)
	if err != nil {
		return nil, fmt.Errorf("configuration file %s: %w", name, err)
	}
	l := newLayer("file "+name, indexKey)
	if v == nil {
		return l, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("configuration file %s: the top level must be a mapping of options", name)
	}
	at := lines(b)
	where := func(p []string) string {
		for i := len(p); i > 0; i-- {
			if n, ok := at[strings.ToLower(indexKey(p[:i]))]; ok {
				return name + ":" + strconv.Itoa(n)
			}
		}
		return name
	}
	addGeneric(l, nil, m, at, where)
	return l, nil
}

// addGeneric adds the generic value v (YAML or TOML decoded) at path,
// mappings in the order their keys appear in the file.
func addGeneric(l *layer, path []string, v any, at map[string]int, where func([]string) string) {
	child := func(seg string) []string { return append(slices.Clone(path), seg) }
	switch x := v.(type) {
	case nil:
		// left out, as by Traefik's file loader
	case map[string]any:
		keys := slices.SortedFunc(maps.Keys(x), func(a, b string) int {
			la, lb := lineOf(at, child(a)), lineOf(at, child(b))
			return cmp.Or(cmp.Compare(la, lb), strings.Compare(a, b))
		})
		if len(path) > 0 {
			l.add(path, "", false, where)
		}
		for _, k := range keys {
			addGeneric(l, child(k), x[k], at, where)
		}
	case []map[string]any: // TOML arrays of tables
		l.add(path, "", false, where)
		for i, e := range x {
			addGeneric(l, child(strconv.Itoa(i)), e, at, where)
		}
	case []any:
		l.add(path, "", false, where)
		for i, e := range x {
			addGeneric(l, child(strconv.Itoa(i)), e, at, where)
		}
	default:
		l.add(path, scalarString(x), true, where)
	}
}

func lineOf(at map[string]int, p []string) int {
	if n, ok := at[strings.ToLower(indexKey(p))]; ok {
		return n
	}
	return 1 << 30
}

// scalarString writes a YAML or TOML scalar as the string the decoder
// parses: numbers in decimal, booleans as true/false.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// yamlLines maps each key path of a YAML document (lower-cased,
// "a.b[0].c") to the line it is written on.
func yamlLines(b []byte) map[string]int {
	out := map[string]int{}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := append(slices.Clone(path), n.Content[i].Value)
				k := strings.ToLower(indexKey(p))
				if _, ok := out[k]; !ok {
					out[k] = n.Content[i].Line
				}
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				p := append(slices.Clone(path), strconv.Itoa(i))
				out[strings.ToLower(indexKey(p))] = e.Line
				walk(e, p)
			}
		}
	}
	walk(doc.Content[0], nil)
	return out
}

var (
	tomlArrayTable = regexp.MustCompile(`^\s*\[\[\s*([^\]]+?)\s*\]\]`)
	tomlTable      = regexp.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]`)
	tomlKey        = regexp.MustCompile(`^\s*([A-Za-z0-9_\-."' ]+?)\s*=`)
)

// tomlLines maps each key path of a TOML document (lower-cased,
// "a.b[0].c") to the line it is first written on: table headers, keys
// (dotted keys too) and their parents. Keys inside inline tables get
// their table's line.
func tomlLines(b []byte) map[string]int {
	out := map[string]int{}
	record := func(p []string, line int) {
		for i := 1; i <= len(p); i++ {
			k := strings.ToLower(indexKey(p[:i]))
			if _, ok := out[k]; !ok {
				out[k] = line
			}
		}
	}
	var table []string
	arrays := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxStaticFileSize)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if m := tomlArrayTable.FindStringSubmatch(text); m != nil {
			base := tomlPath(m[1])
			k := strings.ToLower(strings.Join(base, "."))
			table = append(base, strconv.Itoa(arrays[k]))
			arrays[k]++
			record(table, line)
		} else if m := tomlTable.FindStringSubmatch(text); m != nil {
			table = tomlPath(m[1])
			record(table, line)
		} else if m := tomlKey.FindStringSubmatch(text); m != nil {
			record(append(slices.Clone(table), tomlPath(m[1])...), line)
		}
	}
	return out
}

// tomlPath splits a TOML key ("a.b", `"a.b".c`) into its segments.
func tomlPath(key string) []string {
	var out []string
	var cur strings.Builder
	quote := byte(0)
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
		case c == '.':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}
