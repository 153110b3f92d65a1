package remote

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/kcp-setups/apiserver/pkg/link"
	"github.com/kcp-setups/apiserver/pkg/pki"
	linkpki "github.com/kcp-setups/apiserver/pkg/resources/link"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// References is the reference Secret each consumer kind joins with: the keys of
// Bundles.References, and what the bundles Secret names them by.
var References = map[link.ConsumerKind]reference.Reference{
	link.Shard:       reference.ShardJoin,
	link.FrontProxy:  reference.FrontProxyJoin,
	link.Kubeconfig:  reference.KubeconfigIssuer,
	link.CacheClient: reference.CacheClient,
}

// referencesOf are the Bundles' references by reference Secret; an error for a consumer kind
// it does not know (a newer home's), which would otherwise be dropped unseen.
func referencesOf(b link.Bundles) (map[reference.Reference]map[string][]byte, error) {
	out := make(map[reference.Reference]map[string][]byte, len(b.References))
	for kind, data := range b.References {
		ref, ok := References[kind]
		if !ok {
			return nil, fmt.Errorf("the bundles of revision %s hold the consumer kind %q, which this server does not know", b.Revision, kind)
		}
		out[ref] = data
	}
	return out, nil
}

// writeBundles writes b into the bundles Secret of the bootstrap Secret bootstrap, by
// server-side apply, unless the Secret holds b's revision already. A Secret of that name that
// the bootstrap Secret (by its UID) does not own is another's: it is left as it is.
// It reports whether it wrote.
func writeBundles(ctx context.Context, kube kubernetes.Interface, bootstrap *corev1.Secret, b link.Bundles) (bool, error) {
	secrets := kube.CoreV1().Secrets(bootstrap.Namespace)
	name := linkpki.BundlesName(bootstrap.Name)
	existing, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, fmt.Errorf("reading the bundles Secret %s/%s: %w", bootstrap.Namespace, name, err)
	case !ownedBy(existing, bootstrap.UID):
		return false, fmt.Errorf("the Secret %s/%s is not the bundles Secret of the bootstrap Secret %s (no owner of its UID): left as it is",
			bootstrap.Namespace, name, bootstrap.Name)
	case existing.Annotations[linkpki.RevisionAnnotation] == b.Revision:
		return false, nil
	}
	refs, err := referencesOf(b)
	if err != nil {
		return false, err
	}
	desired, err := linkpki.Bundles(bootstrap, refs, b.LinkCA, b.Revision)
	if err != nil {
		return false, err
	}
	if _, err := secrets.Apply(ctx, desired, metav1.ApplyOptions{FieldManager: pki.ManagedBy, Force: true}); err != nil {
		return false, fmt.Errorf("writing the bundles Secret %s/%s: %w", bootstrap.Namespace, name, err)
	}
	return true, nil
}

// ownedBy reports whether o has an owner reference to the Secret of uid.
func ownedBy(o metav1.Object, uid types.UID) bool {
	return slices.ContainsFunc(o.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
		return r.UID == uid && r.Kind == "Secret" && r.APIVersion == "v1"
	})
}

// DefaultWriteAttempts are a Manager's WriteAttempts: five within about eight seconds.
var DefaultWriteAttempts = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Steps: 5}

// received writes the Bundles received into the bundles Secret, with a few attempts, and
// reports whether the Secret holds them.
func (m *Manager) received(ctx context.Context, bootstrap *corev1.Secret, h *held, b link.Bundles) bool {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, m.WriteAttempts, func(ctx context.Context) (bool, error) {
		_, last = writeBundles(ctx, m.kube, bootstrap, b)
		return last == nil, nil
	})
	if err != nil {
		if last == nil {
			last = err
		}
		klog.FromContext(ctx).Info("Could not write the bundles the link sent", "revision", b.Revision, "err", last)
		m.failed(h, last)
		return false
	}
	m.update(h, func(s *State) { s.Revision = b.Revision })
	return true
}

// readRevision reads the revision the bundles Secret of secret holds (nil when there is none)
// into h's State, when the link has none yet: what the consumers have from before a restart,
// while the listener is down.
func (m *Manager) readRevision(secret, bundles *corev1.Secret, h *held) {
	if bundles == nil || !ownedBy(bundles, secret.UID) {
		return
	}
	m.update(h, func(s *State) {
		if s.Revision == "" {
			s.Revision = bundles.Annotations[linkpki.RevisionAnnotation]
		}
	})
}
