package bench

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestRealizedManifest checks that the realized step applies what it counts: n RootShards
// with distinct names and hostnames, realizedPerNamespace to a namespace, each with pods that
// kwok starts at once.
func TestRealizedManifest(t *testing.T) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(realizedManifest("7", 23)), 4096)
	names, hosts, perNamespace := map[string]bool{}, map[string]bool{}, map[string]int{}
	for {
		var obj unstructured.Unstructured
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if obj.Object == nil {
			continue
		}
		assert.Equal(t, "RootShard", obj.GetKind())
		assert.Equal(t, "operator.kcp.io/v1alpha1", obj.GetAPIVersion())
		names[obj.GetNamespace()+"/"+obj.GetName()] = true
		host, _, _ := unstructured.NestedString(obj.Object, "spec", "external", "hostname")
		hosts[host] = true
		perNamespace[obj.GetNamespace()]++
		annotations, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "deploymentTemplate", "spec", "template", "metadata", "annotations")
		assert.Equal(t, "0s", annotations["pod-ready.stage.kwok.x-k8s.io/delay"], obj.GetName())
	}
	assert.Len(t, names, 23)
	assert.Len(t, hosts, 23)
	assert.Equal(t, map[string]int{"bench-realized-7-0": 10, "bench-realized-7-1": 10, "bench-realized-7-2": 3}, perNamespace)
}

func TestCertificateReady(t *testing.T) {
	cert := func(conditions ...any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": conditions}}}
	}
	assert.True(t, certificateReady(cert(map[string]any{"type": "Issuing", "status": "False"}, map[string]any{"type": "Ready", "status": "True"})))
	assert.False(t, certificateReady(cert(map[string]any{"type": "Ready", "status": "False"})))
	assert.False(t, certificateReady(cert()))
	assert.False(t, certificateReady(unstructured.Unstructured{Object: map[string]any{}}))
}
