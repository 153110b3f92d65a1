package link

import (
	"crypto/x509"
	"encoding/pem"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// CacheServerCA is the CA role of a CacheServer's CA, beside the RootShard's (pki.CA): a
// linked Shard's cache client is signed by it over the link.
const CacheServerCA pki.CA = "cache-server"

// CacheClientRole is the owner label role of a linked Shard's cache client Certificate.
const CacheClientRole = "cache-client"

// CacheClientIssuer is the name of the LinkIssuer a consumer whose joined RootShard is joined
// names for its cache client (pki.CAName of CacheServerCA): the remote signs it as the
// consumer kind CacheClient, by the CacheServer's CA of the Link.
func CacheClientIssuer(joined string) string { return pki.CAName(joined, CacheServerCA) }

// CacheClientName is the Certificate (and Secret) of the cache client of the linked consumer
// owner.
func CacheClientName(owner string) string { return owner + "-" + CacheClientRole }

// CacheClientCertificate is the Certificate of the cache client of the consumer owner of
// kind (its owner label), in namespace, whose joined RootShard is joined: issued by the
// LinkIssuer (CacheClientIssuer), with the subject the link policy allows a CacheClient
// (CN cache-client, O system:masters, client usage). Its key stays in this cluster.
func CacheClientCertificate(kind, namespace, owner, joined string) *cmapply.CertificateApplyConfiguration {
	leaf := pki.Leaf{Name: CacheClientName(owner), Role: CacheClientRole, CommonName: "cache-client",
		Organization: []string{"system:masters"}, Usage: pki.ClientAuth}
	spec := certificates.Leaf(namespace, leaf, pki.Labels(kind, owner, CacheClientRole), nil)
	spec.Issuer = certificates.Issuer{Name: CacheClientIssuer(joined), Kind: IssuerKind, Group: IssuerGroup}
	return certificates.Certificate(spec)
}

// ShardCertificates are the Certificates of the Shard s joined as rs (shard.Certificates),
// with its cache client (CacheClientCertificate) when its spec.cache.link names a link.
func ShardCertificates(s *operatorv1alpha1.Shard, rs *operatorv1alpha1.RootShard) []*cmapply.CertificateApplyConfiguration {
	out := shard.Certificates(s, rs)
	if s.Spec.Cache != nil && s.Spec.Cache.Link != nil {
		out = append(out, CacheClientCertificate(shard.Kind, s.Namespace, s.Name, rs.Name))
	}
	return out
}

// ResolveCacheBundles reads the cache-client data of the bundles Secret s: the CacheServer's
// URL and CA certificate, which ResolveBundles checks as a copy's. The client certificate
// the stream sends too is the home's and has no key here: a linked consumer has its own
// signed (CacheClientCertificate).
func ResolveCacheBundles(s *corev1.Secret) (*reference.Resolved, error) {
	keys := []string{BundlesKey(reference.CacheClient, reference.CacheURLKey), BundlesKey(reference.CacheClient, reference.CACertKey)}
	if err := reference.CheckKeys(s, BundlesType, keys); err != nil {
		return nil, err
	}
	u, err := reference.HTTPSURL(s, keys[0])
	if err != nil {
		return nil, err
	}
	certs, err := reference.ParseCertificates(s, keys[1], true)
	if err != nil {
		return nil, err
	}
	return &reference.Resolved{Reference: reference.CacheClient, CacheURL: u,
		CACert: reference.Certificates{PEM: s.Data[keys[1]], Certs: certs}}, nil
}

// CacheKubeconfig is the kubeconfig Secret name, in namespace, toward the CacheServer r
// (ResolveCacheBundles) with the issued client key pair: the Secret a copy of the
// cache-client Secret renders too (cacheserver.KubeconfigSecret). Nil while the client is not
// issued.
func CacheKubeconfig(namespace, name string, labels map[string]string, r *reference.Resolved, client reference.KeyPair) (*corev1ac.SecretApplyConfiguration, error) {
	if !client.Issued() {
		return nil, nil
	}
	return cacheserver.KubeconfigSecret(namespace, name, labels, r.CacheURL.String(), r.CACert.PEM, client.Cert, client.Key)
}

// CacheSigner is the CA certificate (PEM) the home's CacheServer signs cache clients from,
// as the bundles Secret s tells: of the CAs its cache-client data trusts (ca.crt: both while
// the CacheServer's CA rotates), the one that signed the home's own cache client (tls.crt,
// sent without its key), which the home issues again once its Issuer moved to the new CA.
// Nil when s holds no cache-client data or none of its CAs signed that client.
func CacheSigner(s *corev1.Secret) []byte {
	data := ReferenceData(s, reference.CacheClient)
	block, _ := pem.Decode(data[reference.ClientCertKey])
	if block == nil || block.Type != "CERTIFICATE" {
		return nil
	}
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	for rest := data[reference.CACertKey]; ; {
		if block, rest = pem.Decode(rest); block == nil {
			return nil
		}
		ca, err := x509.ParseCertificate(block.Bytes)
		if err == nil && block.Type == "CERTIFICATE" && leaf.CheckSignatureFrom(ca) == nil {
			return pem.EncodeToMemory(block)
		}
	}
}
