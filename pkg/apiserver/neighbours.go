package apiserver

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/link"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	rootshardresources "github.com/kcp-setups/apiserver/pkg/resources/rootshard"
	shardresources "github.com/kcp-setups/apiserver/pkg/resources/shard"
)

// neighbours has the endpoints hold an object against the other
// objects of this API (store.Neighbours): a path mapping's backend stays in the cluster's own
// domain, a shardBaseURL is no other shard's address, a new address is refused to a requester
// who could not create the Kubeconfigs whose Secrets it rewrites (authz answers that), and a
// Link's identity is no other Link's of its RootShard, a CacheServer's etcd and prefix are no
// other CacheServer's; and a RootShard and the members of its setup keep to the setup's
// release (releases.go).
func neighbours(scheme *runtime.Scheme, mains map[string]*store.REST, authz authorizer.Authorizer) {
	kinds := map[string]rest.Lister{}
	for resource, main := range mains {
		kinds[resource] = main
	}
	kubeconfigsFollow := func(ctx context.Context, n store.Neighbours, obj, old runtime.Object) error {
		return kubeconfigsFollowTheirTarget(ctx, authz, n, obj, old)
	}
	shardBaseURL := func(_ context.Context, n store.Neighbours, obj, old runtime.Object) error {
		return shardBaseURLUnused(scheme, n, obj, old)
	}
	for resource, checks := range map[string][]store.NeighbourCheck{
		"frontproxies":      {backendsInClusterDomain, kubeconfigsFollow, memberRelease},
		"shards":            {shardBaseURL, kubeconfigsFollow, memberRelease},
		"links":             {link.IdentityUnique},
		"rootshards":        {setupRelease(authz)},
		"cacheservers":      {cacheserver.EtcdUnshared, memberRelease},
		"virtualworkspaces": {memberRelease},
	} {
		if r, ok := mains[resource]; ok {
			r.SetNeighbourCheck(kinds, allOf(checks))
		}
	}
}

// allOf runs checks in order; the first error is the answer.
func allOf(checks []store.NeighbourCheck) store.NeighbourCheck {
	return func(ctx context.Context, n store.Neighbours, obj, old runtime.Object) error {
		for _, check := range checks {
			if err := check(ctx, n, obj, old); err != nil {
				return err
			}
		}
		return nil
	}
}

// backendsInClusterDomain refuses a path mapping whose backend names a Service by its full
// name in another DNS domain than the cluster's (<svc>.<ns>.svc.attacker.example resolves
// outside the cluster), the cluster's domain being the RootShard's clusterDomain, else
// cluster.local. An update is checked only when it changes the mappings.
func backendsInClusterDomain(_ context.Context, n store.Neighbours, obj, old runtime.Object) error {
	fp, ok := obj.(*operator.FrontProxy)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("not a FrontProxy: %T", obj))
	}
	if prev, ok := old.(*operator.FrontProxy); ok && apiequality.Semantic.DeepEqual(prev.Spec.AdditionalPathMappings, fp.Spec.AdditionalPathMappings) {
		return nil
	}
	domain := operatorv1alpha1.DefaultClusterDomain
	if ref := fp.Spec.RootShard.Reference; ref != nil {
		got, err := n.Get("rootshards", fp.Namespace, ref.Name)
		if err != nil {
			return err
		}
		if rs, ok := got.(*operator.RootShard); ok && rs.Spec.ClusterDomain != "" {
			domain = rs.Spec.ClusterDomain
		}
	}
	var errs field.ErrorList
	for i, m := range fp.Spec.AdditionalPathMappings {
		u, err := url.Parse(m.Backend)
		if err != nil {
			continue // validation said so already
		}
		labels := strings.Split(u.Hostname(), ".")
		if len(labels) <= 3 || labels[2] != "svc" {
			continue
		}
		if d := strings.Join(labels[3:], "."); !strings.EqualFold(d, domain) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "additionalPathMappings").Index(i).Child("backend"), fmt.Sprintf(
				"must be a Service of this cluster: %q is not the cluster's domain %q (the RootShard's clusterDomain), and a name in another domain resolves outside the cluster",
				d, domain)))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(operator.Kind("FrontProxy"), fp.Name, errs)
}

// shardBaseURLUnused refuses a Shard's shardBaseURL that is already the address of another
// Shard or RootShard served here, in any namespace: the root shard and the front proxies
// would send one shard's requests to the other, and kcp's Shard object of the one would route
// to the other. Only a shardBaseURL the request sets or changes is checked. Another
// namespace's object is not named, since its author may not read it.
func shardBaseURLUnused(scheme *runtime.Scheme, n store.Neighbours, obj, old runtime.Object) error {
	s, ok := obj.(*operator.Shard)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("not a Shard: %T", obj))
	}
	if s.Spec.ShardBaseURL == "" {
		return nil
	}
	if prev, ok := old.(*operator.Shard); ok && prev.Spec.ShardBaseURL == s.Spec.ShardBaseURL {
		return nil
	}
	want := normalURL(s.Spec.ShardBaseURL)
	for _, resource := range []string{"shards", "rootshards"} {
		items, err := n.List(resource, "")
		if err != nil {
			return err
		}
		for _, item := range items {
			name, namespace, baseURL, err := baseURLOf(scheme, item)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			if resource == "shards" && name == s.Name && namespace == s.Namespace {
				continue
			}
			if normalURL(baseURL) != want {
				continue
			}
			who := "another shard"
			if namespace == s.Namespace {
				who = fmt.Sprintf("%s %q of this namespace", map[string]string{"shards": "Shard", "rootshards": "RootShard"}[resource], name)
			}
			return apierrors.NewInvalid(operator.Kind("Shard"), s.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "shardBaseURL"), s.Spec.ShardBaseURL,
				fmt.Sprintf("is the base URL of %s: one address serves one shard", who))})
		}
	}
	return nil
}

// baseURLOf is the base URL a stored Shard or RootShard is reached at, as the builders
// compute it.
func baseURLOf(scheme *runtime.Scheme, obj runtime.Object) (name, namespace, baseURL string, err error) {
	versioned, err := scheme.ConvertToVersion(obj, operatorv1alpha1.SchemeGroupVersion)
	if err != nil {
		return "", "", "", err
	}
	switch o := versioned.(type) {
	case *operatorv1alpha1.Shard:
		return o.Name, o.Namespace, shardresources.Server(o, &operatorv1alpha1.RootShard{}).BaseURL(), nil
	case *operatorv1alpha1.RootShard:
		return o.Name, o.Namespace, rootshardresources.Server(o).BaseURL(), nil
	}
	return "", "", "", fmt.Errorf("no base URL known for %T", versioned)
}

// normalURL is a URL as it is compared: scheme and host in lower case, without a trailing
// slash, with the default port made explicit.
func normalURL(raw string) string {
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil {
		return raw
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" && strings.EqualFold(u.Scheme, "https") {
		port = "443"
	}
	return strings.ToLower(u.Scheme) + "://" + host + ":" + port + u.EscapedPath()
}
