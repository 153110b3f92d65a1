package rootshard

import (
	"fmt"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Names of what a RootShard owns besides its PKI, as PKI.md and WORKLOADS.md name them.
func DeploymentName(rs *operatorv1alpha1.RootShard) string { return ServiceName(rs) }

// MergedClientCAName is the Secret with every CA a root shard trusts for client certificates.
func MergedClientCAName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-merged-client-ca" }

// MergedCABundleName is the Secret with every CA that verifies the root shard's server.
func MergedCABundleName(rs *operatorv1alpha1.RootShard) string { return rs.Name + "-merged-ca-bundle" }

// KubeconfigName is the Secret of the kubeconfig of an admin identity ("logical-cluster-admin"
// or "external-logical-cluster-admin").
func KubeconfigName(rs *operatorv1alpha1.RootShard, identity string) string {
	return rs.Name + "-" + identity + "-kubeconfig"
}

// The admin identities a root shard has kubeconfigs for.
const (
	LogicalClusterAdmin         = "logical-cluster-admin"
	ExternalLogicalClusterAdmin = "external-logical-cluster-admin"
)

// BaseURL is the URL the root shard is reached at inside the cluster, unless the spec
// overrides it.
func BaseURL(rs *operatorv1alpha1.RootShard) string {
	if rs.Spec.ShardBaseURL != "" {
		return rs.Spec.ShardBaseURL
	}
	return fmt.Sprintf("https://%s.%s.svc.%s:6443", ServiceName(rs), rs.Namespace, clusterDomain(rs.Spec.ClusterDomain))
}

// ExternalURL is the URL the kcp installation is reached at from outside.
func ExternalURL(rs *operatorv1alpha1.RootShard) string {
	port := rs.Spec.External.Port
	if port == 0 {
		port = operatorv1alpha1.DefaultExternalPort
	}
	return fmt.Sprintf("https://%s:%d", rs.Spec.External.Hostname, port)
}

// RootCASecret is the Secret that holds the root CA certificate: the user's when it brings
// one, else the one cert-manager issues.
func RootCASecret(rs *operatorv1alpha1.RootShard) string {
	if c := rs.Spec.Certificates; c != nil && c.CASecretRef != nil {
		return c.CASecretRef.Name
	}
	return pki.RootCAName(rs.Name)
}
