package hostcluster

import (
	"bytes"
	"context"
	"sort"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// ServiceAccountIssuers are the names of the root shard rs and of those of shards that belong
// to it, whose service-account Secret exists in the host cluster (kcp.ServiceAccountKeysSecret:
// <shard>-service-account-trust from the first rotation of the service-account CA on),
// sorted: the keys that the components with auth.serviceAccount enabled verify tokens with. A Secret not issued yet is
// left out rather than mounted, since kcp exits on a missing key file and a pod waiting for
// a Secret would hold back every component's rollout; its Secret's event brings it in.
func (h *Host) ServiceAccountIssuers(rs *operatorv1alpha1.RootShard, shards []*operatorv1alpha1.Shard) []string {
	names := []string{rs.Name}
	for _, s := range shards {
		if ref := s.Spec.RootShard.Reference; s.Namespace == rs.Namespace && ref != nil && ref.Name == rs.Name {
			names = append(names, s.Name)
		}
	}
	var issuers []string
	for _, name := range names {
		if _, ok := h.SecretVersion(rs.Namespace, kcp.ServiceAccountKeysSecret(rs, name)); ok {
			issuers = append(issuers, name)
		}
	}
	sort.Strings(issuers)
	return issuers
}

// ServiceAccountTrust is the Secret <name>-service-account-trust of the root shard or shard
// name, of kind, of rs, from what the cache holds: the public certificates of its signing
// leaf's live slots, in slot order (pki.SigningSlots). It is nil while the slot the shard
// signs with is not issued. It is written before the first rotation of rs's service-account
// CA too, although nothing mounts it then: when a rotation starts, the verifiers move onto it
// (kcp.ServiceAccountKeysSecret), and it must exist already, or they would drop the shard's
// key until it does.
func (h *Host) ServiceAccountTrust(rs *operatorv1alpha1.RootShard, kind, name string) (*corev1ac.SecretApplyConfiguration, error) {
	keys, issued, err := h.signingKeys(rs, name)
	if err != nil || !issued {
		return nil, err
	}
	return certificates.TrustBundle(rs.Namespace, kcp.ServiceAccountSecret(name),
		pki.Labels(kind, name, ServiceAccountTrustComponent), keys), nil
}

// signingKeys is the tls.crt of <name>-service-account-trust: the first certificate of each
// live slot of name's signing leaf, in slot order; issued is false until the slot it signs
// with is issued.
func (h *Host) signingKeys(rs *operatorv1alpha1.RootShard, name string) ([]byte, bool, error) {
	return h.LiveCAs(rs.Namespace, kcp.ServiceAccountSecret(name), pki.SigningSlots(rs.Status.Rotations))
}

// ServiceAccountTrustComponent is the component label of a <shard>-service-account-trust.
const ServiceAccountTrustComponent = pki.ServiceAccountRole + pki.TrustSuffix

// SigningKeysTrusted reports whether, for each of names (the root shard of rs and its
// shards), every live slot of its signing leaf is issued, the newest from the Secret newCA,
// and its <name>-service-account-trust holds exactly their keys: before the shards sign with
// the new slot, every verifier must be able to have it.
func (h *Host) SigningKeysTrusted(rs *operatorv1alpha1.RootShard, names []string, newCA string) bool {
	slots := pki.SigningSlots(rs.Status.Rotations)
	st := pki.RotationOf(rs.Status.Rotations, pki.Authority(pki.ServiceAccountCA))
	ca, err := h.Secrets.Secrets(rs.Namespace).Get(newCA)
	if st == nil || err != nil {
		return false
	}
	for _, name := range names {
		for _, slot := range slots.Live {
			leaf, err := h.Secrets.Secrets(rs.Namespace).Get(pki.SlotName(kcp.ServiceAccountSecret(name), slot))
			if err != nil || len(leaf.Data["tls.crt"]) == 0 {
				return false
			}
			if slot == st.Slot && NotSignedBy(leaf.Data["tls.crt"], ca.Data["tls.crt"]) {
				return false
			}
		}
		keys, issued, err := h.signingKeys(rs, name)
		if err != nil || !issued {
			return false
		}
		trust, err := h.Secrets.Secrets(rs.Namespace).Get(kcp.ServiceAccountTrustSecret(name))
		if err != nil || !bytes.Equal(trust.Data["tls.crt"], keys) {
			return false
		}
	}
	return true
}

// DeleteOldSigningSlots deletes, once rs's service-account CA's rotation dropped the old CA
// (pki.OldDropped), the old slot of the signing leaf of each of owners (the root shard of rs
// and its shards, each by its kind, name and UID), its Certificate then its Secret: its key
// verifies nowhere any more. Each is deleted only as its owner's (deleteCASlot).
func (h *Host) DeleteOldSigningSlots(ctx context.Context, rs *operatorv1alpha1.RootShard, owners []Owner) error {
	st := pki.RotationOf(rs.Status.Rotations, pki.Authority(pki.ServiceAccountCA))
	if st == nil || !pki.OldDropped(st) {
		return nil
	}
	for _, o := range owners {
		if err := h.deleteCASlot(ctx, rs.Namespace, pki.SlotName(kcp.ServiceAccountSecret(o.Name), pki.OtherSlot(st.Slot)), o); err != nil {
			return err
		}
	}
	return nil
}
