package link

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// The bundles Secret: on the remote side, what the remote server last received over the link
// of one bootstrap Secret (the stream's Bundles), kept in the remote cluster so that it
// outlives a restart of the remote server and the listener being down. It holds no private
// key: the listener sends none.
const (
	// BundlesRole is its component label.
	BundlesRole = "link-bundles"
	// BundlesType is its Secret type.
	BundlesType corev1.SecretType = "operator.kcp.io/" + BundlesRole
	// BundlesLinkCAKey is the link CA's trust bundle.
	BundlesLinkCAKey = "link-ca.crt"
	// RevisionAnnotation is the Bundles' revision it holds.
	RevisionAnnotation = pki.AnnotationPrefix + "link-bundles-revision"
)

// BundlesName is the bundles Secret of the bootstrap Secret bootstrap.
func BundlesName(bootstrap string) string { return bootstrap + "-bundles" }

// BundlesKey is the key of a bundles Secret that holds the key k of the reference Secret ref,
// such as shard-join.server-ca.crt.
func BundlesKey(ref reference.Reference, k string) string { return string(ref) + "." + k }

// Bundles builds the bundles Secret of the bootstrap Secret bootstrap, owned by it (its UID),
// from what the stream sent: per reference Secret the keyless data of it, the link CA's
// trust bundle, and the revision. It is an error when a reference's data holds a private key
// (the listener never sends one) or a key that is no Secret key.
func Bundles(bootstrap *corev1.Secret, references map[reference.Reference]map[string][]byte, linkCA []byte, revision string) (*corev1ac.SecretApplyConfiguration, error) {
	data := map[string][]byte{BundlesLinkCAKey: linkCA}
	for _, ref := range slices.Sorted(maps.Keys(references)) {
		for k, v := range references[ref] {
			if IsPrivateKey(k) {
				return nil, fmt.Errorf("the %s bundle holds the private key %q", ref, k)
			}
			data[BundlesKey(ref, k)] = v
		}
	}
	s := corev1ac.Secret(BundlesName(bootstrap.Name), bootstrap.Namespace).
		WithLabels(map[string]string{pki.LabelManagedBy: pki.ManagedBy, pki.LabelComponent: BundlesRole}).
		WithAnnotations(map[string]string{RevisionAnnotation: revision}).
		WithType(BundlesType).
		WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("Secret").
			WithName(bootstrap.Name).WithUID(bootstrap.UID)).
		WithData(data)
	return s, nil
}

// IsPrivateKey reports whether the key k of a reference Secret holds a private key: a CA's
// (<ca>.key) or a client's (tls.key).
func IsPrivateKey(k string) bool { return k == corev1.TLSPrivateKeyKey || strings.HasSuffix(k, ".key") }

// ReferenceData is the keyless data of the reference Secret ref in the bundles Secret s, as
// the stream sent it; nil when it holds none (the Link does not allow ref's consumer kind, or
// nothing was received yet).
func ReferenceData(s *corev1.Secret, ref reference.Reference) map[string][]byte {
	var out map[string][]byte
	prefix := string(ref) + "."
	for k, v := range s.Data {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if out == nil {
				out = map[string][]byte{}
			}
			out[rest] = v
		}
	}
	return out
}

// KeepOnlyKeyless is the data of a reference Secret without its private keys: what the
// listener sends of it.
func KeepOnlyKeyless(data map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(data))
	for k, v := range data {
		if !IsPrivateKey(k) {
			out[k] = v
		}
	}
	return out
}
