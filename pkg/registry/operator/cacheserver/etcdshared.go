package cacheserver

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
)

// EtcdUnshared refuses, with a 422 at spec.etcd, a CacheServer that would keep its data in the
// same etcd and under the same prefix as another CacheServer of its namespace: the two would
// read and overwrite each other's replicated objects. The prefix is the one the cache server
// of its release uses: up to kcp v0.32 always /cache, whatever spec.etcd.prefix says
// (kcpversion.CacheServerEtcdPrefix), so two such CacheServers on one etcd collide even with
// different prefixes. An update is checked only when it changes the etcd or the image. Two
// creates at the same moment can both pass, as with the claims on derived names.
func EtcdUnshared(_ context.Context, n store.Neighbours, obj, old runtime.Object) error {
	cs, ok := obj.(*operator.CacheServer)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("not a CacheServer: %T", obj))
	}
	if cs.Spec.Etcd == nil {
		return nil
	}
	if prev, ok := old.(*operator.CacheServer); ok && apiequality.Semantic.DeepEqual(prev.Spec.Etcd, cs.Spec.Etcd) &&
		apiequality.Semantic.DeepEqual(prev.Spec.Image, cs.Spec.Image) {
		return nil
	}
	items, err := n.List("cacheservers", cs.Namespace)
	if err != nil {
		return err
	}
	prefix := etcdPrefix(cs)
	for _, item := range items {
		other, ok := item.(*operator.CacheServer)
		if !ok || other.Name == cs.Name || other.Spec.Etcd == nil || etcdPrefix(other) != prefix {
			continue
		}
		if shared := sharedEndpoint(cs.Spec.Etcd.Endpoints, other.Spec.Etcd.Endpoints); shared != "" {
			return apierrors.NewInvalid(operator.Kind("CacheServer"), cs.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "etcd"), shared,
				fmt.Sprintf("CacheServer %s keeps its data in the etcd at %s under %s too: the two would overwrite each other's objects; give this one another etcd, or another spec.etcd.prefix on a kcp release that honours it (%s or newer)",
					other.Name, shared, prefix, kcpversion.CacheServerEtcdPrefix))})
		}
	}
	return nil
}

// etcdPrefix is the etcd prefix the CacheServer's cache server keeps its data under.
func etcdPrefix(cs *operator.CacheServer) string {
	tag := ""
	if cs.Spec.Image != nil {
		tag = cs.Spec.Image.Tag
	}
	return kcpversion.FromTag(tag).CacheServerEtcdPrefix(cs.Spec.Etcd.Prefix)
}

// sharedEndpoint is an etcd endpoint of a that b names too, by host and port, whatever the
// scheme or a trailing slash; "" when none.
func sharedEndpoint(a, b []string) string {
	hosts := make([]string, 0, len(b))
	for _, e := range b {
		hosts = append(hosts, endpointHost(e))
	}
	for _, e := range a {
		if slices.Contains(hosts, endpointHost(e)) {
			return e
		}
	}
	return ""
}

// endpointHost is an etcd endpoint's host:port, lower case.
func endpointHost(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		return strings.ToLower(u.Host)
	}
	return strings.ToLower(strings.TrimSuffix(endpoint, "/"))
}
