package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// ShardRootShard is the name of the RootShard a Shard belongs to, empty without a reference.
func ShardRootShard(s *operatorv1alpha1.Shard) string {
	if s.Spec.RootShard.Reference == nil {
		return ""
	}
	return s.Spec.RootShard.Reference.Name
}

// ShardServiceAccountSecret is the Shard a host object is the service-account Secret of, or
// the bundle of its live service-account keys (<s>-service-account-trust), by its labels,
// or "": the components of its RootShard that verify its tokens mount it.
func ShardServiceAccountSecret(m metav1.Object, shardKind string) string {
	l := m.GetLabels()
	if c := l[pki.LabelComponent]; c != "service-account" && c != "service-account"+pki.TrustSuffix {
		return ""
	}
	return l[pki.OwnerLabel(shardKind)]
}
