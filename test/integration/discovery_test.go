package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/discovery"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// TestDiscovery checks what kubectl learns about the group: the five resources, their
// singular names, the kcp category, the verbs and the status subresources, and no
// kubeconfig subresource until it is served.
func TestDiscovery(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	dc, err := discovery.NewDiscoveryClientForConfig(s.config)
	require.NoError(t, err)

	list, err := dc.ServerResourcesForGroupVersion(operatorv1alpha1.SchemeGroupVersion.String())
	require.NoError(t, err)
	got := map[string]bool{}
	for _, r := range list.APIResources {
		got[r.Name] = true
		if r.Name == "rootshards" {
			assert.Equal(t, "rootshard", r.SingularName)
			assert.Equal(t, "RootShard", r.Kind)
			assert.True(t, r.Namespaced)
			assert.Equal(t, []string{"kcp"}, r.Categories)
			assert.ElementsMatch(t, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, []string(r.Verbs))
		}
		if r.Name == "frontproxies" {
			assert.Equal(t, "frontproxy", r.SingularName)
		}
	}
	for _, want := range []string{
		"rootshards", "rootshards/status", "shards", "shards/status", "frontproxies", "frontproxies/status",
		"cacheservers", "cacheservers/status", "kubeconfigs", "kubeconfigs/status",
		"rootshards/kubeconfig", "shards/kubeconfig", "frontproxies/kubeconfig",
	} {
		assert.True(t, got[want], "discovery lacks %s", want)
	}
	assert.Len(t, got, 13, "no other resource: %v", got)
}
