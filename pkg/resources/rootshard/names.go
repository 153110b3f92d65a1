package rootshard

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
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
	return etcd.New(Kind, &rs.ObjectMeta, &rs.Spec.CommonShardSpec, rs.Name, rs.Name)
}

// ServiceName is the name of the root shard's Service and Deployment, and the base of its
// DNS names.
func ServiceName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-kcp" }

// MergedCABundleName is the Secret with every CA that verifies the root shard's server.
func MergedCABundleName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-merged-ca-bundle" }

// The server's own identity toward a root shard's kcp, as kcp-operator names and issues it:
// a client certificate of the root shard's client CA, in a Secret no pod mounts. kcp's
// bootstrap policy binds the group system:kcp:admin to cluster-admin in every workspace
// (pkg/authorization/bootstrap/policy.go, "system:kcp:admin:cluster-admin"), and kcp's
// front proxy passes it on, where it drops system:masters.
const (
	OperatorRole       = "kcp-operator"
	OperatorCommonName = "system:kcp-operator"
	OperatorGroup      = "system:kcp:admin"
)

// OperatorSecretName is the Secret (and Certificate) of the server's identity toward rs.
func OperatorSecretName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-" + OperatorRole }
