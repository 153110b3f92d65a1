package rotation

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
)

// LinkMemberKind is the kind by which a rotation excludes the consumers of a Link from its
// wait (status.rotations[].excludedMembers, by the Link's name).
const LinkMemberKind = "Link"

// Linked is a consumer in a remote cluster, as its remote last reported it over a Link
// (status.consumers): a rotation waits for it as for a member, by what it says its pods
// trust.
type Linked struct {
	// Link is the name of the Link it was reported over, in the RootShard's namespace.
	Link string
	// Kind, Namespace and Name are the consumer's, in the remote cluster.
	Kind, Namespace, Name string
	// LastSeen is when the home last accepted a report of it.
	LastSeen metav1.Time
	// Trust are, by CA role (an authority's name), the SHA-256 fingerprints of the CA
	// certificates its pods trust, and of those its own certificates from that CA chain to.
	Trust map[string]LinkedTrust
}

// LinkedTrust is what a linked consumer reported of one CA.
type LinkedTrust struct {
	Trusted, Served []string
}

// LinkedOf are the consumers that the Links' statuses list.
func LinkedOf(links []*operatorv1alpha1.Link) []Linked {
	var out []Linked
	for _, l := range links {
		for _, c := range l.Status.Consumers {
			lc := Linked{Link: l.Name, Kind: c.Kind, Namespace: c.Namespace, Name: c.Name, LastSeen: c.LastSeen, Trust: map[string]LinkedTrust{}}
			for _, t := range c.Trust {
				lc.Trust[t.CA] = LinkedTrust{Trusted: t.Trusted, Served: t.Served}
			}
			out = append(out, lc)
		}
	}
	return out
}

// waitsForLinked reports whether the rotation st waits for the linked consumer c: unless the
// rotation excludes its Link, or it reports nothing of the rotating CA (it uses none of it).
func waitsForLinked(st operatorv1alpha1.CARotationState, c Linked) bool {
	if slices.Contains(st.ExcludedMembers, operatorv1alpha1.CARotationMember{Kind: LinkMemberKind, Name: c.Link}) {
		return false
	}
	_, ok := c.Trust[st.Authority]
	return ok
}

// UnsettledLinked describes each linked consumer the rotation st waits for whose report does
// not allow its next step yet, given the fingerprints of its old and new CA (old is empty
// once the old slot is gone):
//   - while Preparing, and while Completing before the old CA is dropped, its pods must trust
//     both CAs;
//   - while Completing, before the old CA is dropped, its own certificates from the CA must
//     come from the new one, where it reports them;
//   - once the old CA is dropped, its pods must trust the new CA alone.
func UnsettledLinked(st operatorv1alpha1.CARotationState, linked []Linked, oldCA, newCA string) []string {
	if !Running(st) || newCA == "" {
		return nil
	}
	var out []string
	for _, c := range linked {
		if !waitsForLinked(st, c) {
			continue
		}
		t := c.Trust[st.Authority]
		var missing string
		switch {
		case pki.OldDropped(&st):
			if !slices.Equal(t.Trusted, []string{newCA}) {
				missing = fmt.Sprintf("to trust the new %s CA alone", st.Authority)
			}
		case !slices.Contains(t.Trusted, newCA) || (oldCA != "" && !slices.Contains(t.Trusted, oldCA)):
			missing = fmt.Sprintf("to trust both %s CAs", st.Authority)
		case st.Phase == operatorv1alpha1.CARotationCompleting && st.LeavesSwitched && len(t.Served) > 0 && !slices.Equal(t.Served, []string{newCA}):
			missing = fmt.Sprintf("its certificates to come from the new %s CA", st.Authority)
		}
		if missing != "" {
			out = append(out, fmt.Sprintf("%s %s/%s of Link %s %s (last seen %s)", c.Kind, c.Namespace, c.Name, c.Link, missing,
				c.LastSeen.UTC().Format("2006-01-02T15:04:05Z")))
		}
	}
	return out
}
