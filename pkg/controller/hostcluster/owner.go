package hostcluster

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Owner is the object a reconcile writes for: every host object it writes that carries the
// owner's label (pki.OwnerLabel) is marked with its UID (pki.LabelOwnerUID).
type Owner struct {
	// Kind is the owner label's kind (lower case), Name its value.
	Kind, Name string
	UID        types.UID
	// Adopt is whether the owner takes over what kcp-operator made for an object of its kind
	// and name (operatorv1alpha1.AnnotationAdopt, during a takeover only): see adoptable.
	Adopt bool
	// KcpOperatorNames are the names kcp-operator makes for the owner (KcpOperatorNames),
	// when it adopts: no other name is taken over.
	KcpOperatorNames []string
}

type ownerKey struct{}

// WithOwner is ctx for the writes of a reconcile of owner.
func WithOwner(ctx context.Context, owner Owner) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerFrom is the owner of a reconcile, when ctx is one's.
func OwnerFrom(ctx context.Context) (Owner, bool) {
	o, ok := ctx.Value(ownerKey{}).(Owner)
	return o, ok && o.UID != ""
}

// ownerMark is the UID label a desired object with labels gets in ctx: only an object that
// carries the reconciled owner's label is its; the namespace's shared bootstrap PKI, and an
// object a reconcile writes for another owner, are not marked.
func ownerMark(ctx context.Context, labels map[string]string) (map[string]string, bool) {
	o, ok := OwnerFrom(ctx)
	if !ok || labels[pki.OwnerLabel(o.Kind)] != o.Name {
		return nil, false
	}
	return map[string]string{pki.LabelOwnerUID: string(o.UID)}, true
}

// ownedByAnother reports whether existing is marked as another owner's than desired says:
// both carry an owner UID, and they differ. An object from before the mark, without one, is
// judged by its labels alone.
func ownedByAnother(existing metav1.Object, desired map[string]string) bool {
	have, want := existing.GetLabels()[pki.LabelOwnerUID], desired[pki.LabelOwnerUID]
	return have != "" && want != "" && have != want
}

// markedFor reports whether a host object may be deleted for the owner with uid: it carries
// that UID, or no UID at all (written before the mark existed; its other labels already
// named the owner).
func markedFor(o metav1.Object, uid types.UID) bool {
	have := o.GetLabels()[pki.LabelOwnerUID]
	return have == "" || have == string(uid)
}

// OwnedSelectors select what the controllers created for the object of kind, name and uid:
// what carries its UID, and what was written before the UID mark and carries none. Another
// object's of the same kind and name (a leftover of a deleted one) is in neither.
func OwnedSelectors(kind, name string, uid types.UID) []string {
	base := labels.Set{pki.LabelManagedBy: pki.ManagedBy, pki.OwnerLabel(kind): name}
	if uid == "" {
		return []string{labels.SelectorFromSet(base).String()}
	}
	marked := labels.SelectorFromSet(labels.Merge(base, labels.Set{pki.LabelOwnerUID: string(uid)}))
	unmarked, _ := labels.NewRequirement(pki.LabelOwnerUID, selection.DoesNotExist, nil)
	return []string{marked.String(), labels.SelectorFromSet(base).Add(*unmarked).String()}
}

// OwnedSelector selects what the controllers created for the object name of kind.
func OwnedSelector(kind, name string) string {
	return labels.SelectorFromSet(labels.Set{pki.LabelManagedBy: pki.ManagedBy, pki.OwnerLabel(kind): name}).String()
}
