package hostcluster

import (
	"sort"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// ServiceAccountIssuers are the names of the root shard rs and of those of shards that belong
// to it, whose service-account Secret exists in the host cluster, sorted: the keys that the
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
		if _, ok := h.SecretVersion(rs.Namespace, kcp.ServiceAccountSecret(name)); ok {
			issuers = append(issuers, name)
		}
	}
	sort.Strings(issuers)
	return issuers
}
