package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestDerivedNamesCoverWhatIsWritten: every host object a realized Shard has, with a managed
// etcd, CA bundles and a cache copy of its own, or joined through a copy, is a name
// hostnames.Shard derives, which the registry refuses to let another object of the namespace
// derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	t.Run("managed etcd with CA bundles and a cache copy", func(t *testing.T) {
		f := newFixture(t)
		f.addRootShard(t)
		f.Host.StoreStatefulSets(t)
		f.Host.PutReference(t, controllertest.NewInstallation(t).Copies[reference.CacheClient])
		s := f.withCacheCopy(t).DeepCopy()
		s.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}
		s.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "extra-ca"}
		s.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "partner-ca"}
		require.NoError(t, f.Caches.Shards.Update(s))
		ca, _ := credentialstest.NewCA(t, "some-ca")
		for _, name := range []string{"root-merged-client-ca", "root-merged-ca-bundle", "root-etcd-client-trust", "root-etcd-peer-trust"} {
			require.NoError(t, f.Host.Caches["secrets"].Update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"},
				Data: map[string][]byte{"tls.crt": ca}}))
		}
		for _, name := range []string{"extra-ca", "partner-ca"} {
			f.Host.PutSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Data: map[string][]byte{"tls.crt": ca}})
		}
		before := f.Host.HostNames("team-a")
		for range 6 {
			s = f.sync(t)
			f.Host.CatchUp(t)
			f.Host.CatchUpStatefulSets(t)
		}
		require.NotEmpty(t, f.Host.Caches["statefulsets"].List(), "the managed etcd is realized: %+v", s.Status.Conditions)
		require.NotEmpty(t, f.Host.Caches["deployments"].List(), "the Shard is realized whole")
		f.Host.AssertDerived(t, "team-a", before, hostnames.Shard(s))
	})
	t.Run("joined through a copy", func(t *testing.T) {
		j := newJoinedFixture(t)
		j.Host.PutReference(t, j.in.Copies[reference.ShardJoin])
		before := j.Host.HostNames("team-a")
		s := j.converge(t)
		require.NotEmpty(t, j.Host.Caches["deployments"].List(), "the Shard is realized whole")
		j.Host.AssertDerived(t, "team-a", before, hostnames.Shard(s))
	})
}
