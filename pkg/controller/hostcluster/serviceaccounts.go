package hostcluster

import (
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// ServiceAccountIssuers are the names of the root shard rs and of those of shards that belong
// to it, whose service-account Secret exists in the host cluster (kcp.ServiceAccountKeysSecret:
// <shard>-service-account-trust from the first rotation of the service-account CA on), sorted: the keys that the
// components with auth.serviceAccount enabled verify tokens with. A Secret not issued yet is
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
// name, of kind, of rs (pki.ServiceAccountKeys), from what the cache holds: the public
// certificates of its live signing keys. It is nil before the first rotation of rs's
// service-account CA, and while the signing leaf is not issued, as when a rotation has
// cert-manager issue it again: the Secret then stays as it is, with the old key.
func (h *Host) ServiceAccountTrust(rs *operatorv1alpha1.RootShard, kind, name string) (*corev1ac.SecretApplyConfiguration, error) {
	st := pki.RotationOf(rs.Status.Rotations, pki.Authority(pki.ServiceAccountCA))
	if st == nil {
		return nil, nil
	}
	leaf, err := h.Secrets.Secrets(rs.Namespace).Get(kcp.ServiceAccountSecret(name))
	if apierrors.IsNotFound(err) || (err == nil && len(leaf.Data["tls.crt"]) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var previous []byte
	switch trust, err := h.Secrets.Secrets(rs.Namespace).Get(kcp.ServiceAccountTrustSecret(name)); {
	case err == nil:
		previous = trust.Data["tls.crt"]
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	keys, err := pki.ServiceAccountKeys(previous, leaf.Data["tls.crt"], st.Phase != operatorv1alpha1.CARotationCompleted)
	if err != nil {
		return nil, fmt.Errorf("the service-account Secret %s: %w", leaf.Name, err)
	}
	return certificates.TrustBundle(rs.Namespace, kcp.ServiceAccountSecret(name),
		pki.Labels(kind, name, ServiceAccountTrustComponent), keys), nil
}

// ServiceAccountTrustComponent is the component label of a <shard>-service-account-trust.
const ServiceAccountTrustComponent = "service-account" + pki.TrustSuffix

// ServiceAccountKeysKept reports whether the <name>-service-account-trust of each of names
// holds the key of its current signing leaf, where that leaf is issued: until then, a
// rotation of the service-account CA must not have the leaves issued again, or the tokens of
// the old key would stop verifying before Complete.
func (h *Host) ServiceAccountKeysKept(namespace string, names []string) bool {
	for _, name := range names {
		leaf, err := h.Secrets.Secrets(namespace).Get(kcp.ServiceAccountSecret(name))
		if err != nil || len(leaf.Data["tls.crt"]) == 0 {
			continue
		}
		trust, err := h.Secrets.Secrets(namespace).Get(kcp.ServiceAccountTrustSecret(name))
		if err != nil || !pki.HoldsServiceAccountKey(trust.Data["tls.crt"], leaf.Data["tls.crt"]) {
			return false
		}
	}
	return true
}
