package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

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
	// Get reads the existing object from a cache; a NotFound error means absent.
	Get func(namespace, name string) (metav1.Object, error)
	// Apply writes the object.
	Apply func(ctx context.Context, desired AC) error
}

// ApplyIfChanged applies desired unless the existing object was last applied with the same
// hash; it reports whether it wrote.
func (a Applied[AC]) ApplyIfChanged(ctx context.Context, desired AC) (bool, error) {
	hash, err := DesiredHash(desired)
	if err != nil {
		return false, err
	}
	ns, name := a.Key(desired)
	existing, err := a.Get(ns, name)
	if err != nil && !apierrors.IsNotFound(err) {
		return false, err
	}
	if err == nil && UpToDate(existing, hash) {
		return false, nil
	}
	a.Annotate(desired, map[string]string{DesiredHashAnnotation: hash})
	if err := a.Apply(ctx, desired); err != nil {
		return false, fmt.Errorf("applying %s %s/%s: %w", a.Kind, ns, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Applied", "kind", a.Kind, "object", klog.KRef(ns, name))
	return true, nil
}
