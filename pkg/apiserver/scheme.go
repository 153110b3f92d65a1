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

// withoutProtobuf serves a group's objects as JSON and YAML only. The types have no protobuf
// marshallers, so offering protobuf would turn `Accept: protobuf, json` into a 406; without
// it such a client gets JSON, exactly as from a CustomResourceDefinition.
type withoutProtobuf struct {
	runtime.NegotiatedSerializer
}

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (s withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	var infos []runtime.SerializerInfo
	for _, info := range s.NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			infos = append(infos, info)
		}
	}
	return infos
}
