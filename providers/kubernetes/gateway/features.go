package gateway

import (
	"slices"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// supportedFeatures are the Gateway API features Gantry implements, as
// named in sigs.k8s.io/gateway-api/pkg/features (v1.6.3); the
// conformance runner's results (README) list what each passes.
var supportedFeatures = []string{
	"Gateway", "GatewayPort8080", "GatewayHTTPListenerIsolation",
	"HTTPRoute", "ReferenceGrant", "GRPCRoute", "TLSRoute",
	"HTTPRouteQueryParamMatching", "HTTPRouteMethodMatching",
	"HTTPRouteResponseHeaderModification", "HTTPRouteBackendRequestHeaderModification",
	"HTTPRoutePortRedirect", "HTTPRouteSchemeRedirect", "HTTPRoutePathRedirect",
	"HTTPRoute303RedirectStatusCode", "HTTPRoute307RedirectStatusCode", "HTTPRoute308RedirectStatusCode",
	"HTTPRouteHostRewrite", "HTTPRoutePathRewrite",
	"HTTPRouteRequestMirror", "HTTPRouteRequestMultipleMirrors", "HTTPRouteRequestPercentageMirror",
	"HTTPRouteRequestTimeout", "HTTPRouteBackendTimeout",
	"HTTPRouteParentRefPort", "HTTPRouteDestinationPortMatching",
	"HTTPRouteBackendProtocolH2C", "HTTPRouteBackendProtocolWebSocket",
	"HTTPRouteNamedRouteRule", "HTTPRouteCORS", "GRPCRouteNamedRouteRule",
	"TLSRouteModeTerminate", "TLSRouteModeMixed",
}

// SupportedFeatures lists the features a GatewayClass's status reports,
// sorted; with the experimental channel TCPRoute and UDPRoute too.
func SupportedFeatures(experimental bool) []gwv1.SupportedFeature {
	names := slices.Clone(supportedFeatures)
	if experimental {
		names = append(names, "TCPRoute", "UDPRoute")
	}
	slices.Sort(names)
	out := make([]gwv1.SupportedFeature, len(names))
	for i, n := range names {
		out[i] = gwv1.SupportedFeature{Name: gwv1.FeatureName(n)}
	}
	return out
}
