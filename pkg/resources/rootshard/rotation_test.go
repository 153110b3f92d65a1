package rootshard

import (
	"encoding/pem"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/golden"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// fakeCA is a PEM block standing in for the certificate of the CA Secret name: the bundles
// only concatenate, and the golden files show each block's fingerprint.
func fakeCA(name string) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(name)})
}

// dropTime is the LastCompletionTime of a rotation that dropped its old CA, or nil.
func dropTime(dropped bool) *metav1.Time {
	if !dropped {
		return nil
	}
	t := metav1.NewTime(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	return &t
}

// rotationView is what a phase of an authority's rotation builds: which CA Certificates
// exist, which one the Issuer signs from, which slots every bundle trusts, and the bundle
// Secrets made of them.
type rotationView struct {
	Phase          string                               `json:"phase"`
	LeavesSwitched bool                                 `json:"leavesSwitched"`
	OldDropped     bool                                 `json:"oldDropped,omitempty"`
	Certificates   []string                             `json:"certificates"`
	IssuerSecret   string                               `json:"issuerSecret"`
	Trusted        []string                             `json:"trusted"`
	PodsMount      string                               `json:"podsMount"`
	Bundles        []*corev1ac.SecretApplyConfiguration `json:"bundles"`
}

// TestRotationPhases shows, for each authority of a RootShard, its bundles in each phase of
// a rotation from slot 0 to slot 1 (docs/rotation.md).
func TestRotationPhases(t *testing.T) {
	type step struct {
		phase             operatorv1alpha1.CARotationPhase
		switched, dropped bool
	}
	steps := []step{{"", false, false}, {operatorv1alpha1.CARotationPreparing, false, false}, {operatorv1alpha1.CARotationPreparing, true, false},
		{operatorv1alpha1.CARotationPrepared, false, false}, {operatorv1alpha1.CARotationPrepared, true, false},
		{operatorv1alpha1.CARotationCompleting, false, false}, {operatorv1alpha1.CARotationCompleting, true, false},
		{operatorv1alpha1.CARotationCompleting, true, true}, {operatorv1alpha1.CARotationCompleted, true, true}}
	for _, ca := range pki.IntermediateCAs {
		t.Run(string(ca), func(t *testing.T) {
			var views []any
			for _, s := range steps {
				rs := minimalRootShard()
				if s.phase != "" {
					rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: string(ca), Phase: s.phase, Slot: 1, LeavesSwitched: s.switched,
						LastCompletionTime: dropTime(s.dropped)}}
				}
				views = append(views, view(t, rs, ca, s.phase, s.switched))
			}
			golden.Assert(t, "rotation-"+string(ca), views...)
		})
	}
}

func view(t *testing.T, rs *operatorv1alpha1.RootShard, ca pki.CA, phase operatorv1alpha1.CARotationPhase, switched bool) rotationView {
	base := pki.CAName(rs.Name, ca)
	slots := pki.SlotsOf(rs.Status.Rotations, string(ca))
	v := rotationView{Phase: string(phase), LeavesSwitched: switched, IssuerSecret: pki.IssuerSecret(base, rs.Status.Rotations, string(ca)),
		OldDropped: rs.Status.Rotations != nil && pki.OldDropped(&rs.Status.Rotations[0]),
		PodsMount:  pki.TrustSecretOf(rs, ca)}
	objs := BuildPKI(rs)
	for _, c := range objs.Certificates {
		if c.Labels[pki.LabelComponent] == ca.TemplateKey() {
			v.Certificates = append(v.Certificates, *c.Name)
		}
	}
	for _, i := range objs.Issuers {
		if *i.Name == base {
			assert.Equal(t, v.IssuerSecret, *i.Spec.CA.SecretName, "the Issuer signs from the Issuer's slot")
		}
	}
	var pems [][]byte
	for _, slot := range slots.Live {
		v.Trusted = append(v.Trusted, pki.SlotName(base, slot))
		pems = append(pems, fakeCA(pki.SlotName(base, slot)))
	}
	live := certificates.Bundle(pems...)
	b := CABundles{ServerCA: fakeCA("server"), ClientCA: fakeCA("client"), FrontProxyClientCA: fakeCA("front-proxy-client")}
	switch ca {
	case pki.ServerCA:
		b.ServerCA = live
		v.Bundles = append(v.Bundles, MergedCABundle(rs, b))
	case pki.ClientCA:
		b.ClientCA = live
		v.Bundles = append(v.Bundles, MergedClientCA(rs, b))
	case pki.FrontProxyClientCA:
		b.FrontProxyClientCA = live
		v.Bundles = append(v.Bundles, MergedClientCA(rs, b))
	case pki.EtcdClientCA:
		v.Bundles = append(v.Bundles, EtcdTrust(rs, live, fakeCA("etcd-peer"))[0])
	case pki.EtcdPeerCA:
		v.Bundles = append(v.Bundles, EtcdTrust(rs, fakeCA("etcd-client"), live)[1])
	}
	if v.PodsMount != base {
		v.Bundles = append(v.Bundles, certificates.TrustBundle(rs.Namespace, base, pki.Labels(Kind, rs.Name, ca.TemplateKey()+pki.TrustSuffix), live))
	}
	for i := range v.Bundles {
		v.Bundles[i] = golden.RedactedSecret(v.Bundles[i])
	}
	return v
}

// TestRotationMounts checks that the pods trust a rotated CA through its <ca>-trust bundle,
// which outlives either slot, and a CA never rotated through its own Secret.
func TestRotationMounts(t *testing.T) {
	rs := minimalRootShard()
	before := Server(rs).MountedSecrets()
	assert.Contains(t, before, "root-server-ca")
	assert.Contains(t, before, "root-requestheader-client-ca")

	rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: "server", Phase: operatorv1alpha1.CARotationCompleted, Slot: 1, LeavesSwitched: true}}
	after := Server(rs).MountedSecrets()
	assert.Contains(t, after, "root-server-ca-trust")
	assert.NotContains(t, after, "root-server-ca")
	assert.NotContains(t, after, "root-server-ca-next")
	assert.Contains(t, after, "root-requestheader-client-ca", "another CA's mount stays")
	require.Equal(t, len(before), len(after))
}

// TestRootRotationPhases shows the root CA's slots, its Issuer's slot, what the pods mount
// as ca-root and the bundle <rs>-ca-trust in each phase of a rotation from slot 0 to slot
// 1: each slot's chain, what is above both once (docs/rotation.md). The intermediates keep
// their Issuer.
func TestRootRotationPhases(t *testing.T) {
	steps := []struct {
		phase             operatorv1alpha1.CARotationPhase
		switched, dropped bool
	}{{"", false, false}, {operatorv1alpha1.CARotationPreparing, false, false}, {operatorv1alpha1.CARotationPreparing, true, false},
		{operatorv1alpha1.CARotationPrepared, true, false}, {operatorv1alpha1.CARotationCompleting, true, false},
		{operatorv1alpha1.CARotationCompleting, true, true}, {operatorv1alpha1.CARotationCompleted, true, true}}
	var views []any
	for _, s := range steps {
		rs := minimalRootShard()
		if s.phase != "" {
			rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: pki.RootAuthority, Phase: s.phase, Slot: 1, LeavesSwitched: s.switched,
				LastCompletionTime: dropTime(s.dropped)}}
		}
		base := pki.RootCAName(rs.Name)
		slots := pki.SlotsOf(rs.Status.Rotations, pki.RootAuthority)
		v := rotationView{Phase: string(s.phase), LeavesSwitched: s.switched, IssuerSecret: pki.IssuerSecret(base, rs.Status.Rotations, pki.RootAuthority),
			OldDropped: s.dropped,
			PodsMount:  kcp.RootCASecret(rs)}
		objs := BuildPKI(rs)
		for _, c := range objs.Certificates {
			switch {
			case c.Labels[pki.LabelComponent] == pki.RootCATemplateKey:
				v.Certificates = append(v.Certificates, *c.Name)
				assert.Equal(t, pki.BootstrapCA, *c.Spec.IssuerRef.Name, "every slot from the same parent")
			case c.Spec.IsCA != nil && *c.Spec.IsCA && *c.Name != pki.BootstrapCA:
				assert.Equal(t, base, *c.Spec.IssuerRef.Name, "an intermediate keeps its Issuer")
			}
		}
		for _, i := range objs.Issuers {
			if *i.Name == base {
				assert.Equal(t, v.IssuerSecret, *i.Spec.CA.SecretName, "the Issuer signs from the Issuer's slot")
			}
		}
		var chains [][]byte
		for _, slot := range slots.Live {
			v.Trusted = append(v.Trusted, pki.SlotName(base, slot))
			chains = append(chains, certificates.Bundle(fakeCA(pki.SlotName(base, slot)), fakeCA(pki.BootstrapCA)))
		}
		if v.PodsMount != base {
			v.Bundles = append(v.Bundles, golden.RedactedSecret(certificates.TrustBundle(rs.Namespace, base,
				pki.Labels(Kind, rs.Name, pki.RootCATemplateKey+pki.TrustSuffix), certificates.ChainsBundle(chains...))))
		}
		views = append(views, v)
	}
	golden.Assert(t, "rotation-root", views...)

	rs := minimalRootShard()
	assert.Contains(t, Server(rs).MountedSecrets(), "root-ca")
	rs.Status.Rotations = []operatorv1alpha1.CARotationState{{Authority: pki.RootAuthority, Phase: operatorv1alpha1.CARotationCompleted, Slot: 1, LeavesSwitched: true}}
	assert.Contains(t, Server(rs).MountedSecrets(), "root-ca-trust", "ca-root outlives either slot")
	assert.NotContains(t, Server(rs).MountedSecrets(), "root-ca")
}
