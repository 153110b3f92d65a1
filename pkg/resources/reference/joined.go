package reference

import (
	"net"
	"slices"
	"strconv"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	certs "github.com/kcp-setups/apiserver/pkg/resources/certificates"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/rootshard"
)

// Joined is what a consumer of a reference Secret realizes from it: the RootShard it joins,
// as the builders of the shard, front-proxy and kubeconfig packages read one, and the local
// copies of the RootShard's CAs it issues from.
//
// The RootShard exists only in memory: it is named after the consumer (JoinedName), lives
// in the consumer's namespace, has the URLs of the Secret, and its CAs are local Secrets
// written from the Secret's key pairs, each behind a local CA Issuer of the same name, as a
// RootShard's are. So the builders name, sign and mount everything as they do for a
// RootShard in the same namespace, and each chain ends in the real RootShard's root CA.
type Joined struct {
	RootShard *operatorv1alpha1.RootShard
	// Secrets are the local CA Secrets (kubernetes.io/tls, each key pair received: an
	// Issuer's, mounted by no pod), each CA's trust bundle <ca>-trust (what the pods mount to
	// trust it), the root CA's certificate, and the merged client CA and server CA bundles,
	// all owned by the consumer.
	Secrets []*corev1ac.SecretApplyConfiguration
	// Issuers are the local CA Issuers, one per key pair received.
	Issuers []*cmapply.IssuerApplyConfiguration
	// Issue, when set, makes a certificate built for the consumer issued by another issuer
	// than the local CA Issuer it names: a linked consumer has no local CA Issuer, its
	// certificates are signed over the link (link.Join). Nil for a copy.
	Issue func(*cmapply.CertificateApplyConfiguration)
	// Signers are the CA certificates (PEM) the issuers of Issue sign from, by issuer name: a
	// certificate that the current one did not sign is issued again
	// (hostcluster.Host.ReissueStaleLeaves), as one whose local CA changed is. Nil for a copy.
	Signers map[string][]byte
}

// SignersOf are j's Signers; none for nil.
func (j *Joined) SignersOf() map[string][]byte {
	if j == nil {
		return nil
	}
	return j.Signers
}

// IssuedBy is certs, each as j issues it: j.Issue applied, when j has one. certs are the
// builders' fresh values, changed in place.
func (j *Joined) IssuedBy(certs []*cmapply.CertificateApplyConfiguration) []*cmapply.CertificateApplyConfiguration {
	if j == nil || j.Issue == nil {
		return certs
	}
	for _, c := range certs {
		j.Issue(c)
	}
	return certs
}

// trustedByPods are the CAs whose certificates pods mount through pki.TrustSecretOf; the
// others they trust through the merged bundles, the root CA's Secret and the etcd trusts.
var trustedByPods = []pki.CA{pki.ServerCA, pki.RequestHeaderClientCA}

// JoinedName is the name of the in-memory RootShard of a consumer of kind (shard,
// frontproxy, kubeconfig) named owner: the prefix of its local CA Secrets and Issuers, such
// as <shard>-shard-root-server-ca.
func JoinedName(kind, owner string) string {
	switch kind {
	case "frontproxy":
		return owner + "-front-proxy-root"
	default:
		return owner + "-" + kind + "-root"
	}
}

// JoinedRootShard is the RootShard of a consumer's copy without what the copy holds: enough
// for the names of what the consumer writes and mounts.
func JoinedRootShard(kind, namespace, owner string) *operatorv1alpha1.RootShard {
	// Its pods trust each CA through <ca>-trust, which Join writes from the copy, whatever
	// the names of a rotation in the RootShard's status would be (pki.TrustSecretOf).
	rs := &operatorv1alpha1.RootShard{ObjectMeta: metav1.ObjectMeta{Name: JoinedName(kind, owner), Namespace: namespace,
		Annotations: map[string]string{pki.JoinedAnnotation: "true"}}}
	// The server CA bundle, not the server CA alone, verifies the installation: the
	// RootShard's caBundleSecretRef may have added a CA to it.
	rs.Spec.CABundleSecretRef = &corev1.LocalObjectReference{Name: rootshard.MergedCABundleName(rs)}
	return rs
}

// Join builds what the consumer owner of kind, in namespace, realizes from r, a resolved
// shard-join, front-proxy-join or kubeconfig-issuer Secret. A keyless r (ResolveKeyless)
// gives no local CA Secret and no CA Issuer: the trust bundles and the RootShard alone.
func Join(kind, namespace, owner string, r *Resolved) Joined {
	rs := JoinedRootShard(kind, namespace, owner)
	name := rs.Name
	rs.Spec.ShardBaseURL = r.RootShardURL.String()
	rs.Spec.External = externalConfig(r)

	j := Joined{RootShard: rs}
	labels := func(component string) map[string]string { return pki.Labels(kind, owner, component) }
	for _, ca := range r.Reference.KeyPairs() {
		pair := r.CAs[ca]
		secretName := pki.CAName(name, ca)
		if len(pair.PEM.Key) > 0 {
			j.Secrets = append(j.Secrets, corev1ac.Secret(secretName, namespace).
				WithLabels(labels(ca.TemplateKey())).
				WithType(corev1.SecretTypeTLS).
				WithData(map[string][]byte{corev1.TLSCertKey: pair.PEM.Cert, corev1.TLSPrivateKeyKey: pair.PEM.Key}))
			j.Issuers = append(j.Issuers, certs.CAIssuer(namespace, secretName, secretName, labels(ca.TemplateKey())))
		}
		if slices.Contains(trustedByPods, ca) {
			// What the pods trust: both CAs while the RootShard rotates this one, the key
			// pair being the one its Issuer signs from (docs/rotation.md).
			j.Secrets = append(j.Secrets, certs.TrustBundle(namespace, secretName, labels(ca.TemplateKey()+pki.TrustSuffix), r.Trust[ca].PEM))
		}
	}
	if len(r.RootCA.PEM) > 0 {
		j.Secrets = append(j.Secrets, certs.BundleSecret(namespace, kcp.RootCASecret(rs), labels("ca"), r.RootCA.PEM))
	}
	if len(r.ClientCABundle.PEM) > 0 {
		j.Secrets = append(j.Secrets, certs.BundleSecret(namespace, kcp.MergedClientCAName(rs), labels("merged-client-ca"), r.ClientCABundle.PEM))
	}
	j.Secrets = append(j.Secrets, certs.BundleSecret(namespace, rootshard.MergedCABundleName(rs), labels("merged-ca-bundle"), r.ServerCABundle.PEM))
	if client, peer := r.Trust[pki.EtcdClientCA], r.Trust[pki.EtcdPeerCA]; len(client.PEM) > 0 && len(peer.PEM) > 0 {
		// A managed etcd trusts each of its CAs alone (its live slots), as the RootShard's
		// own do.
		j.Secrets = append(j.Secrets,
			certs.BundleSecret(namespace, etcd.ClientTrustSecret(name), labels("etcd-client-trust"), client.PEM),
			certs.BundleSecret(namespace, etcd.PeerTrustSecret(name), labels("etcd-peer-trust"), peer.PEM))
	}
	return j
}

// externalConfig is the RootShard's external address from the Secret's external URLs: the
// external-admin-url is the private address when it differs from the external one.
func externalConfig(r *Resolved) operatorv1alpha1.ExternalConfig {
	host, port := hostPort(r.ExternalURL.Host)
	e := operatorv1alpha1.ExternalConfig{Hostname: host, Port: port}
	if r.ExternalAdminURL != nil && r.ExternalAdminURL.Host != r.ExternalURL.Host {
		h, p := hostPort(r.ExternalAdminURL.Host)
		e.PrivateHostname = h
		e.PrivatePort = &p
	}
	return e
}

// hostPort splits an https URL's host; without a port, it is https' 443.
func hostPort(hostport string) (string, int32) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, 443
	}
	p, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		return host, 443
	}
	return host, int32(p)
}
