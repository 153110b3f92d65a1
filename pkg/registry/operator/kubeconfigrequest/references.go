package kubeconfigrequest

import (
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
)

// errReferencesNotSynced says the cache of reference Secrets cannot answer yet.
var errReferencesNotSynced = errors.New("the server's cache of the host cluster's reference Secrets is not synced yet")

// secretsResource names Secrets in errors.
var secretsResource = schema.GroupResource{Resource: "secrets"}

// ReferenceSecretsSelector selects the Secrets a ReferenceSource needs: the join Secrets a
// Shard or FrontProxy may name, and their copies, which keep the reference label. No other
// Secret, and no other reference (kubeconfig-issuer, cache-client), is cached.
func ReferenceSecretsSelector() labels.Selector {
	joins, _ := labels.NewRequirement(reference.Label, selection.In,
		[]string{string(reference.ShardJoin), string(reference.FrontProxyJoin)})
	return labels.NewSelector().Add(*joins)
}

// ReferenceSource reads the join Secret a Shard's or FrontProxy's spec.rootShard.secretRef
// names from an informer's cache of the host cluster's reference Secrets, and resolves it
// into the in-memory RootShard the object joins (reference.Join), as its controller does. A
// resolved Secret is kept until it changes: a mint parses no PEM.
type ReferenceSource struct {
	Secrets corev1listers.SecretLister
	Synced  cache.InformerSynced

	mu       sync.Mutex
	resolved map[string]resolvedReference
}

// resolvedReference is a Secret's resolution at one resourceVersion: a refusal is kept too,
// so that a bad copy is not parsed again on every request either.
type resolvedReference struct {
	resourceVersion string
	ref             reference.Reference
	resolved        *reference.Resolved
	err             error
}

// RootShard is the RootShard that the object of kind consumer (shard or frontproxy) named
// owner, in namespace, joins through the Secret secretName of reference r. A copy that is
// missing or refused is a Conflict with the object's state, as a missing RootShard is: its
// message names the object, the Secret and the key at fault, never their content. kind is
// the object's kind, for that message.
func (s *ReferenceSource) RootShard(kind, consumer, namespace, owner, secretName string, r reference.Reference) (*operatorv1alpha1.RootShard, error) {
	if s == nil || s.Secrets == nil {
		return nil, apierrors.NewConflict(secretsResource, secretName,
			fmt.Errorf("%s %q joins its RootShard through a Secret, and the server has no host cluster to read it from", kind, owner))
	}
	if s.Synced != nil && !s.Synced() {
		return nil, apierrors.NewServiceUnavailable(errReferencesNotSynced.Error())
	}
	resolved, err := s.resolve(namespace, secretName, r)
	if err != nil {
		return nil, apierrors.NewConflict(secretsResource, secretName, fmt.Errorf("the %s Secret of %s %q: %w", r, kind, owner, err))
	}
	return reference.Join(consumer, namespace, owner, resolved).RootShard, nil
}

// resolve reads and checks the Secret namespace/name as a reference of kind r, or returns the
// kept result of its current resourceVersion.
func (s *ReferenceSource) resolve(namespace, name string, r reference.Reference) (*reference.Resolved, error) {
	secret, err := s.Secrets.Secrets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%w (a copy must keep the label %s)", reference.NotFound(namespace, name), reference.Label)
	}
	if err != nil {
		return nil, err
	}

	key := namespace + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.resolved[key]; ok && p.resourceVersion == secret.ResourceVersion && p.ref == r {
		return p.resolved, p.err
	}
	resolved, err := reference.Resolve(secret, r)
	if s.resolved == nil {
		s.resolved = map[string]resolvedReference{}
	}
	s.resolved[key] = resolvedReference{resourceVersion: secret.ResourceVersion, ref: r, resolved: resolved, err: err}
	return resolved, err
}
