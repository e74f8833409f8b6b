package middleware

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-proxy/gantry/config"
	"github.com/gantry-proxy/gantry/config/label"
	"github.com/gantry-proxy/gantry/providers/consul"
)

// formCase is one middleware written in the three forms a provider reads:
// file YAML (config.Decode), Docker labels / Consul Catalog tags
// (label.Decode) and Consul KV (consul.DecodeKV).
type formCase struct {
	name   string
	yaml   string            // the middleware's body under http.middlewares.m
	labels map[string]string // keys after "traefik.http.middlewares.m."
	kv     map[string]string // keys after "traefik/http/middlewares/m/"
}

var formCases = []formCase{
	{"addPrefix", `{addPrefix: {prefix: /api}}`,
		map[string]string{"addprefix.prefix": "/api"},
		map[string]string{"addPrefix/prefix": "/api"}},
	{"stripPrefix", `{stripPrefix: {prefixes: [/a, /b]}}`,
		map[string]string{"stripprefix.prefixes": "/a,/b"},
		map[string]string{"stripPrefix/prefixes/0": "/a", "stripPrefix/prefixes/1": "/b"}},
	{"stripPrefixRegex", `{stripPrefixRegex: {regex: ["/foo/[a-z]+"]}}`,
		map[string]string{"stripprefixregex.regex": "/foo/[a-z]+"},
		map[string]string{"stripPrefixRegex/regex/0": "/foo/[a-z]+"}},
	{"replacePath", `{replacePath: {path: /fixed}}`,
		map[string]string{"replacepath.path": "/fixed"},
		map[string]string{"replacePath/path": "/fixed"}},
	{"replacePathRegex", `{replacePathRegex: {regex: "^/old/(.*)", replacement: "/new/$1"}}`,
		map[string]string{"replacepathregex.regex": "^/old/(.*)", "replacepathregex.replacement": "/new/$1"},
		map[string]string{"replacePathRegex/regex": "^/old/(.*)", "replacePathRegex/replacement": "/new/$1"}},
	{"chain", `{chain: {middlewares: [a, b@file]}}`,
		map[string]string{"chain.middlewares": "a,b@file"},
		map[string]string{"chain/middlewares/0": "a", "chain/middlewares/1": "b@file"}},
	{"ipAllowList", `{ipAllowList: {sourceRange: [10.0.0.0/8, 192.0.2.1], rejectStatusCode: 404, ipStrategy: {depth: 2, excludedIPs: [10.0.0.1], ipv6Subnet: 64}}}`,
		map[string]string{"ipallowlist.sourcerange": "10.0.0.0/8, 192.0.2.1", "ipallowlist.rejectstatuscode": "404", "ipallowlist.ipstrategy.depth": "2", "ipallowlist.ipstrategy.excludedips": "10.0.0.1", "ipallowlist.ipstrategy.ipv6subnet": "64"},
		map[string]string{"ipAllowList/sourceRange/0": "10.0.0.0/8", "ipAllowList/sourceRange/1": "192.0.2.1", "ipAllowList/rejectStatusCode": "404", "ipAllowList/ipStrategy/depth": "2", "ipAllowList/ipStrategy/excludedIPs/0": "10.0.0.1", "ipAllowList/ipStrategy/ipv6Subnet": "64"}},
	{"headers", `{headers: {customRequestHeaders: {X-Env: prod}, customResponseHeaders: {X-Std: "1"}, accessControlAllowMethods: [GET, PUT], accessControlMaxAge: 100, stsSeconds: 60, frameDeny: true, sslProxyHeaders: {X-Forwarded-Proto: https}}}`,
		map[string]string{"headers.customrequestheaders.X-Env": "prod", "headers.customresponseheaders.X-Std": "1", "headers.accesscontrolallowmethods": "GET,PUT", "headers.accesscontrolmaxage": "100", "headers.stsseconds": "60", "headers.framedeny": "true", "headers.sslproxyheaders.X-Forwarded-Proto": "https"},
		map[string]string{"headers/customRequestHeaders/X-Env": "prod", "headers/customResponseHeaders/X-Std": "1", "headers/accessControlAllowMethods/0": "GET", "headers/accessControlAllowMethods/1": "PUT", "headers/accessControlMaxAge": "100", "headers/stsSeconds": "60", "headers/frameDeny": "true", "headers/sslProxyHeaders/X-Forwarded-Proto": "https"}},
	{"errors", `{errors: {status: ["500-599", "404"], service: pages@file, query: "/{status}.html"}}`,
		map[string]string{"errors.status": "500-599,404", "errors.service": "pages@file", "errors.query": "/{status}.html"},
		map[string]string{"errors/status/0": "500-599", "errors/status/1": "404", "errors/service": "pages@file", "errors/query": "/{status}.html"}},
	{"rateLimit", `{rateLimit: {average: 100, period: 1m, burst: 50, sourceCriterion: {requestHeaderName: X-Key}}}`,
		map[string]string{"ratelimit.average": "100", "ratelimit.period": "1m", "ratelimit.burst": "50", "ratelimit.sourcecriterion.requestheadername": "X-Key"},
		map[string]string{"rateLimit/average": "100", "rateLimit/period": "1m", "rateLimit/burst": "50", "rateLimit/sourceCriterion/requestHeaderName": "X-Key"}},
	{"redirectRegex", `{redirectRegex: {regex: "^http://(.*)", replacement: "https://$1", permanent: true}}`,
		map[string]string{"redirectregex.regex": "^http://(.*)", "redirectregex.replacement": "https://$1", "redirectregex.permanent": "true"},
		map[string]string{"redirectRegex/regex": "^http://(.*)", "redirectRegex/replacement": "https://$1", "redirectRegex/permanent": "true"}},
	{"redirectScheme", `{redirectScheme: {scheme: https, port: "8443", permanent: true}}`,
		map[string]string{"redirectscheme.scheme": "https", "redirectscheme.port": "8443", "redirectscheme.permanent": "true"},
		map[string]string{"redirectScheme/scheme": "https", "redirectScheme/port": "8443", "redirectScheme/permanent": "true"}},
	{"basicAuth", `{basicAuth: {users: ["u:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM=", "v:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM="], realm: r, headerField: X-User, removeHeader: true}}`,
		map[string]string{"basicauth.users": "u:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM=,v:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM=", "basicauth.realm": "r", "basicauth.headerfield": "X-User", "basicauth.removeheader": "true"},
		map[string]string{"basicAuth/users/0": "u:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM=", "basicAuth/users/1": "v:{SHA}hWK/nKq6ApDFwwVB9GNyLi7WBzM=", "basicAuth/realm": "r", "basicAuth/headerField": "X-User", "basicAuth/removeHeader": "true"}},
	{"digestAuth", `{digestAuth: {users: ["bob:traefik:79efdd7ab3fb860bfa6b1c634e0dcce5"], removeHeader: true}}`,
		map[string]string{"digestauth.users": "bob:traefik:79efdd7ab3fb860bfa6b1c634e0dcce5", "digestauth.removeheader": "true"},
		map[string]string{"digestAuth/users/0": "bob:traefik:79efdd7ab3fb860bfa6b1c634e0dcce5", "digestAuth/removeHeader": "true"}},
	{"forwardAuth", `{forwardAuth: {address: "http://auth:9091/verify", trustForwardHeader: true, authResponseHeaders: [X-User, X-Role], authResponseHeadersRegex: "^X-", authRequestHeaders: [Cookie], addAuthCookiesToResponse: [s], forwardBody: true, maxBodySize: 1024, tls: {insecureSkipVerify: true}}}`,
		map[string]string{"forwardauth.address": "http://auth:9091/verify", "forwardauth.trustforwardheader": "true", "forwardauth.authresponseheaders": "X-User,X-Role", "forwardauth.authresponseheadersregex": "^X-", "forwardauth.authrequestheaders": "Cookie", "forwardauth.addauthcookiestoresponse": "s", "forwardauth.forwardbody": "true", "forwardauth.maxbodysize": "1024", "forwardauth.tls.insecureskipverify": "true"},
		map[string]string{"forwardAuth/address": "http://auth:9091/verify", "forwardAuth/trustForwardHeader": "true", "forwardAuth/authResponseHeaders/0": "X-User", "forwardAuth/authResponseHeaders/1": "X-Role", "forwardAuth/authResponseHeadersRegex": "^X-", "forwardAuth/authRequestHeaders/0": "Cookie", "forwardAuth/addAuthCookiesToResponse/0": "s", "forwardAuth/forwardBody": "true", "forwardAuth/maxBodySize": "1024", "forwardAuth/tls/insecureSkipVerify": "true"}},
	{"inFlightReq", `{inFlightReq: {amount: 10, sourceCriterion: {ipStrategy: {depth: 1}}}}`,
		map[string]string{"inflightreq.amount": "10", "inflightreq.sourcecriterion.ipstrategy.depth": "1"},
		map[string]string{"inFlightReq/amount": "10", "inFlightReq/sourceCriterion/ipStrategy/depth": "1"}},
	{"buffering", `{buffering: {maxRequestBodyBytes: 2000000, memRequestBodyBytes: 1000, maxResponseBodyBytes: 3000, memResponseBodyBytes: 100, retryExpression: "IsNetworkError() && Attempts() < 2"}}`,
		map[string]string{"buffering.maxrequestbodybytes": "2000000", "buffering.memrequestbodybytes": "1000", "buffering.maxresponsebodybytes": "3000", "buffering.memresponsebodybytes": "100", "buffering.retryexpression": "IsNetworkError() && Attempts() < 2"},
		map[string]string{"buffering/maxRequestBodyBytes": "2000000", "buffering/memRequestBodyBytes": "1000", "buffering/maxResponseBodyBytes": "3000", "buffering/memResponseBodyBytes": "100", "buffering/retryExpression": "IsNetworkError() && Attempts() < 2"}},
	{"circuitBreaker", `{circuitBreaker: {expression: "NetworkErrorRatio() > 0.5", checkPeriod: 1s, fallbackDuration: 30s, recoveryDuration: 20s, responseCode: 529}}`,
		map[string]string{"circuitbreaker.expression": "NetworkErrorRatio() > 0.5", "circuitbreaker.checkperiod": "1s", "circuitbreaker.fallbackduration": "30s", "circuitbreaker.recoveryduration": "20", "circuitbreaker.responsecode": "529"},
		map[string]string{"circuitBreaker/expression": "NetworkErrorRatio() > 0.5", "circuitBreaker/checkPeriod": "1s", "circuitBreaker/fallbackDuration": "30s", "circuitBreaker/recoveryDuration": "20s", "circuitBreaker/responseCode": "529"}},
	{"compress", `{compress: {excludedContentTypes: [text/event-stream], minResponseBodyBytes: 2048, encodings: [br, gzip], defaultEncoding: gzip}}`,
		map[string]string{"compress.excludedcontenttypes": "text/event-stream", "compress.minresponsebodybytes": "2048", "compress.encodings": "br,gzip", "compress.defaultencoding": "gzip"},
		map[string]string{"compress/excludedContentTypes/0": "text/event-stream", "compress/minResponseBodyBytes": "2048", "compress/encodings/0": "br", "compress/encodings/1": "gzip", "compress/defaultEncoding": "gzip"}},
	{"compress empty", `{compress: {}}`,
		map[string]string{"compress": "true"},
		map[string]string{"compress": "true"}},
	{"passTLSClientCert", `{passTLSClientCert: {pem: true, info: {notAfter: true, sans: true, subject: {commonName: true}, issuer: {country: true}}}}`,
		map[string]string{"passtlsclientcert.pem": "true", "passtlsclientcert.info.notafter": "true", "passtlsclientcert.info.sans": "true", "passtlsclientcert.info.subject.commonname": "true", "passtlsclientcert.info.issuer.country": "true"},
		map[string]string{"passTLSClientCert/pem": "true", "passTLSClientCert/info/notAfter": "true", "passTLSClientCert/info/sans": "true", "passTLSClientCert/info/subject/commonName": "true", "passTLSClientCert/info/issuer/country": "true"}},
	{"retry", `{retry: {attempts: 4, initialInterval: 100ms}}`,
		map[string]string{"retry.attempts": "4", "retry.initialinterval": "100ms"},
		map[string]string{"retry/attempts": "4", "retry/initialInterval": "100ms"}},
	{"contentType", `{contentType: {autoDetect: true}}`,
		map[string]string{"contenttype.autodetect": "true"},
		map[string]string{"contentType/autoDetect": "true"}},
	{"grpcWeb", `{grpcWeb: {allowOrigins: ["https://a.example", "*"]}}`,
		map[string]string{"grpcweb.alloworigins": "https://a.example,*"},
		map[string]string{"grpcWeb/allowOrigins/0": "https://a.example", "grpcWeb/allowOrigins/1": "*"}},
	{"encodedCharacters", `{encodedCharacters: {allowEncodedSlash: true, allowEncodedHash: true}}`,
		map[string]string{"encodedcharacters.allowencodedslash": "true", "encodedcharacters.allowencodedhash": "true"},
		map[string]string{"encodedCharacters/allowEncodedSlash": "true", "encodedCharacters/allowEncodedHash": "true"}},
}

// For each middleware, the file, label and KV forms decode to the same
// configuration, and that configuration builds.
func TestDecodeFormsAgree(t *testing.T) {
	for _, fc := range formCases {
		t.Run(fc.name, func(t *testing.T) {
			fromFile, err := config.Decode([]byte("http:\n  middlewares:\n    m: "+fc.yaml+"\n"), config.YAML)
			if err != nil {
				t.Fatalf("file form: %v", err)
			}
			labels := map[string]string{}
			for k, v := range fc.labels {
				labels["traefik.http.middlewares.m."+k] = v
			}
			fromLabels, kerrs := label.Decode(labels, "traefik")
			if len(kerrs) > 0 {
				t.Fatalf("label form: %v", kerrs)
			}
			pairs := map[string]string{}
			for k, v := range fc.kv {
				pairs["traefik/http/middlewares/m/"+k] = v
			}
			fromKV, problems := consul.DecodeKV(pairs, "traefik")
			if len(problems) > 0 {
				t.Fatalf("KV form: %v", problems)
			}
			want := fromFile.HTTP.Middlewares["m"]
			if want == nil {
				t.Fatal("file form has no middleware m")
			}
			if d := cmp.Diff(want, fromLabels.HTTP.Middlewares["m"]); d != "" {
				t.Errorf("labels differ from file (-file +labels):\n%s", d)
			}
			if d := cmp.Diff(want, fromKV.HTTP.Middlewares["m"]); d != "" {
				t.Errorf("KV differs from file (-file +kv):\n%s", d)
			}
			res := &fakeResolver{
				mws: map[string]*config.Middleware{
					"a":      {AddPrefix: &config.AddPrefix{Prefix: "/a"}},
					"b@file": {AddPrefix: &config.AddPrefix{Prefix: "/b"}},
					"m":      want,
				},
				services: map[string]http.Handler{"pages@file": http.NotFoundHandler()},
				built:    map[string]Middleware{}, building: map[string]bool{},
			}
			if _, err := res.Middleware(context.Background(), "m"); err != nil {
				t.Errorf("build: %v", err)
			}
		})
	}
}

// An unknown option is rejected in every form, naming the option, and in
// labels and KV it leaves out only the middleware it belongs to.
func TestDecodeFormsRejectUnknownOption(t *testing.T) {
	if _, err := config.Decode([]byte("http:\n  middlewares:\n    m: {stripPrefix: {prefix: /a}}\n"), config.YAML); err == nil || !strings.Contains(err.Error(), `"prefix"`) {
		t.Errorf("file form: %v", err)
	}
	c, kerrs := label.Decode(map[string]string{
		"traefik.http.middlewares.m.stripprefix.prefix":    "/a",
		"traefik.http.middlewares.ok.stripprefix.prefixes": "/b",
	}, "traefik")
	if len(kerrs) != 1 || kerrs[0].Object != "middleware m" || !strings.Contains(kerrs[0].Key, "stripprefix.prefix") {
		t.Errorf("label form: %v", kerrs)
	}
	if c.HTTP.Middlewares["m"] != nil || c.HTTP.Middlewares["ok"] == nil {
		t.Errorf("label form kept %v", c.HTTP.Middlewares)
	}
	kc, ps := consul.DecodeKV(map[string]string{
		"traefik/http/middlewares/m/stripPrefix/prefix":      "/a",
		"traefik/http/middlewares/ok/stripPrefix/prefixes/0": "/b",
	}, "traefik")
	if len(ps) != 1 || !slices.Contains(ps[0].Objects, "middleware m") || !strings.Contains(ps[0].Source, "stripPrefix/prefix") {
		t.Errorf("KV form: %+v", ps)
	}
	if kc.HTTP.Middlewares["m"] != nil || kc.HTTP.Middlewares["ok"] == nil {
		t.Errorf("KV form kept %v", kc.HTTP.Middlewares)
	}
}
