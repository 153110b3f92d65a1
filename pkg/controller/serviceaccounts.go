package controller

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
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
		if s.Namespace == rs.Namespace && ShardRootShard(s) == rs.Name {
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

// ShardRootShard is the name of the RootShard a Shard belongs to, empty without a reference.
func ShardRootShard(s *operatorv1alpha1.Shard) string {
	if s.Spec.RootShard.Reference == nil {
		return ""
	}
	return s.Spec.RootShard.Reference.Name
}

// ShardServiceAccountSecret is the Shard a host object is the service-account Secret of, by
// its labels, or "": the components of its RootShard that verify its tokens mount it.
func ShardServiceAccountSecret(m metav1.Object, shardKind string) string {
	l := m.GetLabels()
	if l[pki.LabelComponent] != "service-account" {
		return ""
	}
	return l[pki.OwnerLabel(shardKind)]
}
