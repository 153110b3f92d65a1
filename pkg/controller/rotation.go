package controller

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// SetRotationCondition sets operatorv1alpha1.ConditionCARotation from rotations, or removes it
// when none runs. waiting names, by authority, what a running rotation waits for before its
// next step (hostcluster.RotationWaits); the message names the first few of each.
func SetRotationCondition(conditions *[]metav1.Condition, generation int64, rotations []operatorv1alpha1.CARotationState, waiting map[string][]string) {
	var running, prepared []string
	for _, st := range rotations {
		switch st.Phase {
		case operatorv1alpha1.CARotationPreparing, operatorv1alpha1.CARotationCompleting:
			if w := waiting[st.Authority]; len(w) > 0 {
				running = append(running, fmt.Sprintf("%s (%s, waiting for %s)", st.Authority, st.Phase, FirstFew(w, maxWaitsNamed)))
			} else {
				running = append(running, fmt.Sprintf("%s (%s)", st.Authority, st.Phase))
			}
		case operatorv1alpha1.CARotationPrepared:
			prepared = append(prepared, st.Authority)
		}
	}
	sort.Strings(running)
	sort.Strings(prepared)
	switch {
	case len(running) > 0:
		SetCondition(conditions, generation, operatorv1alpha1.ConditionCARotation, metav1.ConditionFalse, operatorv1alpha1.ReasonRotating,
			"rotating the CAs "+strings.Join(running, "; "))
	case len(prepared) > 0:
		SetCondition(conditions, generation, operatorv1alpha1.ConditionCARotation, metav1.ConditionTrue, operatorv1alpha1.ReasonWaitingForComplete,
			fmt.Sprintf("the CAs %s are Prepared: every bundle trusts the old and the new CA; ask for phase Complete to drop the old ones", strings.Join(prepared, ", ")))
	default:
		meta.RemoveStatusCondition(conditions, operatorv1alpha1.ConditionCARotation)
	}
}

// maxWaitsNamed bounds what the condition names of one rotation's waits; the rest are
// counted.
const maxWaitsNamed = 3

// maxConditionMessage bounds a member's condition message quoted in a rotation's.
const maxConditionMessage = 120

// FirstFew joins the first n of items, and says how many more there are.
func FirstFew(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// RotationMember is an object a RootShard's rotations wait for to be Available again: one of
// its Shards, FrontProxies and VirtualWorkspaces.
type RotationMember struct {
	Kind, Namespace, Name string
	// Created is the member's creationTimestamp.
	Created    metav1.Time
	Conditions []metav1.Condition
}

// RotationMembers are the members of a RootShard: its Shards, FrontProxies and
// VirtualWorkspaces, in that order.
func RotationMembers(shards []*operatorv1alpha1.Shard, proxies []*operatorv1alpha1.FrontProxy, vws []*operatorv1alpha1.VirtualWorkspace) []RotationMember {
	var out []RotationMember
	for _, s := range shards {
		out = append(out, RotationMember{Kind: "Shard", Namespace: s.Namespace, Name: s.Name, Created: s.CreationTimestamp, Conditions: s.Status.Conditions})
	}
	for _, fp := range proxies {
		out = append(out, RotationMember{Kind: "FrontProxy", Namespace: fp.Namespace, Name: fp.Name, Created: fp.CreationTimestamp, Conditions: fp.Status.Conditions})
	}
	for _, vw := range vws {
		out = append(out, RotationMember{Kind: "VirtualWorkspace", Namespace: vw.Namespace, Name: vw.Name, Created: vw.CreationTimestamp, Conditions: vw.Status.Conditions})
	}
	return out
}

// WaitsFor reports whether the rotation st waits for the member m: unless the rotation
// excludes it (status.rotations[].excludedMembers), or m was created after Start
// (lastInitiationTime), with the bundles of both CAs from the first.
func WaitsFor(st operatorv1alpha1.CARotationState, m RotationMember) bool {
	if slices.Contains(st.ExcludedMembers, operatorv1alpha1.CARotationMember{Kind: m.Kind, Name: m.Name}) {
		return false
	}
	return st.LastInitiationTime == nil || !m.Created.After(st.LastInitiationTime.Time)
}

// UnavailableMembers describes each member of members that the rotation st waits for and
// that is not Available, in the order given (Unavailable).
func UnavailableMembers(st operatorv1alpha1.CARotationState, members []RotationMember) []string {
	var out []string
	for _, m := range members {
		if WaitsFor(st, m) && !meta.IsStatusConditionTrue(m.Conditions, operatorv1alpha1.ConditionAvailable) {
			out = append(out, Unavailable(m.Kind, m.Namespace, m.Name, m.Conditions))
		}
	}
	return out
}

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
