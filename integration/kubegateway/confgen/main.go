// Command confgen turns the HTTP test cases of the Gateway API
// conformance suite (sigs.k8s.io/gateway-api/conformance, tests/*.go and
// their manifests) into data the conformance runner of package kubegateway
// reads: for each test, its short name, features, manifests, and every
// http.ExpectedResponse literal (request, expected backend request,
// response, redirect, backend, namespace, mirrors) evaluated to JSON. A
// literal that uses something confgen cannot evaluate is recorded with
// the reason, and the runner reports it as not run.
//
// Usage (from the repository root):
//
//	go run ./integration/kubegateway/confgen -src "$(go env GOMODCACHE)/sigs.k8s.io/gateway-api/conformance@v1.6.3" -out integration/kubegateway/testdata/conformance
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Case is one http.ExpectedResponse.
type Case struct {
	Request         map[string]any `json:"request,omitempty"`
	ExpectedRequest map[string]any `json:"expectedRequest,omitempty"`
	RedirectRequest map[string]any `json:"redirectRequest,omitempty"`
	Response        map[string]any `json:"response,omitempty"`
	// BackendSetResponseHeaders are sent to the echo backend in
	// X-Echo-Set-Header ("name:value,..."), which it answers with.
	BackendSetResponseHeaders map[string]any `json:"backendSetResponseHeaders,omitempty"`
	Backend                   string         `json:"backend,omitempty"`
	Namespace                 string         `json:"namespace,omitempty"`
	MirroredTo                []any          `json:"mirroredTo,omitempty"`
	TestCaseName              string         `json:"testCaseName,omitempty"`
	ServerName                string         `json:"serverName,omitempty"`
	// Line is the literal's line in File.
	Line int `json:"line"`
	// Unsupported says why the literal could not be evaluated.
	Unsupported string `json:"unsupported,omitempty"`
}

// Test is one conformance test.
type Test struct {
	ShortName string   `json:"shortName"`
	File      string   `json:"file"`
	Features  []string `json:"features"`
	Manifests []string `json:"manifests"`
	// Gateways are the Gateways the test's code names, in order.
	Gateways []string `json:"gateways"`
	Cases    []Case   `json:"cases"`
}

// constants of the conformance suite package (utils/suite).
var suiteConsts = map[string]string{
	"InfrastructureNamespace":   "gateway-conformance-infra",
	"AppBackendNamespace":       "gateway-conformance-app-backend",
	"WebBackendNamespace":       "gateway-conformance-web-backend",
	"MeshNamespace":             "gateway-conformance-mesh",
	"InfraBackendServiceNameV1": "infra-backend-v1",
	"InfraBackendServiceNameV2": "infra-backend-v2",
	"InfraBackendServiceNameV3": "infra-backend-v3",
	"AppBackendServiceNameV1":   "app-backend-v1",
	"AppBackendServiceNameV2":   "app-backend-v2",
	"WebBackendServiceName":     "web-backend",
}

func main() {
	src := flag.String("src", "", "the conformance module directory")
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "confgen:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	files, err := filepath.Glob(filepath.Join(src, "tests", "httproute-*.go"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "manifests"), 0o755); err != nil {
		return err
	}
	var tests []Test
	manifests := map[string]bool{"base/manifests.yaml": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ts, err := parseFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, t := range ts {
			for _, m := range t.Manifests {
				manifests[m] = true
			}
		}
		tests = append(tests, ts...)
	}
	for m := range manifests {
		b, err := os.ReadFile(filepath.Join(src, m))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "manifests", strings.ReplaceAll(m, "/", "_")), b, 0o644); err != nil {
			return err
		}
	}
	slices.SortFunc(tests, func(a, b Test) int { return strings.Compare(a.ShortName, b.ShortName) })
	b, err := json.MarshalIndent(tests, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "tests.json"), append(b, '\n'), 0o644)
}

// parseFile finds the ConformanceTest literals of one file.
func parseFile(path string) ([]Test, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	var out []Test
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok || typeName(cl.Type) != "suite.ConformanceTest" && typeName(cl.Type) != "confsuite.ConformanceTest" {
			return true
		}
		t := Test{File: filepath.Base(path)}
		var body *ast.BlockStmt
		for _, e := range cl.Elts {
			kv := e.(*ast.KeyValueExpr)
			switch kv.Key.(*ast.Ident).Name {
			case "ShortName":
				t.ShortName, _ = strconv.Unquote(kv.Value.(*ast.BasicLit).Value)
			case "Features":
				for _, fe := range kv.Value.(*ast.CompositeLit).Elts {
					t.Features = append(t.Features, strings.TrimPrefix(lastName(fe), "Support"))
				}
			case "Manifests":
				for _, m := range kv.Value.(*ast.CompositeLit).Elts {
					s, _ := strconv.Unquote(m.(*ast.BasicLit).Value)
					t.Manifests = append(t.Manifests, s)
				}
			case "Test":
				switch fn := kv.Value.(type) {
				case *ast.FuncLit:
					body = fn.Body
				default: // a named function of the file
					for _, d := range f.Decls {
						if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == lastName(fn) {
							body = fd.Body
						}
					}
				}
			}
		}
		if body != nil {
			ev := &evaluator{vars: map[string]any{}, fset: fset}
			t.Gateways, t.Cases = ev.walk(body)
		}
		out = append(out, t)
		return false
	})
	return out, nil
}

func typeName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return typeName(x.X) + "." + x.Sel.Name
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return "*" + typeName(x.X)
	case *ast.ArrayType:
		return "[]" + typeName(x.Elt)
	case *ast.MapType:
		return "map[" + typeName(x.Key) + "]" + typeName(x.Value)
	}
	return fmt.Sprintf("%T", e)
}

func lastName(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		return s.Sel.Name
	}
	if i, ok := e.(*ast.Ident); ok {
		return i.Name
	}
	return ""
}
