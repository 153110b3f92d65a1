package hostcluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// DesiredHashAnnotation holds a hash of what the controllers last applied to an object. A
// resync whose desired object hashes the same writes nothing.
const DesiredHashAnnotation = "operator.kcp.io/desired-hash"

// FieldManager is the server-side apply field manager of every write to the host cluster.
const FieldManager = pki.ManagedBy

// ApplyOptions are the options of every server-side apply to the host cluster. Force takes
// over fields that someone else changed: these objects are ours.
var ApplyOptions = metav1.ApplyOptions{FieldManager: FieldManager, Force: true}

// DesiredHash is the hash of a desired apply configuration.
func DesiredHash(desired any) (string, error) {
	data, err := json.Marshal(desired)
	if err != nil {
		return "", fmt.Errorf("hashing a desired object: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// UpToDate reports whether the existing object (nil when absent) was last applied with hash.
func UpToDate(existing metav1.Object, hash string) bool {
	return existing != nil && existing.GetAnnotations()[DesiredHashAnnotation] == hash
}

// Applied is the server-side apply of one object type to the host cluster.
type Applied[AC any] struct {
	// Kind names the type in events and errors.
	Kind string
	// Key returns the namespace and name of a desired object.
	Key func(AC) (namespace, name string)
	// Annotate adds annotations to a desired object.
	Annotate func(AC, map[string]string)
	// Mark adds labels to a desired object's metadata (and to what a controller of the host
	// writes from it, such as a Certificate's Secret), never to a selector or pod template:
	// the owner's UID (ownerMark).
	Mark func(AC, map[string]string)
	// Get reads the existing object from a cache; a NotFound error means absent.
	Get func(namespace, name string) (metav1.Object, error)
	// Apply writes the object and returns it as written.
	Apply func(ctx context.Context, desired AC) (metav1.Object, error)
	// Labels are a desired object's labels; Lookup reads an object from the host cluster
	// itself. With both set, the first write of a name the cache does not hold is preceded
	// by that read, and refused with a NameConflictError when an object of the name exists
	// that the controllers did not create for this owner (claim).
	Labels func(AC) map[string]string
	Lookup func(ctx context.Context, namespace, name string) (metav1.Object, error)
	// Also, when set, claims more names for the first write, such as a Certificate's
	// Secret, which cert-manager writes.
	Also func(ctx context.Context, desired AC) error
	// Adopt, when set, readies what kcp-operator made under desired's name for the apply
	// that takes it over (adoptable), such as a Deployment whose selector, which cannot
	// change, is not ours.
	Adopt func(ctx context.Context, existing metav1.Object, desired AC) error
	// Prepare, when set, completes a desired object from what exists, before it is hashed:
	// a CA Certificate keeps the key of the CA it renews.
	Prepare func(ctx context.Context, desired AC)
	// Returned, when set, hears each object an apply wrote, or found up to date and so did
	// not write: what the controllers hold as theirs (the LinkIssuer's remote.Applied).
	Returned func(metav1.Object)

	// generations are the generations the last applies left objects at, by namespace/name;
	// nil keeps none.
	generations *sync.Map
}

// WithDriftDetection makes the applier remember the generation each apply leaves an object
// at. An object whose spec someone else changed since (a higher generation: kubectl edit,
// another controller) is then applied again, although the desired hash is unchanged. A
// cache that lags behind our own write shows a lower generation, which is no drift. After a
// restart nothing is remembered, and the desired hash alone decides.
func (a Applied[AC]) WithDriftDetection() Applied[AC] {
	a.generations = &sync.Map{}
	return a
}

// drifted reports whether someone else changed the spec of existing since our last apply.
func (a Applied[AC]) drifted(existing metav1.Object) bool {
	if a.generations == nil {
		return false
	}
	ours, ok := a.generations.Load(existing.GetNamespace() + "/" + existing.GetName())
	return ok && existing.GetGeneration() > ours.(int64)
}

// ApplyIfChanged applies desired unless the existing object was last applied with the same
// hash; it reports whether it wrote.
func (a Applied[AC]) ApplyIfChanged(ctx context.Context, desired AC) (bool, error) {
	ns, name := a.Key(desired)
	var desiredLabels map[string]string
	if a.Labels != nil {
		if mark, ok := ownerMark(ctx, a.Labels(desired)); ok && a.Mark != nil {
			a.Mark(desired, mark)
		}
		desiredLabels = a.Labels(desired)
	}
	if a.Prepare != nil {
		a.Prepare(ctx, desired)
	}
	existing, err := a.Get(ns, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	cached := err == nil
	if cached && ownedByAnother(existing, desiredLabels) {
		// Another object derives this name and wrote it first: it stays theirs.
		return false, &NameConflictError{Kind: a.Kind, Namespace: ns, Name: name, Holder: holder(existing)}
	}
	if !cached && a.Lookup != nil && a.Labels != nil {
		adopted, err := claim(ctx, a.Kind, ns, name, desiredLabels, a.Lookup, func(ctx context.Context, existing metav1.Object) (bool, string) {
			return adoptable(ctx, a.Kind, existing)
		}, false)
		if err != nil {
			return false, err
		}
		if adopted != nil && a.Adopt != nil {
			if err := a.Adopt(ctx, adopted, desired); err != nil {
				return false, fmt.Errorf("taking over %s %s/%s from kcp-operator: %w", a.Kind, ns, name, err)
			}
		}
		if a.Also != nil {
			if err := a.Also(ctx, desired); err != nil {
				return false, err
			}
		}
	}
	// The hash of what is applied, after the claims, which may complete desired.
	hash, err := DesiredHash(desired)
	if err != nil {
		return false, err
	}
	drifted := cached && a.drifted(existing)
	if cached && UpToDate(existing, hash) && !drifted {
		a.returned(existing)
		return false, nil
	}
	a.Annotate(desired, map[string]string{DesiredHashAnnotation: hash})
	written, err := a.Apply(ctx, desired)
	observeWrite(a.Kind, err)
	if err != nil {
		return false, fmt.Errorf("applying %s %s/%s: %w", a.Kind, ns, name, err)
	}
	a.returned(written)
	if a.generations != nil && written != nil && written.GetGeneration() > 0 {
		a.generations.Store(ns+"/"+name, written.GetGeneration())
	}
	klog.FromContext(ctx).V(2).Info("Applied", "kind", a.Kind, "object", klog.KRef(ns, name), "drifted", drifted)
	return true, nil
}

// returned hands obj to Returned, when both are set.
func (a Applied[AC]) returned(obj metav1.Object) {
	if a.Returned != nil && obj != nil {
		a.Returned(obj)
	}
}
