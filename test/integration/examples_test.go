package integration

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestExamplesApply creates every manifest of artifacts/examples with strict field
// validation, as `kubectl apply` would.
func TestExamplesApply(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	dyn, err := dynamic.NewForConfig(s.config)
	require.NoError(t, err)

	files, err := filepath.Glob("../../artifacts/examples/*.yaml")
	require.NoError(t, err)
	require.Len(t, files, 7, "one example per kind")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			obj := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal(data, &obj.Object))
			gvr := operatorv1alpha1.SchemeGroupVersion.WithResource(resourceOf[obj.GetKind()])
			created, err := dyn.Resource(gvr).Namespace(namespace).Create(t.Context(), obj, metav1.CreateOptions{FieldValidation: "Strict"})
			require.NoError(t, err)
			assert.EqualValues(t, 1, created.GetGeneration())
		})
	}
}

var resourceOf = map[string]string{
	"RootShard": "rootshards", "Shard": "shards", "FrontProxy": "frontproxies",
	"CacheServer": "cacheservers", "Kubeconfig": "kubeconfigs", "VirtualWorkspace": "virtualworkspaces",
	"Link": "links",
}
