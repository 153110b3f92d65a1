package link

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Observed is what a remote server reads of one of its linked consumers, to report it.
type Observed struct {
	// Conditions are the consumer's status conditions.
	Conditions []metav1.Condition
	// Trust are, by CA role, the trust bundles (PEM) the consumer's pods mount for that CA.
	Trust map[pki.CA][]byte
	// Issued are, by CA role, the certificates (PEM, the leaf first) the consumer holds from
	// that CA: its serving certificate for the server CA, its client certificates.
	Issued map[pki.CA][][]byte
	// KcpShard and BaseURL are the kcp shard a Shard registered and its base URL.
	KcpShard, BaseURL string
}

// Realized reports whether the consumer's conditions say everything of it was realized:
// its references valid and its certificates ready, where it has those conditions.
func Realized(conditions []metav1.Condition) bool {
	for _, t := range []string{operatorv1alpha1.ConditionReferenceValid, operatorv1alpha1.ConditionCertificatesReady} {
		if c := meta.FindStatusCondition(conditions, t); c != nil && c.Status != metav1.ConditionTrue {
			return false
		}
	}
	return meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionReferenceValid) != nil
}

// ReportOf is the ConsumerReport of what the remote observed of a consumer: per CA, the
// fingerprints (pki.Fingerprint) of the CAs its pods trust, and of those among them that its
// certificates from that CA chain to; both sorted. A certificate that none of the trusted
// CAs signed is reported by the fingerprint of no CA: it is left out.
func ReportOf(o Observed) (ConsumerReport, error) {
	r := ConsumerReport{Realized: Realized(o.Conditions), KcpShard: o.KcpShard, BaseURL: o.BaseURL,
		Available: meta.IsStatusConditionTrue(o.Conditions, operatorv1alpha1.ConditionAvailable)}
	for _, ca := range slices.Sorted(maps.Keys(o.Trust)) {
		cas, err := certificates(o.Trust[ca])
		if err != nil {
			return ConsumerReport{}, fmt.Errorf("the %s CA's trust bundle: %w", ca, err)
		}
		t := CATrust{}
		for _, c := range cas {
			t.Trusted = append(t.Trusted, pki.Fingerprint(c))
		}
		for i, issued := range o.Issued[ca] {
			leaves, err := certificates(issued)
			if err != nil || len(leaves) == 0 {
				return ConsumerReport{}, fmt.Errorf("certificate %d of the %s CA: %v", i+1, ca, err)
			}
			for _, c := range cas {
				if leaves[0].CheckSignatureFrom(c) == nil {
					t.Served = append(t.Served, pki.Fingerprint(c))
				}
			}
		}
		slices.Sort(t.Trusted)
		t.Trusted = slices.Compact(t.Trusted)
		slices.Sort(t.Served)
		t.Served = slices.Compact(t.Served)
		if r.CAs == nil {
			r.CAs = map[pki.CA]CATrust{}
		}
		r.CAs[ca] = t
	}
	return r, nil
}

// certificates are the certificates of a PEM bundle.
func certificates(bundle []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return out, nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

// Without is the PEM of the certificates of bundle that none of others holds, in order: what
// a bundle that merges several CAs' certificates (the merged client CA bundle: the client
// and the front-proxy-client CAs) trusts of one of them, others being what the home says of
// the other CAs. A certificate of the bundle that others no longer name (an old CA the home
// dropped, still in a bundle not yet refreshed) stays in it: a consumer is never reported to
// have dropped a CA its pods may still trust. A block that does not parse is kept.
func Without(bundle []byte, others ...[]byte) []byte {
	skip := map[string]bool{}
	for _, o := range others {
		cs, _ := certificates(o)
		for _, c := range cs {
			skip[pki.Fingerprint(c)] = true
		}
	}
	var out []byte
	for rest := bundle; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return out
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		if c, err := x509.ParseCertificate(block.Bytes); err == nil && skip[pki.Fingerprint(c)] {
			continue
		}
		out = append(out, pem.EncodeToMemory(block)...)
	}
}
