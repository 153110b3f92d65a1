package rootshard

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// Server describes a RootShard's kcp server to the kcp builders.
func Server(rs *operatorv1alpha1.RootShard) kcp.Server {
	s := kcp.Server{
		Kind:        Kind,
		Name:        rs.Name,
		Namespace:   rs.Namespace,
		ServiceName: ServiceName(rs),
		Spec:        &rs.Spec.CommonShardSpec,
		RootShard:   rs,
		Etcd:        Etcd(rs),
	}
	if c := rs.Spec.Cache; c != nil {
		s.Cache, s.CacheSecretRef = c.Reference, c.SecretRef
	}
	if rs.Spec.CABundleSecretRef != nil {
		s.ServerCABundle = MergedCABundleName(rs)
	}
	return s
}

// Etcd describes the RootShard's managed etcd, or is nil when it uses an external one. Its
// names start with the RootShard's name.
func Etcd(rs *operatorv1alpha1.RootShard) *etcd.Cluster {
	return etcd.New(Kind, &rs.ObjectMeta, &rs.Spec.CommonShardSpec, EtcdBase(rs.Name), rs.Name)
}

// EtcdBase is the prefix of the names of the managed etcd of the RootShard name, and of its
// snapshots': the RootShard's name.
func EtcdBase(name string) string { return name }

// ServiceName is the name of the root shard's Service and Deployment, and the base of its
// DNS names.
func ServiceName(rs *operatorv1alpha1.RootShard) string { return pki.RootShardServiceName(rs.Name) }

// MergedCABundleName is the Secret with every CA that verifies the root shard's server.
func MergedCABundleName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-merged-ca-bundle" }

// The server's own identity toward a root shard's kcp (pki.OperatorRole).
const (
	OperatorRole       = pki.OperatorRole
	OperatorCommonName = pki.OperatorCommonName
	OperatorGroup      = pki.OperatorGroup
)

// OperatorSecretName is the Secret (and Certificate) of the server's identity toward rs.
func OperatorSecretName(rs *operatorv1alpha1.RootShard) string {
	return pki.OperatorSecretName(rs.Name)
}
