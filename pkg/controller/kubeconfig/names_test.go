package kubeconfig

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// TestDerivedNamesCoverWhatIsWritten: every host object a realized Kubeconfig has, toward an
// object of its namespace or a copy of a kubeconfig-issuer Secret, is a name
// hostnames.Kubeconfig derives, which the registry refuses to let another object of the
// namespace derive.
func TestDerivedNamesCoverWhatIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(t *testing.T) *fixture
	}{
		{"toward a FrontProxy", func(t *testing.T) *fixture {
			return newFixture(t, kubeconfigFor("ci", toFrontProxy("edge")), rootShard("root"), frontProxy("edge", "root"), caBundle("root"))
		}},
		{"toward a copy", func(t *testing.T) *fixture {
			return newFixture(t, kubeconfigFor("ci", toSecret(issuerCopy)), copyOf(t, reference.KubeconfigIssuer))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f(t)
			before := f.Host.HostNames("team-a")
			f.sync(t, "ci")
			f.issue(t, "ci", time.Now().Add(24*time.Hour), "1")
			got := f.sync(t, "ci")
			require.Equal(t, operatorv1alpha1.KubeconfigPhaseReady, got.Status.Phase, "conditions: %+v", got.Status.Conditions)
			f.Host.AssertDerived(t, "team-a", before, hostnames.Kubeconfig(got))
		})
	}
}
