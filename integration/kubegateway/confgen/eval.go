package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// evaluator evaluates the literals of one test function: constants,
// local variables assigned once from them, struct, map and slice literals.
type evaluator struct {
	vars map[string]any
	fset *token.FileSet
}

// walk records local string assignments and collects the Gateways named
// and every http.ExpectedResponse literal, in source order.
func (ev *evaluator) walk(body *ast.BlockStmt) (gateways []string, cases []Case) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if len(x.Lhs) == len(x.Rhs) {
				for i, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						if v, err := ev.eval(x.Rhs[i]); err == nil {
							ev.vars[id.Name] = v
						}
					}
				}
			}
		case *ast.ValueSpec:
			if len(x.Names) == len(x.Values) {
				for i, id := range x.Names {
					if v, err := ev.eval(x.Values[i]); err == nil {
						ev.vars[id.Name] = v
					}
				}
			}
		case *ast.CompositeLit:
			switch tn := typeName(x.Type); tn {
			case "types.NamespacedName":
				v, err := ev.eval(x)
				if m, ok := v.(map[string]any); err == nil && ok {
					if name, ok := m["Name"].(string); ok && isGatewayName(name) {
						gateways = append(gateways, name)
					}
				}
			case "http.ExpectedResponse":
				cases = append(cases, ev.expected(x))
				return false
			case "[]http.ExpectedResponse":
				for _, e := range x.Elts {
					if el, ok := e.(*ast.CompositeLit); ok {
						cases = append(cases, ev.expected(el))
					}
				}
				return false
			}
		}
		return true
	})
	return gateways, cases
}

// isGatewayName reports whether name is one of the Gateways the base and
// test manifests declare (their names, not routes').
func isGatewayName(n string) bool {
	return strings.Contains(n, "gateway") || n == "same-namespace" || n == "all-namespaces" || n == "backend-namespaces" ||
		strings.HasPrefix(n, "same-namespace-with")
}

func (ev *evaluator) expected(cl *ast.CompositeLit) Case {
	line := ev.fset.Position(cl.Pos()).Line
	v, err := ev.eval(cl)
	if err != nil {
		return Case{Line: line, Unsupported: err.Error()}
	}
	m := v.(map[string]any)
	c := Case{Line: line}
	for k, val := range m {
		switch k {
		case "Request":
			c.Request = val.(map[string]any)
		case "ExpectedRequest":
			c.ExpectedRequest = val.(map[string]any)
		case "RedirectRequest":
			c.RedirectRequest = val.(map[string]any)
		case "Response":
			c.Response = val.(map[string]any)
		case "Backend":
			c.Backend, _ = val.(string)
		case "Namespace":
			c.Namespace, _ = val.(string)
		case "MirroredTo":
			c.MirroredTo, _ = val.([]any)
		case "TestCaseName":
			c.TestCaseName, _ = val.(string)
		case "BackendSetResponseHeaders":
			c.BackendSetResponseHeaders, _ = val.(map[string]any)
		case "ServerName":
			c.ServerName, _ = val.(string)
		default:
			c.Unsupported = "field " + k
		}
	}
	return c
}

var errUnsupported = errors.New("unsupported expression")

func (ev *evaluator) eval(e ast.Expr) (any, error) {
	switch x := e.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			return strconv.Unquote(x.Value)
		case token.INT:
			return strconv.Atoi(x.Value)
		}
	case *ast.Ident:
		switch x.Name {
		case "true":
			return true, nil
		case "false":
			return false, nil
		case "nil":
			return nil, nil
		}
		if v, ok := ev.vars[x.Name]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("%w: variable %s", errUnsupported, x.Name)
	case *ast.SelectorExpr:
		if x.Sel.Name == "H2CPriorKnowledgeProtocol" {
			return "H2C_PRIOR_KNOWLEDGE", nil
		}
		if v, ok := suiteConsts[x.Sel.Name]; ok {
			return v, nil
		}
		if id, ok := x.X.(*ast.Ident); ok && id.Name == "http" && strings.HasPrefix(x.Sel.Name, "Status") {
			if code, ok := httpStatus[x.Sel.Name]; ok {
				return code, nil
			}
		}
		if id, ok := x.X.(*ast.Ident); ok {
			if m, ok := ev.vars[id.Name].(map[string]any); ok {
				if v, ok := m[x.Sel.Name]; ok {
					return v, nil
				}
			}
		}
		return nil, fmt.Errorf("%w: %s", errUnsupported, typeName(x))
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return ev.eval(x.X)
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, err := ev.eval(x.X)
			if err != nil {
				return nil, err
			}
			b, err := ev.eval(x.Y)
			if err != nil {
				return nil, err
			}
			as, ok1 := a.(string)
			bs, ok2 := b.(string)
			if ok1 && ok2 {
				return as + bs, nil
			}
		}
	case *ast.CompositeLit:
		return ev.composite(x)
	case *ast.CallExpr:
		// ptr.To(x) and similar one-argument wrappers.
		if len(x.Args) == 1 && (lastName(x.Fun) == "To" || lastName(x.Fun) == "New") {
			return ev.eval(x.Args[0])
		}
	}
	return nil, fmt.Errorf("%w: %T", errUnsupported, e)
}

func (ev *evaluator) composite(cl *ast.CompositeLit) (any, error) {
	tn := ""
	if cl.Type != nil {
		tn = typeName(cl.Type)
	}
	if strings.HasPrefix(tn, "[]") {
		out := []any{}
		for _, e := range cl.Elts {
			v, err := ev.eval(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	if tn == "" && len(cl.Elts) > 0 {
		if _, kv := cl.Elts[0].(*ast.KeyValueExpr); !kv {
			// An elided slice literal ({"a", "b"} inside a map of slices).
			out := []any{}
			for _, e := range cl.Elts {
				v, err := ev.eval(e)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			return out, nil
		}
	}
	out := map[string]any{}
	for _, e := range cl.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%w: positional literal of %s", errUnsupported, tn)
		}
		var key string
		switch k := kv.Key.(type) {
		case *ast.Ident:
			key = k.Name
		default:
			kvv, err := ev.eval(kv.Key)
			if err != nil {
				return nil, err
			}
			key = fmt.Sprint(kvv)
		}
		v, err := ev.eval(kv.Value)
		if err != nil {
			return nil, err
		}
		// Embedded Request in ExpectedRequest: flatten.
		if key == "Request" && tn == "http.ExpectedRequest" {
			for k2, v2 := range v.(map[string]any) {
				out[k2] = v2
			}
			continue
		}
		out[key] = v
	}
	return out, nil
}

var httpStatus = map[string]int{
	"StatusOK": 200, "StatusNoContent": 204, "StatusMovedPermanently": 301, "StatusFound": 302, "StatusSeeOther": 303,
	"StatusTemporaryRedirect": 307, "StatusPermanentRedirect": 308, "StatusBadRequest": 400, "StatusNotFound": 404,
	"StatusInternalServerError": 500, "StatusBadGateway": 502, "StatusServiceUnavailable": 503, "StatusGatewayTimeout": 504,
	"StatusMisdirectedRequest": 421,
}
