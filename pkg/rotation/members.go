package rotation

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Member is an object a rotation waits for to be Available again: the rotating object
// itself, and a RootShard's Shards, FrontProxies and VirtualWorkspaces.
type Member struct {
	Kind, Namespace, Name string
	// Created is the member's creationTimestamp.
	Created    metav1.Time
	Conditions []metav1.Condition
}

// Members are the members of a RootShard: its Shards, FrontProxies and VirtualWorkspaces, in
// that order.
func Members(shards []*operatorv1alpha1.Shard, proxies []*operatorv1alpha1.FrontProxy, vws []*operatorv1alpha1.VirtualWorkspace) []Member {
	var out []Member
	for _, s := range shards {
		out = append(out, Member{Kind: "Shard", Namespace: s.Namespace, Name: s.Name, Created: s.CreationTimestamp, Conditions: s.Status.Conditions})
	}
	for _, fp := range proxies {
		out = append(out, Member{Kind: "FrontProxy", Namespace: fp.Namespace, Name: fp.Name, Created: fp.CreationTimestamp, Conditions: fp.Status.Conditions})
	}
	for _, vw := range vws {
		out = append(out, Member{Kind: "VirtualWorkspace", Namespace: vw.Namespace, Name: vw.Name, Created: vw.CreationTimestamp, Conditions: vw.Status.Conditions})
	}
	return out
}

// WaitsFor reports whether the rotation st waits for the member m: unless the rotation
// excludes it (status.rotations[].excludedMembers), or m was created after Start
// (lastInitiationTime), with the bundles of both CAs from the first.
func WaitsFor(st operatorv1alpha1.CARotationState, m Member) bool {
	if slices.Contains(st.ExcludedMembers, operatorv1alpha1.CARotationMember{Kind: m.Kind, Name: m.Name}) {
		return false
	}
	return st.LastInitiationTime == nil || !m.Created.After(st.LastInitiationTime.Time)
}

// UnavailableMembers describes each member of members that the rotation st waits for and
// that is not Available, in the order given (Unavailable).
func UnavailableMembers(st operatorv1alpha1.CARotationState, members []Member) []string {
	var out []string
	for _, m := range members {
		if WaitsFor(st, m) && !meta.IsStatusConditionTrue(m.Conditions, operatorv1alpha1.ConditionAvailable) {
			out = append(out, Unavailable(m.Kind, m.Namespace, m.Name, m.Conditions))
		}
	}
	return out
}

// maxConditionMessage bounds a member's condition message quoted in a rotation's.
const maxConditionMessage = 120

// Unavailable describes an object that is not Available, with its condition's status,
// reason and (the start of its) message: `FrontProxy team-a/fp (Available=False,
// Unschedulable: …)`.
func Unavailable(kind, namespace, name string, conditions []metav1.Condition) string {
	c := meta.FindStatusCondition(conditions, operatorv1alpha1.ConditionAvailable)
	if c == nil {
		return fmt.Sprintf("%s %s/%s (no Available condition yet)", kind, namespace, name)
	}
	msg := c.Message
	if r := []rune(msg); len(r) > maxConditionMessage {
		msg = string(r[:maxConditionMessage]) + "…"
	}
	if msg == "" {
		return fmt.Sprintf("%s %s/%s (Available=%s, %s)", kind, namespace, name, c.Status, c.Reason)
	}
	return fmt.Sprintf("%s %s/%s (Available=%s, %s: %s)", kind, namespace, name, c.Status, c.Reason, msg)
}

// Writes is what a rotation waits for after a reconcile that wrote to the host: for its
// writes to reach the pods. It does not count them, so that the message, and the status,
// stays the same from one such reconcile to the next.
const Writes = "the last reconcile's writes to the host to settle"

// SigningKeys is what the service-account CA's rotation waits for before the shards sign
// with their new keys (Read.SigningKeysTrusted).
const SigningKeys = "every shard's new service-account key, issued and in its <shard>-service-account-trust"

// FirstFew joins the first n of items, and says how many more there are.
func FirstFew(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
