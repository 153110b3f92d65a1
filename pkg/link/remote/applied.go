package remote

import (
	"sync"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// Applying is whether this server applied a Certificate the LinkIssuer is asked to sign for.
type Applying int

// The answers of Applied.Of.
const (
	// NotYet: nothing of the consumer was applied since this server started: its first
	// reconcile tells; the request waits.
	NotYet Applying = iota
	// Ours: the Certificate (by UID) is one an apply of this server returned.
	Ours
	// NotOurs: the consumer was reconciled, and the Certificate is none of what it applied
	// (another name, or another UID at the name).
	NotOurs
)

// Applied remembers the LinkIssuer's Certificates this server applied: per Certificate
// (namespace/name) the UID the host's Certificate applier last returned for it, written or
// found up to date (Record), and per consumer (its owner UID) how many it holds. It is
// bounded by the Certificates that exist: a deleted one is forgotten (Forget). It is memory
// only: after a restart, a consumer counts once its first reconcile applied its Certificates.
type Applied struct {
	mu           sync.Mutex
	certificates map[types.NamespacedName]appliedCertificate
	owners       map[types.UID]int
}

type appliedCertificate struct {
	uid, owner types.UID
}

// NewApplied is an empty Applied.
func NewApplied() *Applied {
	return &Applied{certificates: map[types.NamespacedName]appliedCertificate{}, owners: map[types.UID]int{}}
}

// Record is the Certificate applier's hook (hostcluster.Applied.Returned): obj is a
// Certificate as an apply wrote it or found it up to date. Only a Certificate of the
// LinkIssuer with an owner UID counts.
func (a *Applied) Record(obj metav1.Object) {
	crt, ok := obj.(*cmv1.Certificate)
	if !ok || crt.UID == "" || !isLinkIssuer(crt.Spec.IssuerRef) {
		return
	}
	owner := types.UID(crt.Labels[pki.LabelOwnerUID])
	if owner == "" {
		return
	}
	key := types.NamespacedName{Namespace: crt.Namespace, Name: crt.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.drop(key)
	a.certificates[key] = appliedCertificate{uid: crt.UID, owner: owner}
	a.owners[owner]++
}

// Forget is the Certificates informer's delete handler: a deleted Certificate (or its
// tombstone) is forgotten, if it is the one recorded.
func (a *Applied) Forget(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	crt, ok := obj.(*cmv1.Certificate)
	if !ok {
		return
	}
	key := types.NamespacedName{Namespace: crt.Namespace, Name: crt.Name}
	a.mu.Lock()
	defer a.mu.Unlock()
	if have, ok := a.certificates[key]; ok && have.uid == crt.UID {
		a.drop(key)
	}
}

// drop forgets key; a.mu is held.
func (a *Applied) drop(key types.NamespacedName) {
	have, ok := a.certificates[key]
	if !ok {
		return
	}
	delete(a.certificates, key)
	if a.owners[have.owner]--; a.owners[have.owner] <= 0 {
		delete(a.owners, have.owner)
	}
}

// Of says whether crt, which names owner as its consumer, is a Certificate this server
// applied for that consumer.
func (a *Applied) Of(crt *cmv1.Certificate, owner types.UID) Applying {
	a.mu.Lock()
	defer a.mu.Unlock()
	have, ok := a.certificates[types.NamespacedName{Namespace: crt.Namespace, Name: crt.Name}]
	switch {
	case ok && have.uid == crt.UID && have.owner == owner:
		return Ours
	case ok || a.owners[owner] > 0:
		return NotOurs
	}
	return NotYet
}
