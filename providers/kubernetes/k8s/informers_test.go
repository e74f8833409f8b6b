package k8s

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// fakeAPI answers the requests the minimal client makes: lists of
// Services (JSON, with managedFields), of Gateways and of a custom
// resource, discovery of gateway.networking.k8s.io/v1, a 404 for other
// group versions, and watches that stay open without events. It records
// the label selectors of the lists.
func fakeAPI(t *testing.T) (*httptest.Server, chan string) {
	selectors := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("watch") == "true" {
			if q.Get("sendInitialEvents") == "true" {
				http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":400}`, http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/apps/services":
			selectors <- q.Get("labelSelector")
			_, _ = w.Write([]byte(`{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[
				{"metadata":{"name":"web","namespace":"apps","resourceVersion":"7","managedFields":[{"manager":"kubectl"}]},
				 "spec":{"clusterIP":"10.0.0.7","ports":[{"name":"http","port":80}]}}]}`))
		case "/apis/gateway.networking.k8s.io/v1/gateways":
			_, _ = w.Write([]byte(`{"kind":"GatewayList","apiVersion":"gateway.networking.k8s.io/v1","metadata":{"resourceVersion":"3"},"items":[
				{"metadata":{"name":"gw","namespace":"apps","resourceVersion":"3"},"spec":{"gatewayClassName":"gantry","listeners":[]}}]}`))
		case "/apis/example.com/v1/namespaces/apps/widgets":
			selectors <- q.Get("labelSelector")
			_, _ = w.Write([]byte(`{"kind":"WidgetList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"5"},"items":[
				{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w1","namespace":"apps","resourceVersion":"5","managedFields":[{"manager":"kubectl"}]}}]}`))
		case "/apis/gateway.networking.k8s.io/v1":
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"gateway.networking.k8s.io/v1","resources":[{"name":"gateways","namespaced":true,"kind":"Gateway","verbs":["list"]}]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, selectors
}

// TestInformersDecodeWithMinimalScheme runs informers of a builtin kind,
// a Gateway API kind and a custom resource against a fake API server: each
// syncs, caches typed (or unstructured) objects without managedFields,
// and lists with the factory's tweak; discovery reads a served group
// version and reports a missing one as NotFound. Shutdown waits for the
// informers.
func TestInformersDecodeWithMinimalScheme(t *testing.T) {
	srv, selectors := fakeAPI(t)
	c, err := NewClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ns := NewInformers(c, "apps", func(o *metav1.ListOptions) { o.LabelSelector = "team=web" })
	all := NewInformers(c, "", nil)
	svcs := Services.Informer(ns)
	if Services.Informer(ns) != svcs {
		t.Error("a second Informer call made a second informer")
	}
	gws := Gateways.Informer(all)
	dc, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	widgets := ns.Dynamic(dc, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})

	stop := make(chan struct{})
	ns.Start(stop)
	all.Start(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), svcs.HasSynced, gws.HasSynced, widgets.HasSynced) {
		t.Fatal("caches did not sync")
	}
	svc, ok := NewLister[*corev1.Service](svcs).Get("apps", "web")
	if !ok || svc.Spec.ClusterIP != "10.0.0.7" || svc.ManagedFields != nil {
		t.Errorf("service: %+v %v", svc, ok)
	}
	if gw, ok := NewLister[*gwv1.Gateway](gws).Get("apps", "gw"); !ok || gw.Spec.GatewayClassName != "gantry" {
		t.Errorf("gateway: %+v %v", gw, ok)
	}
	if w, ok := NewLister[*unstructured.Unstructured](widgets).Get("apps", "w1"); !ok || w.GetManagedFields() != nil {
		t.Errorf("widget: %+v %v", w, ok)
	}
	for range 2 {
		if sel := <-selectors; sel != "team=web" {
			t.Errorf("list label selector %q, want team=web", sel)
		}
	}

	rl, err := c.ServerResources(ctx, gwv1.SchemeGroupVersion)
	if err != nil || len(rl.APIResources) != 1 || rl.APIResources[0].Name != "gateways" {
		t.Errorf("served gateway API resources: %+v %v", rl, err)
	}
	if _, err := c.ServerResources(ctx, schema.GroupVersion{Group: "traefik.io", Version: "v1alpha1"}); !apierrors.IsNotFound(err) {
		t.Errorf("missing group version: %v, want NotFound", err)
	}

	close(stop)
	done := make(chan struct{})
	go func() {
		ns.Shutdown()
		all.Shutdown()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return after stop closed")
	}
}

// TestTypedClientRequests checks the method, path and body of each
// TypedClient call against what client-go's generated clients send, and
// that the answer decodes into the kind's type.
func TestTypedClientRequests(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+strconv.Itoa(len(body)))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Ingress","apiVersion":"networking.k8s.io/v1","metadata":{"name":"web","namespace":"apps","resourceVersion":"9"}}`))
	}))
	defer srv.Close()
	c, err := NewClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ings := Ingresses.Client(c, "apps")
	ing := &netv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}}
	out, err := ings.UpdateStatus(ctx, ing, metav1.UpdateOptions{})
	if err != nil || out.ResourceVersion != "9" {
		t.Fatalf("UpdateStatus: %+v %v", out, err)
	}
	if _, err := ings.Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Ingresses.Client(c, "apps").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := GatewayClasses.Client(c, "").Create(ctx, &gwv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "gantry"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Builtin kinds are sent as protobuf, custom resources as JSON, as
	// client-go's generated clients send them.
	want := []string{
		`PUT /apis/networking.k8s.io/v1/namespaces/apps/ingresses/web/status application/vnd.kubernetes.protobuf 74`,
		`GET /apis/networking.k8s.io/v1/namespaces/apps/ingresses/web  0`,
		`DELETE /apis/networking.k8s.io/v1/namespaces/apps/ingresses/web application/vnd.kubernetes.protobuf 49`,
		`POST /apis/gateway.networking.k8s.io/v1/gatewayclasses application/json 126`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
