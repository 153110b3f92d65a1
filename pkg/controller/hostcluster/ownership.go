package hostcluster

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// NameConflictError is an object that exists in the host cluster under a name a setup
// derives, and that the setup did not create.
type NameConflictError struct {
	// Kind, Namespace and Name are the existing object's.
	Kind, Namespace, Name string
	// Holder says whose it is, as far as its labels tell.
	Holder string
}

func (e *NameConflictError) Error() string {
	return fmt.Sprintf("%s %s/%s exists and was not created for this object (%s): the server never writes, adopts or deletes "+
		"what it did not create; delete or rename that %s, or rename this object", e.Kind, e.Namespace, e.Name, e.Holder, e.Kind)
}

// OwnedBy reports whether existing is the object the controllers would write with the
// desired labels: it carries the managed-by label, and exactly the labels of the server's own
// domain that desired carries (the owner's kind and name, a reference Secret's kind), with the
// same values. The namespace's bootstrap PKI, which every setup of the namespace shares,
// carries no owner label: it belongs to all of them, and an owner's object is never its.
func OwnedBy(existing metav1.Object, desired map[string]string) bool {
	have := existing.GetLabels()
	if have[pki.LabelManagedBy] != pki.ManagedBy {
		return false
	}
	return maps.Equal(ownLabels(have), ownLabels(desired)) && !ownedByAnother(existing, desired)
}

// ownLabels are the labels of the server's own domain among labels, but the owner's UID,
// which ownedByAnother compares.
func ownLabels(labels map[string]string) map[string]string {
	own := map[string]string{}
	for k, v := range labels {
		if strings.HasPrefix(k, pki.AnnotationPrefix) && k != pki.LabelOwnerUID {
			own[k] = v
		}
	}
	return own
}

// holder says whose an existing object is, from its labels.
func holder(existing metav1.Object) string {
	have := existing.GetLabels()
	if have[pki.LabelManagedBy] != pki.ManagedBy {
		return "not by kcp-setups"
	}
	var owners []string
	for k, v := range have {
		if k == pki.LabelOwnerUID {
			owners = append(owners, "UID "+v)
			continue
		}
		if kind, ok := strings.CutPrefix(k, pki.AnnotationPrefix); ok {
			owners = append(owners, kind+" "+v)
		}
	}
	if len(owners) == 0 {
		return "by kcp-setups, for another object"
	}
	sort.Strings(owners)
	return "by kcp-setups for " + strings.Join(owners, ", ")
}

// byName lists the one object of a name: a list needs no other verb than the caches' own,
// and, with no resourceVersion, reads as fresh as a get.
func byName(name string) metav1.ListOptions {
	return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
}

// listed is the object of a name in what a list by that name returned, or a NotFound error.
func listed(name string, list runtime.Object, err error) (metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		if o, ok := item.(metav1.Object); ok && o.GetName() == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{}, name)
}

// claim checks, before the first write of a name the cache does not hold, that no object of
// that name exists that the controllers did not create for this owner: the caches hold only
// what carries the managed-by label, so a foreign object looks absent to them. The read goes
// to the host cluster itself. What kcp-operator made for an owner that adopts it (adopt, as
// adoptable) is returned, to be taken over. With marked, an object of ours must carry the
// owner's UID when desired does: what the labels alone say anyone may have written.
func claim(ctx context.Context, kind, namespace, name string, desired map[string]string,
	lookup func(ctx context.Context, namespace, name string) (metav1.Object, error),
	adopt func(ctx context.Context, existing metav1.Object) (bool, string), marked bool) (adopted metav1.Object, err error) {
	existing, err := lookup(ctx, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s before its first write: %w", kind, namespace, name, err)
	}
	if OwnedBy(existing, desired) && (!marked || ownMarked(ctx, existing, desired)) {
		// Ours, and the cache is behind.
		return nil, nil
	}
	ok, why := adopt(ctx, existing)
	if ok {
		klog.FromContext(ctx).Info("Taking over what kcp-operator made", "kind", kind, "object", klog.KRef(namespace, name))
		return existing, nil
	}
	h := holder(existing)
	if why != "" {
		h += "; " + why
	}
	return nil, &NameConflictError{Kind: kind, Namespace: namespace, Name: name, Holder: h}
}

// ownMarked reports whether existing carries the UID the reconcile's owner marks desired with
// (ownerMark), or desired is no owner's (the namespace's shared bootstrap PKI).
func ownMarked(ctx context.Context, existing metav1.Object, desired map[string]string) bool {
	mark, ok := ownerMark(ctx, desired)
	return !ok || existing.GetLabels()[pki.LabelOwnerUID] == mark[pki.LabelOwnerUID]
}
