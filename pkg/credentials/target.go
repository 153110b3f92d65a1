// Package credentials mints and renders user credentials for kcp: client certificates signed
// by a RootShard's front-proxy-client CA, bound to an identity the requester may use, and
// kubeconfig files for a RootShard, Shard or FrontProxy. The kubeconfig subresource and the
// Kubeconfig kind share it.
package credentials

import (
	"net"
	"strconv"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// The contexts of a minted kubeconfig.
const (
	DefaultContext = "default"
	BaseContext    = "base"
)

// Target is what a credential is for.
type Target struct {
	// Kind is RootShard, Shard or FrontProxy; Name is the object's.
	Kind string
	Name string
	// RootShard signs the credential, and its server CA verifies the target.
	RootShard *operatorv1alpha1.RootShard
	// URL is the target's base URL.
	URL string
	// ShardBase adds the shard-base context, for a RootShard or Shard.
	ShardBase bool
	// CABundle, when set, is the Secret whose tls.crt verifies the target instead of the
	// RootShard's merged CA bundle: a FrontProxy's own, with its caBundleSecretRef.
	CABundle string
}

// ForRootShard is a root shard, at its shard base URL.
func ForRootShard(rs *operatorv1alpha1.RootShard) Target {
	return Target{Kind: "RootShard", Name: rs.Name, RootShard: rs, URL: rootshard.Server(rs).BaseURL(), ShardBase: true}
}

// ForShard is a shard of rs, at its shard base URL.
func ForShard(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) Target {
	return Target{Kind: "Shard", Name: s.Name, RootShard: rs, URL: shard.Server(s, rs).BaseURL(), ShardBase: true}
}

// ForFrontProxy is a front proxy of rs, at its external hostname (else the RootShard's) and
// port.
func ForFrontProxy(fp *operatorv1alpha1.FrontProxy, rs *operatorv1alpha1.RootShard) Target {
	f := frontproxy.FrontProxy{FrontProxy: fp, RootShard: rs}
	host := f.ExternalHostname()
	if host == "" {
		host = rs.Spec.External.Hostname
	}
	t := Target{Kind: "FrontProxy", Name: fp.Name, RootShard: rs, URL: "https://" + net.JoinHostPort(host, strconv.Itoa(int(f.ServicePort())))}
	if fp.Spec.CABundleSecretRef != nil {
		// Its serving certificate may come from another issuer (a certificate template's
		// issuerRef), whose CA only caBundleSecretRef holds.
		t.CABundle = f.MergedCABundleName()
	}
	return t
}

// Namespace is the target's namespace.
func (t Target) Namespace() string { return t.RootShard.Namespace }

// SignerSecret is the Secret of the CA that signs user credentials: the RootShard's
// front-proxy-client CA, which every shard and front proxy trusts through the merged client
// CA, and which signs nothing else.
//
// While the CA rotates, it is the slot its Issuer signs from (docs/rotation.md).
func (t Target) SignerSecret() string {
	return pki.IssuerSecret(pki.CAName(t.RootShard.Name, pki.FrontProxyClientCA), t.RootShard.Status.Rotations, string(pki.FrontProxyClientCA))
}

// SignerIssuer is the cert-manager Issuer of that CA.
func (t Target) SignerIssuer() string { return pki.CAName(t.RootShard.Name, pki.FrontProxyClientCA) }

// CABundleSecret is the Secret whose tls.crt verifies the target's serving certificate: the
// RootShard's server CA and caBundleSecretRef, and a FrontProxy's caBundleSecretRef.
func (t Target) CABundleSecret() string {
	if t.CABundle != "" {
		return t.CABundle
	}
	return rootshard.MergedCABundleName(t.RootShard)
}

// String is the target as the Kubeconfig kind's Target column shows it: FrontProxy/edge.
func (t Target) String() string { return t.Kind + "/" + t.Name }
