package apiserver

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/resources/hostnames"
)

// claims has every kind's endpoint refuse an object whose derived host names another object
// of its namespace derives (store.Claims): the names come from the builders
// (pkg/resources/hostnames), which take versioned objects, and the objects from each kind's
// own storage.
func claims(scheme *runtime.Scheme, mains map[string]*store.REST) error {
	c := &store.Claims{Derive: deriveNames(scheme)}
	resources := make([]string, 0, len(mains))
	for resource := range mains {
		resources = append(resources, resource)
	}
	sort.Strings(resources) // the 422 lists the clashes in a stable order
	for _, resource := range resources {
		main := mains[resource]
		kinds, _, err := scheme.ObjectKinds(main.New())
		if err != nil {
			return fmt.Errorf("the kind of %s: %w", resource, err)
		}
		c.Kinds = append(c.Kinds, store.ClaimingKind{Kind: kinds[0].Kind, Resource: main.DefaultQualifiedResource, List: main})
	}
	for _, main := range mains {
		main.SetClaims(c)
	}
	return nil
}

// deriveNames returns the host names an internal object of this API derives.
func deriveNames(scheme *runtime.Scheme) func(runtime.Object) ([]store.DerivedName, error) {
	return func(obj runtime.Object) ([]store.DerivedName, error) {
		versioned, err := scheme.ConvertToVersion(obj, operatorv1alpha1.SchemeGroupVersion)
		if err != nil {
			return nil, err
		}
		names, ok := hostnames.Of(versioned)
		if !ok {
			return nil, fmt.Errorf("no host names known for %T", versioned)
		}
		out := make([]store.DerivedName, len(names))
		for i, n := range names {
			out[i] = store.DerivedName{Name: n.Name, Field: n.Field}
		}
		return out, nil
	}
}
