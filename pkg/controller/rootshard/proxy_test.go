package rootshard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
)

// TestRootShardRealizesItsInternalFrontProxy: a RootShard's internal front proxy is realized
// with it, spec.proxy or not: its certificates, bundle, kubeconfig, path mappings, Service and
// Deployment, the Deployment once everything it mounts exists; spec.proxy changes it, and a
// renewed proxy certificate rolls it alone.
func TestRootShardRealizesItsInternalFrontProxy(t *testing.T) {
	f := newFixture(t, testRootShard())
	f.converge(t)
	for cache, names := range map[string][]string{
		"certificates": {"root-proxy-server", "root-proxy-kubeconfig", "root-proxy-requestheader"},
		"secrets":      {"root-proxy-merged-client-ca", "root-proxy-dynamic-kubeconfig"},
		"configmaps":   {"root-proxy-config"},
		"services":     {"root-proxy"},
		"deployments":  {"root-proxy"},
	} {
		for _, name := range names {
			_, exists, err := f.Host.Caches[cache].GetByKey("team-a/" + name)
			require.NoError(t, err)
			assert.True(t, exists, "%s %s", cache, name)
		}
	}
	obj, _, err := f.Host.Caches["deployments"].GetByKey("team-a/root-proxy")
	require.NoError(t, err)
	d := obj.(*appsv1.Deployment)
	assert.EqualValues(t, 2, *d.Spec.Replicas, "2 replicas without spec.proxy.replicas")
	assert.Equal(t, "/kcp-front-proxy", d.Spec.Template.Spec.Containers[0].Command[0])

	// spec.proxy shapes it, and nothing else changes.
	rs, err := kinds.RootShard.Lister(f.c.Indexes, "team-a").Get("root")
	require.NoError(t, err)
	rs = rs.DeepCopy()
	three := int32(3)
	rs.Spec.Proxy = &operatorv1alpha1.RootShardProxySpec{ComponentSpec: operatorv1alpha1.ComponentSpec{Replicas: &three,
		Logging: &operatorv1alpha1.LoggingSpec{Level: 4}}}
	rs.Generation = 2
	require.NoError(t, f.Caches.RootShards.Update(rs))
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.Equal(t, []string{"Deployment root-proxy", "update rootshards/status"}, f.Writes())
	f.hostCatchesUp(t)
	obj, _, err = f.Host.Caches["deployments"].GetByKey("team-a/root-proxy")
	require.NoError(t, err)
	d = obj.(*appsv1.Deployment)
	assert.EqualValues(t, 3, *d.Spec.Replicas)
	assert.Contains(t, d.Spec.Template.Spec.Containers[0].Args, "-v=4")
	f.Reset()

	// cert-manager renews the proxy's serving certificate: its Deployment rolls, the root
	// shard's does not.
	obj, exists, err := f.Host.Caches["secrets"].GetByKey("team-a/root-proxy-server")
	require.NoError(t, err)
	require.True(t, exists)
	renewed := obj.(*corev1.Secret).DeepCopy()
	renewed.ResourceVersion = "2"
	require.NoError(t, f.Host.Caches["secrets"].Update(renewed))
	require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
	assert.Equal(t, []string{"Deployment root-proxy"}, f.Writes())
}
