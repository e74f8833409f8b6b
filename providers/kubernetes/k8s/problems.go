package k8s

import "github.com/gantry-proxy/gantry/providers"

// ObjectProblem is a Problem of provider about field (a JSON path such as
// "spec.rules[0].http.paths[1].backend.service.port", or "" for the
// whole object) of the object kind ns/name: Source reads
// "Ingress default/web spec.rules[0].host" (cluster-scoped objects: ns
// ""). objects are what it disabled, as in Problem.Objects.
func ObjectProblem(provider string, sev providers.Severity, kind, ns, name, field, msg string, objects ...string) providers.Problem {
	src := kind + " "
	if ns != "" {
		src += ns + "/"
	}
	src += name
	if field != "" {
		src += " " + field
	}
	return providers.Problem{Provider: provider, Source: src, Objects: objects, Message: msg, Severity: sev}
}
