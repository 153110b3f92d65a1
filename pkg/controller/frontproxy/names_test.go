package frontproxy

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/credentials/credentialstest"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestDerivedNamesCoverWhatIsWritten: every host object a realized FrontProxy has, with CA
// bundles of its own or joined through a copy, is a name hostnames.FrontProxy derives, which
// the registry refuses to let another object of the namespace derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	t.Run("with CA bundles of its own", func(t *testing.T) {
		f := newSyncFixture(t, func(s *operatorv1alpha1.FrontProxySpec) {
			s.CABundleSecretRef = &corev1.LocalObjectReference{Name: "extra-ca"}
			s.ClientCABundleRef = &corev1.LocalObjectReference{Name: "partner-ca"}
		})
		ca, _ := credentialstest.NewCA(t, "some-ca")
		for _, name := range []string{"root-merged-client-ca", "root-merged-ca-bundle"} {
			require.NoError(t, f.Host.Caches["secrets"].Update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: "1"},
				Data: map[string][]byte{"tls.crt": ca}}))
		}
		for _, name := range []string{"extra-ca", "partner-ca"} {
			f.Host.PutSecret(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}, Data: map[string][]byte{"tls.crt": ca}})
		}
		before := f.Host.HostNames("team-a")
		var fp *operatorv1alpha1.FrontProxy
		for range 5 {
			fp = f.syncWith(t, false)
		}
		require.NotEmpty(t, f.Host.Caches["deployments"].List(), "the FrontProxy is realized whole")
		f.Host.AssertDerived(t, "team-a", before, hostnames.FrontProxy(fp))
	})
	t.Run("joined through a copy", func(t *testing.T) {
		j := newJoinedFixture(t)
		j.Host.PutReference(t, j.in.Copies[reference.FrontProxyJoin])
		before := j.Host.HostNames("team-a")
		var fp *operatorv1alpha1.FrontProxy
		for range 5 {
			fp = j.sync(t)
			j.Host.CatchUp(t)
		}
		require.NotEmpty(t, j.Host.Caches["deployments"].List(), "the FrontProxy is realized whole")
		j.Host.AssertDerived(t, "team-a", before, hostnames.FrontProxy(fp))
	})
}
