// Package apiservertest decodes and encodes request bodies exactly as the server's handlers
// do, with the server's own scheme and codecs, for tests and fuzz targets that start from the
// bytes a client sends.
package apiservertest

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apiserver"
)

// MediaTypes are the body formats the server accepts for its kinds.
var MediaTypes = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf}

// Kinds are the kinds a body may be posted as: the six stored kinds and the body of the
// kubeconfig subresource.
var Kinds = []string{"RootShard", "Shard", "FrontProxy", "CacheServer", "Kubeconfig", "VirtualWorkspace", "KubeconfigRequest"}

type codecs struct {
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
}

// server builds the scheme once; building it per fuzz iteration would dominate the run.
var server = sync.OnceValue(func() codecs {
	scheme := apiserver.NewScheme()
	return codecs{scheme: scheme, codecs: apiserver.NewCodecs(scheme)}
})

// Scheme is the server's scheme.
func Scheme() *runtime.Scheme { return server().scheme }

// NewInternal returns an empty internal object of kind, as the handler's r.New() does.
func NewInternal(kind string) (runtime.Object, error) {
	return Scheme().New(operator.SchemeGroupVersion.WithKind(kind))
}

// Decode decodes body as the create handler does with the default field validation (Warn):
// the strict serializer of the media type, then defaulting and conversion to the internal
// version, into a new object of kind. A strict decoding error that still yields an object is
// returned as warnings, as the handler does; any other error is the handler's 400.
func Decode(mediaType, kind string, body []byte) (runtime.Object, []string, error) {
	s := server()
	info, ok := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, nil, fmt.Errorf("media type %q is not served", mediaType)
	}
	into, err := NewInternal(kind)
	if err != nil {
		return nil, nil, err
	}
	defaultGVK := operatorv1alpha1.SchemeGroupVersion.WithKind(kind)
	decoder := s.codecs.DecoderToVersion(info.StrictSerializer, schema.GroupVersion{Group: operator.GroupName, Version: runtime.APIVersionInternal})
	obj, _, err := decoder.Decode(body, &defaultGVK, into)
	if err == nil {
		return obj, nil, nil
	}
	if strict, isStrict := runtime.AsStrictDecodingError(err); isStrict && obj != nil {
		var warnings []string
		for _, e := range strict.Errors() {
			warnings = append(warnings, e.Error())
		}
		return obj, warnings, nil
	}
	return nil, nil, err
}

// Encode encodes an internal object as the server answers: v1alpha1 in mediaType.
func Encode(mediaType string, obj runtime.Object) ([]byte, error) {
	s := server()
	info, ok := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return nil, fmt.Errorf("media type %q is not served", mediaType)
	}
	return runtime.Encode(s.codecs.EncoderForVersion(info.Serializer, operatorv1alpha1.SchemeGroupVersion), obj)
}

// Deserialize decodes body into its versioned object, without defaulting or conversion.
func Deserialize(body []byte) (runtime.Object, error) {
	obj, _, err := server().codecs.UniversalDeserializer().Decode(body, nil, nil)
	return obj, err
}
