package rootshard

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestDerivedNamesCoverWhatIsWritten: every host object a realized RootShard has, in each
// shape its spec gives it, is a name hostnames.RootShard derives, which the registry refuses
// to let another object of the namespace derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*operatorv1alpha1.RootShard)
		linked bool
	}{
		{"minimal", func(*operatorv1alpha1.RootShard) {}, false},
		{"managed etcd with CA bundles and a cache copy", func(rs *operatorv1alpha1.RootShard) {
			rs.Spec.Etcd = operatorv1alpha1.EtcdConfig{Managed: &operatorv1alpha1.ManagedEtcd{}}
			rs.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "extra-ca"}
			rs.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "partner-ca"}
			rs.Spec.Cache = &operatorv1alpha1.CacheConfig{SecretRef: &corev1.LocalObjectReference{Name: "cache-cache-client"}}
		}, false},
		{"an issuer of the users", func(rs *operatorv1alpha1.RootShard) {
			rs.Spec.Certificates = &operatorv1alpha1.Certificates{IssuerRef: &operatorv1alpha1.ObjectReference{Name: "corp", Kind: "ClusterIssuer"}}
		}, false},
		{"named by a Link: its link PKI", func(*operatorv1alpha1.RootShard) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := testRootShard()
			tc.mutate(rs)
			f := newFixture(t, rs)
			if tc.linked {
				f.Add(t, testLink("eu-1", "root"))
			}
			f.Host.StoreStatefulSets(t)
			for _, name := range []string{"extra-ca", "partner-ca"} {
				f.Host.PutSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name},
					Data: map[string][]byte{"tls.crt": []byte(name)}})
			}
			f.Host.PutReference(t, controllertest.NewInstallation(t).Copies[reference.CacheClient])
			before := f.Host.HostNames("team-a")
			for range 6 {
				require.NoError(t, f.c.SyncKey(t.Context(), "team-a/root"))
				f.hostCatchesUp(t)
				f.Host.CatchUpStatefulSets(t)
			}
			require.NotEmpty(t, f.Host.Caches["deployments"].List(), "the RootShard is realized whole")
			f.Host.AssertDerived(t, "team-a", before, hostnames.RootShard(rs))
		})
	}
}
