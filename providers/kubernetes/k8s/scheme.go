package k8s

import (
	"fmt"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	netv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// groupVersions are the API group versions whose kinds Gantry reads or
// writes (see kinds.go): the minimal scheme registers these and nothing
// else, and a Client has one REST client for each.
var groupVersions = []struct {
	gv      schema.GroupVersion
	install func(*runtime.Scheme) error
}{
	{corev1.SchemeGroupVersion, corev1.AddToScheme},
	{discoveryv1.SchemeGroupVersion, discoveryv1.AddToScheme},
	{netv1.SchemeGroupVersion, netv1.AddToScheme},
	{coordinationv1.SchemeGroupVersion, coordinationv1.AddToScheme},
	{gwv1.SchemeGroupVersion, gwv1.Install},
}

// codecs is the minimal scheme with its serializers and parameter codec.
type codecs struct {
	scheme  *runtime.Scheme
	factory serializer.CodecFactory
	params  runtime.ParameterCodec
}

// minimalScheme builds, on first use, the scheme of groupVersions plus
// the unversioned meta types (Status, APIResourceList, WatchEvent, list
// options). It stands in for client-go's kubernetes/scheme, whose
// package initialisation registers every built-in API group (some 14 MB
// of a process that configures no Kubernetes provider at all). The error
// names the group version that failed to register.
var minimalScheme = sync.OnceValues(func() (*codecs, error) {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, g := range groupVersions {
		if err := g.install(s); err != nil {
			return nil, fmt.Errorf("kubernetes scheme: register %s: %w", g.gv, err)
		}
	}
	return &codecs{scheme: s, factory: serializer.NewCodecFactory(s), params: runtime.NewParameterCodec(s)}, nil
})
