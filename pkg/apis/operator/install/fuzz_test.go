package install_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/apiserver/apiservertest"
)

const examplesDir = "../../../../artifacts/examples"

// oddBodies are seeds no example covers: empty and non-object documents, numbers where the
// schema has none, wrong kinds, and duplicated or unknown fields.
var oddBodies = []string{
	``,
	`null`,
	`[]`,
	`"RootShard"`,
	`{}`,
	`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"RootShard","spec":{"external":{"port":1e20},"replicas":-1}}`,
	`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"Shard","spec":{"replicas":2.5,"rootShard":{"ref":{"name":"ü"}}}}`,
	`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"expirationSeconds":9223372036854775807}}`,
	`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"KubeconfigRequest","spec":{"expirationSeconds":9223372036854775808}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`,
	`{"apiVersion":"operator.kcp.io/v1alpha1","kind":"Kubeconfig","spec":{"validity":"-1h","validity":"1e9h"},"bogus":[[[[{}]]]]}`,
	"apiVersion: operator.kcp.io/v1alpha1\nkind: CacheServer\nmetadata: {name: &a x, labels: {*a : *a}}\nspec: {replicas: 0x7fffffff}\n",
}

func seed(f *testing.F) {
	for _, e := range apiservertest.Examples(f, examplesDir) {
		f.Add(e.JSON)
		f.Add(e.YAML)
		// The same object in protobuf, so that mutations start from a body that decodes.
		obj, _, err := apiservertest.Decode(runtime.ContentTypeJSON, e.Kind, e.JSON)
		require.NoError(f, err, "example %s", e.Kind)
		pb, err := apiservertest.Encode(runtime.ContentTypeProtobuf, obj)
		require.NoError(f, err, "example %s in protobuf", e.Kind)
		f.Add(pb)
	}
	for _, b := range oddBodies {
		f.Add([]byte(b))
	}
}

// FuzzDecode posts arbitrary bytes as the body of every kind, in every served format,
// through the server's own decoder. Nothing may panic; a body that decodes is an object of
// the kind, and the server's answer for it decodes again to the same answer.
func FuzzDecode(f *testing.F) {
	seed(f)
	scheme := apiservertest.Scheme()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, mediaType := range apiservertest.MediaTypes {
			for _, kind := range apiservertest.Kinds {
				obj, _, err := apiservertest.Decode(mediaType, kind, body)
				if err != nil {
					require.Nil(t, obj, "a body that does not decode yields no object")
					continue
				}
				gvks, _, err := scheme.ObjectKinds(obj)
				require.NoError(t, err)
				require.Equal(t, kind, gvks[0].Kind, "%s body decoded as %s", kind, gvks[0].Kind)

				answer, err := apiservertest.Encode(runtime.ContentTypeJSON, obj)
				require.NoError(t, err, "the server cannot encode what it decoded")
				again, warnings, err := apiservertest.Decode(runtime.ContentTypeJSON, kind, answer)
				require.NoError(t, err, "the server's answer does not decode: %s", answer)
				require.Empty(t, warnings, "the server's answer has unknown or duplicate fields: %s", answer)
				reanswer, err := apiservertest.Encode(runtime.ContentTypeJSON, again)
				require.NoError(t, err)
				require.JSONEq(t, string(answer), string(reanswer), "an answer, decoded and encoded again, changed")
			}
		}
	})
}

// FuzzConversionRoundTrip decodes arbitrary bytes into v1alpha1 objects, without defaulting,
// and converts each to the internal version and back: what decoded must come back equal.
func FuzzConversionRoundTrip(f *testing.F) {
	seed(f)
	scheme := apiservertest.Scheme()
	internal := schema.GroupVersion{Group: operator.GroupName, Version: runtime.APIVersionInternal}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := apiservertest.Deserialize(body)
		if err != nil {
			return
		}
		gvk := obj.GetObjectKind().GroupVersionKind()
		if gvk.GroupVersion() != operatorv1alpha1.SchemeGroupVersion ||
			!slices.ContainsFunc(apiservertest.Kinds, func(k string) bool { return gvk.Kind == k || gvk.Kind == k+"List" }) {
			return
		}
		decoded := obj.DeepCopyObject()
		in, err := scheme.ConvertToVersion(obj, internal)
		require.NoError(t, err, "v1alpha1 → internal")
		out, err := scheme.ConvertToVersion(in, operatorv1alpha1.SchemeGroupVersion)
		require.NoError(t, err, "internal → v1alpha1")
		require.Equal(t, decoded, out, "v1alpha1 → internal → v1alpha1 changed the object")
	})
}
