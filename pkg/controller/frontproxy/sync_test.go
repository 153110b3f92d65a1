package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	opfake "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned/fake"
	listers "github.com/kcp-setups/apiserver/pkg/generated/listers/operator/v1alpha1"
)

func TestResyncOfARealizedFrontProxyWritesNothing(t *testing.T) {
	fp := &operatorv1alpha1.FrontProxy{
		ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "team-a", Generation: 1, Finalizers: []string{Finalizer}},
		Spec:       operatorv1alpha1.FrontProxySpec{RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}},
	}
	ours := opfake.NewSimpleClientset(fp.DeepCopy())
	host := controllertest.NewHost(t)
	fps, rss := controllertest.NewCache(), controllertest.NewCache()
	require.NoError(t, fps.Add(fp))
	require.NoError(t, rss.Add(&operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
		Spec: operatorv1alpha1.RootShardSpec{External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com", Port: 443}}}))
	for _, name := range []string{"root-merged-client-ca", "root-server-ca", "root-requestheader-client-ca"} {
		require.NoError(t, host.Caches["secrets"].Add(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"}}))
	}
	shards := controllertest.NewCache()
	c := &Controller{client: ours, frontProxies: listers.NewFrontProxyLister(fps), rootShards: listers.NewRootShardLister(rss),
		shards: listers.NewShardLister(shards), indexes: controller.Indexes{FrontProxies: fps, RootShards: rss, Shards: shards}, host: host.Host, recorder: record.NewFakeRecorder(1000)}

	sync := func() *operatorv1alpha1.FrontProxy {
		require.NoError(t, c.sync(t.Context(), "team-a/edge"))
		got, err := ours.OperatorV1alpha1().FrontProxies("team-a").Get(t.Context(), "edge", metav1.GetOptions{})
		require.NoError(t, err)
		require.NoError(t, fps.Update(got))
		host.CatchUp(t)
		return got
	}
	for range 4 {
		sync()
	}
	got, err := listers.NewFrontProxyLister(fps).FrontProxies("team-a").Get("edge")
	require.NoError(t, err)
	require.Equal(t, operatorv1alpha1.PhaseRunning, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
	assert.Len(t, host.Caches["deployments"].List(), 1)
	assert.Len(t, host.Caches["configmaps"].List(), 1)

	host.Reset()
	ours.ClearActions()
	sync()
	assert.Empty(t, host.Writes(ours.Actions()), "a resync of an unchanged, realized FrontProxy must not write")
}
