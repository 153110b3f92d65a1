package rootshard

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
)

// serviceAccountView is what a phase of the service-account CA's rotation builds for the
// root shard's kcp server: the slot the service-account CA's Issuer signs from, the slots of
// its signing leaf with their key policy, the Secret it signs with
// (--service-account-private-key-file), and each --service-account-key-file with the Secret
// mounted there.
type serviceAccountView struct {
	Phase          string            `json:"phase"`
	LeavesSwitched bool              `json:"leavesSwitched"`
	IssuerSecret   string            `json:"issuerSecret"`
	SigningLeaves  map[string]string `json:"signingLeaves"`
	SigningKey     string            `json:"signingKey"`
	VerifyKeys     map[string]string `json:"verifyKeys"`
}

// TestServiceAccountKeyRotationPhases shows, in each phase of a rotation of the
// service-account CA from slot 0 to slot 1, where the root shard signs its tokens and which
// Secrets it verifies its own and a peer's tokens by (docs/rotation.md): the signing leaves
// themselves until the first rotation, then their <shard>-service-account-trust. The new
// slot root-service-account-next exists from Start, signed by the new CA, but the root shard
// signs with it only once the leaves switch.
func TestServiceAccountKeyRotationPhases(t *testing.T) {
	steps := []struct {
		phase    operatorv1alpha1.CARotationPhase
		switched bool
	}{{"", false}, {operatorv1alpha1.CARotationPreparing, false}, {operatorv1alpha1.CARotationPreparing, true},
		{operatorv1alpha1.CARotationPrepared, true}, {operatorv1alpha1.CARotationCompleting, true}, {operatorv1alpha1.CARotationCompleted, true}}
	var views []any
	for _, s := range steps {
		rs := minimalRootShard()
		rs.Spec.Auth = &operatorv1alpha1.AuthSpec{ServiceAccount: &operatorv1alpha1.ServiceAccountAuthentication{Enabled: true}}
		if s.phase != "" {
			rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: string(pki.ServiceAccountCA), Phase: s.phase, Slot: 1, LeavesSwitched: s.switched}}
		}
		base := pki.CAName(rs.Name, pki.ServiceAccountCA)
		v := serviceAccountView{Phase: string(s.phase), LeavesSwitched: s.switched,
			IssuerSecret:  pki.IssuerSecret(base, rs.Status.Rotations, string(pki.ServiceAccountCA)),
			SigningLeaves: map[string]string{}, VerifyKeys: map[string]string{}}
		for _, c := range BuildPKI(rs).Certificates {
			if pki.IsSigningLeaf(c.Labels) {
				v.SigningLeaves[*c.Name] = string(*c.Spec.PrivateKey.RotationPolicy)
				assert.Equal(t, base, *c.Spec.IssuerRef.Name, "the leaf keeps its Issuer")
			}
		}
		k := Server(rs)
		k.ServiceAccountIssuers = []string{"root", "shard-1"}
		pod := k.Deployment(nil, "hash").Spec.Template.Spec
		volumes := map[string]string{}
		for _, m := range pod.Containers[0].VolumeMounts {
			for _, vol := range pod.Volumes {
				if *vol.Name == *m.Name && vol.Secret != nil {
					volumes[*m.MountPath] = *vol.Secret.SecretName
				}
			}
		}
		for _, arg := range pod.Containers[0].Args {
			flag, file, ok := strings.Cut(arg, "=")
			if !ok || (flag != "--service-account-key-file" && flag != "--service-account-private-key-file") {
				continue
			}
			dir := file[:strings.LastIndex(file, "/")]
			require.Contains(t, volumes, dir, "%s reads a mounted Secret", arg)
			if flag == "--service-account-private-key-file" {
				v.SigningKey = volumes[dir]
				continue
			}
			v.VerifyKeys[file] = volumes[dir]
		}
		views = append(views, v)
	}
	golden.Assert(t, "rotation-service-account-keys", views...)
}
