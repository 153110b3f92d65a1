package cacheserver

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	ct "github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
)

// TestWatchesEnqueueTheCacheServersConcerned: every event a CacheServer's controller watches
// enqueues exactly the CacheServers it concerns.
func TestWatchesEnqueueTheCacheServersConcerned(t *testing.T) {
	w := ct.NewWatching(t)
	c, err := controller.BuildWatching[Controller](kinds.CacheServer, w.Deps())
	require.NoError(t, err)
	cache := &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cache"}}
	cache.Spec.Etcd = &operatorv1alpha1.EtcdConfig{TLSConfig: &operatorv1alpha1.EtcdTLSConfig{}}
	cache.Spec.Etcd.TLSConfig.SecretRef.Name = "etcd-client"
	own := &operatorv1alpha1.CacheServer{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "own-pki"},
		Spec: operatorv1alpha1.CacheServerSpec{Certificates: &operatorv1alpha1.Certificates{}}}
	w.Add(t, cache, own)
	owned := pki.Labels("cacheserver", "cache", "server")

	w.RunWatchCases(t, c.Loop, c.Watched.Handlers(c.Loop, w.Host.Host, w.Informers), []ct.WatchCase{
		{Name: "a CacheServer added", Event: ct.Event{Source: "CacheServer", Type: ct.Added, Obj: own}, Want: []string{"team-a/own-pki"}},
		{Name: "a CacheServer updated", Event: ct.Event{Source: "CacheServer", Type: ct.Updated, Obj: cache}, Want: []string{"team-a/cache"}},
		{Name: "a RootShard: those on the bootstrap PKI", Event: ct.Event{Source: "RootShard", Type: ct.Deleted,
			Obj: &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"}}}, Want: []string{"team-a/cache"}},
		{Name: "a RootShard naming it by spec.cache.ref, whose roll gives it its release", Event: ct.Event{Source: "RootShard", Type: ct.Updated,
			Obj: &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "root"},
				Spec: operatorv1alpha1.RootShardSpec{Cache: &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "own-pki"}}}}},
			Want: []string{"team-a/cache", "team-a/own-pki"}},
		{Name: "its Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("cache-server", owned)}, Want: []string{"team-a/cache"}},
		{Name: "its Service", Event: ct.Event{Source: "services", Type: ct.Added, Obj: ct.HostObject("cache", owned)}, Want: []string{"team-a/cache"}},
		{Name: "its Deployment", Event: ct.Event{Source: "deployments", Type: ct.Updated, Obj: ct.HostObject("cache", owned)}, Want: []string{"team-a/cache"}},
		{Name: "its PodDisruptionBudget", Event: ct.Event{Source: "poddisruptionbudgets", Type: ct.Added, Obj: ct.HostObject("cache", owned)}, Want: []string{"team-a/cache"}},
		{Name: "its Certificate", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject("cache-server", owned)}, Want: []string{"team-a/cache"}},
		{Name: "its Issuer", Event: ct.Event{Source: "issuers", Type: ct.Added, Obj: ct.HostObject("cache-ca", owned)}, Want: []string{"team-a/cache"}},
		{Name: "a ConfigMap is not watched", Event: ct.Event{Source: "configmaps", Type: ct.Added, Obj: ct.HostObject("cache", owned)}, Want: nil},
		{Name: "the bootstrap PKI", Event: ct.Event{Source: "certificates", Type: ct.Updated, Obj: ct.HostObject(pki.BootstrapCA, certificates.BootstrapLabels())}, Want: []string{"team-a/cache"}},
		{Name: "a RootShard's Secret", Event: ct.Event{Source: "secrets", Type: ct.Updated, Obj: ct.HostObject("root-ca", pki.Labels("rootshard", "root", "ca"))}, Want: nil},
		{Name: "the user's etcd Secret", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated, Obj: ct.HostObject("etcd-client", nil)}, Want: []string{"team-a/cache"}},
		{Name: "a Secret of ours by that name", Event: ct.Event{Source: string(ct.UsersSecrets), Type: ct.Updated,
			Obj: ct.HostObject("etcd-client", map[string]string{pki.LabelManagedBy: pki.ManagedBy})}, Want: nil},
	})
}
