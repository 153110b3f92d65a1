package rootshard

import (
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
)

// CABundles are the CA certificates (PEM) the merged bundles are made of, read from their
// Secrets by the controller.
type CABundles struct {
	ServerCA, ClientCA, FrontProxyClientCA []byte
	// ExtraServerCAs and ExtraClientCAs come from caBundleSecretRef and clientCABundleRef.
	ExtraServerCAs, ExtraClientCAs []byte
}

// MergedClientCA builds the Secret every shard and front proxy trusts client certificates
// by: the components' client CA, the users' front-proxy-client CA, and the extra CAs.
func MergedClientCA(rs *operatorv1alpha1.RootShard, b CABundles) *corev1ac.SecretApplyConfiguration {
	return bundleSecret(rs, kcp.MergedClientCAName(rs), "merged-client-ca", b.Client())
}

// MergedCABundle builds the Secret that verifies the root shard's server: the server CA and
// the extra CAs.
func MergedCABundle(rs *operatorv1alpha1.RootShard, b CABundles) *corev1ac.SecretApplyConfiguration {
	return bundleSecret(rs, MergedCABundleName(rs), "merged-ca-bundle", b.Server())
}

// Client is the client CA bundle: the components' client CA, the users' front-proxy-client
// CA, then the extra client CAs.
func (b CABundles) Client() []byte {
	return certificates.Bundle(b.ClientCA, b.FrontProxyClientCA, b.ExtraClientCAs)
}

// Server is the server CA bundle: the server CA, then the extra server CAs.
func (b CABundles) Server() []byte { return certificates.Bundle(b.ServerCA, b.ExtraServerCAs) }

func bundleSecret(rs *operatorv1alpha1.RootShard, name, component string, pems ...[]byte) *corev1ac.SecretApplyConfiguration {
	return certificates.BundleSecret(rs.Namespace, name, pki.Labels(Kind, rs.Name, component), pems...)
}

// EtcdTrust builds the Secrets whose tls.crt is one of the RootShard's etcd CAs alone
// (etcd.ClientTrustSecret, etcd.PeerTrustSecret), from the first certificate of the CA's
// Secret: the managed etcd clusters trust clients and peers by them, and by nothing above.
func EtcdTrust(rs *operatorv1alpha1.RootShard, clientCA, peerCA []byte) []*corev1ac.SecretApplyConfiguration {
	return []*corev1ac.SecretApplyConfiguration{
		bundleSecret(rs, etcd.ClientTrustSecret(rs.Name), "etcd-client-trust", clientCA),
		bundleSecret(rs, etcd.PeerTrustSecret(rs.Name), "etcd-peer-trust", peerCA),
	}
}
