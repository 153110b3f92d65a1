package link

import (
	"errors"
	"maps"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// ErrBundlesNotReceived: the bundles Secret of a bootstrap Secret is not there, or is not the
// bootstrap's (another owner UID): nothing was received over that link yet.
var ErrBundlesNotReceived = errors.New("link bundles not received")

// BundlesNotReceived is the error of a linked consumer whose bootstrap Secret has no bundles
// Secret yet, with the reason operatorv1alpha1.ReasonLinkBundlesNotReceived.
func BundlesNotReceived(namespace, bootstrap string) *reference.Error {
	return reference.Problem(operatorv1alpha1.ReasonLinkBundlesNotReceived, ErrBundlesNotReceived,
		"Secret %s/%s not found: nothing was received over the link of the bootstrap Secret %s yet", namespace, BundlesName(bootstrap), bootstrap)
}

// OwnedBy reports whether the bundles Secret s is the one of the bootstrap Secret bootstrap:
// owned by it, by its UID. Another one of the same name (left over by a bootstrap deleted and
// carried again, or written by someone else) is not read.
func OwnedBy(s, bootstrap *corev1.Secret) bool {
	for _, o := range s.OwnerReferences {
		if o.APIVersion == "v1" && o.Kind == "Secret" && o.Name == bootstrap.Name && o.UID == bootstrap.UID {
			return true
		}
	}
	return false
}

// ResolveBundles reads the keyless data of the reference Secret ref in the bundles Secret s
// (ReferenceData) and checks it as reference.ResolveKeyless does: the certificates and trust
// bundles are there and well-formed, and no CA has a key (a cache client's: its URL and CA,
// ResolveCacheBundles). Its errors name the keys of s (shard-join.server-ca.crt). A bundles Secret without ref's data (the Link does not allow
// the consumer's kind) is ReferenceSecretInvalid, saying so.
func ResolveBundles(s *corev1.Secret, ref reference.Reference) (*reference.Resolved, error) {
	if s == nil {
		return nil, errors.New("no bundles Secret")
	}
	if s.Type == BundlesType && ReferenceData(s, ref) == nil {
		if ref == reference.CacheClient {
			return nil, reference.Problem(operatorv1alpha1.ReasonLinkNamesNoCacheServer, reference.ErrMissingKey,
				"Secret %s/%s holds no %s data: the Link of its bootstrap Secret names no CacheServer (spec.cacheServerRef)",
				s.Namespace, s.Name, ref)
		}
		return nil, reference.Invalid(s, reference.ErrMissingKey, "holds no %s data: the Link of its bootstrap Secret does not allow this consumer's kind", ref)
	}
	if ref == reference.CacheClient {
		return ResolveCacheBundles(s)
	}
	return reference.ResolveKeyless(s, BundlesType, ref, BundlesKey(ref, ""))
}

// Join is what the linked consumer owner of kind, in namespace, realizes from r, the keyless
// data of its bundles Secret (ResolveBundles): reference.Join's RootShard and trust bundles,
// no CA Secret and no CA Issuer, and every certificate built for it that names a local CA
// Issuer of that RootShard (pki.CAName of the joined RootShard) issued by the LinkIssuer of
// the same name (Joined.Issue), which signs over the link from the CA r names for its role
// (Joined.Signers: when the home's Issuer moves to another CA, as a rotation has it, the
// certificates it signed before are issued again). A key in r is dropped: a linked consumer
// writes none.
func Join(kind, namespace, owner string, r *reference.Resolved) reference.Joined {
	keyless := *r
	keyless.CAs = maps.Clone(r.CAs)
	for ca, pair := range keyless.CAs {
		pair.PEM.Key = nil
		keyless.CAs[ca] = pair
	}
	j := reference.Join(kind, namespace, owner, &keyless)
	local := map[string]bool{}
	j.Signers = map[string][]byte{}
	for _, ca := range r.Reference.KeyPairs() {
		name := pki.CAName(j.RootShard.Name, ca)
		local[name] = true
		j.Signers[name] = r.CAs[ca].PEM.Cert
	}
	j.Issue = func(c *cmapply.CertificateApplyConfiguration) { issueOverLink(local, c) }
	return j
}

// issueOverLink makes c issued by the LinkIssuer when its issuerRef is a local CA Issuer, one
// of local: the name stays, the kind and group become the LinkIssuer's. A certificate of
// another issuer (a CacheServer's of the remote cluster, a user's template's) is left alone.
func issueOverLink(local map[string]bool, c *cmapply.CertificateApplyConfiguration) {
	if c == nil || c.Spec == nil || c.Spec.IssuerRef == nil || c.Spec.IssuerRef.Name == nil || !local[*c.Spec.IssuerRef.Name] {
		return
	}
	ref := c.Spec.IssuerRef
	if (ref.Kind != nil && *ref.Kind != "" && *ref.Kind != "Issuer") || (ref.Group != nil && *ref.Group != "" && *ref.Group != "cert-manager.io") {
		return
	}
	ref.WithKind(IssuerKind).WithGroup(IssuerGroup)
}
