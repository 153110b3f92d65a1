package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kcp-setups/apiserver/pkg/apis/operator/install"
)

// NewScheme returns a scheme with the operator.kcp.io group and the meta types every API
// server serves (options, Status, WatchEvent).
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	install.Install(scheme)

	// The unversioned meta types are served by every group; register them once, as the
	// generic API server expects.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
	return scheme
}

// NewCodecs returns the codec factory of a scheme from NewScheme.
func NewCodecs(scheme *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(scheme)
}
