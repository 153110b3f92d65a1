package hostcluster

import (
	"bytes"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// SigningKeysTrusted reports whether, for each of names (the root shard and the shards the
// rotation of the service-account CA in rotations waits for), every live slot of its signing
// leaf is issued, the newest from the CA in the Secret newCA, and its
// <name>-service-account-trust holds exactly their keys: before the shards sign with the new
// slot, every verifier must be able to have it.
func (h *Host) SigningKeysTrusted(namespace string, rotations []operatorv1alpha1.CARotationState, names []string, newCA string) (bool, error) {
	slots := pki.SigningSlots(rotations)
	st := pki.RotationOf(rotations, pki.Authority(pki.ServiceAccountCA))
	if st == nil {
		return false, nil
	}
	ca, ok, err := h.cachedSecret(namespace, newCA)
	if err != nil || !ok {
		return false, err
	}
	for _, name := range names {
		for _, slot := range slots.Live {
			leaf, ok, err := h.cachedSecret(namespace, pki.SlotName(kcp.ServiceAccountSecret(name), slot))
			if err != nil || !ok || len(leaf.Data["tls.crt"]) == 0 {
				return false, err
			}
			if slot == st.Slot && NotSignedBy(leaf.Data["tls.crt"], ca.Data["tls.crt"]) {
				return false, nil
			}
		}
		keys, issued, err := h.LiveCAs(namespace, kcp.ServiceAccountSecret(name), slots)
		if err != nil || !issued {
			return false, err
		}
		trust, ok, err := h.cachedSecret(namespace, kcp.ServiceAccountTrustSecret(name))
		if err != nil || !ok || !bytes.Equal(trust.Data["tls.crt"], keys) {
			return false, err
		}
	}
	return true, nil
}

// cachedSecret is the Secret name of namespace from the cache; ok is false when the cache does not
// hold it.
func (h *Host) cachedSecret(namespace, name string) (*corev1.Secret, bool, error) {
	s, err := h.Secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading the Secret %s/%s: %w", namespace, name, err)
	}
	return s, true, nil
}
