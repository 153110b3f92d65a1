package virtualworkspace

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
)

// TestDerivedNamesCoverWhatIsWritten: every host object a realized VirtualWorkspace has,
// for a root shard or a shard, with CA bundles of its own, is a name
// hostnames.VirtualWorkspace derives, which the registry refuses to let another object of the
// namespace derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target operatorv1alpha1.VirtualWorkspaceTarget
	}{
		{"of the root shard", toRoot},
		{"of a shard", toShard1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vw := virtualWorkspace(tc.target)
			vw.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: "extra-ca"}
			vw.Spec.ClientCABundleRef = &corev1.LocalObjectReference{Name: "partner-ca"}
			f := newFixture(t, rootRS, shard1, vw)
			f.issueRootShardCAs(t)
			for _, name := range []string{"extra-ca", "partner-ca"} {
				f.Host.PutSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Data: map[string][]byte{"tls.crt": []byte("ca")}})
			}
			before := f.Host.HostNames("team-a")
			for range 5 {
				vw = f.sync(t)
			}
			require.NotEmpty(t, f.Host.Caches["deployments"].List(), "the VirtualWorkspace is realized whole: %+v", vw.Status.Conditions)
			f.Host.AssertDerived(t, "team-a", before, hostnames.VirtualWorkspace(vw))
		})
	}
}
