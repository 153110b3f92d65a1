package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// memberRelease refuses a member's spec.image.tag more than one minor from the spec.version
// of the versioned RootShard it follows (422 at spec.image.tag) and warns of any other
// difference; and it refuses a CacheServer with spec.etcd that would follow a versioned
// RootShard below kcpversion.CacheServerEtcd (422 at spec.etcd). Only a create, or an update
// that changes the tag or the etcd, is held: an unrelated edit is not refused for what the
// RootShard became since.
func memberRelease(ctx context.Context, n store.Neighbours, obj, old runtime.Object) error {
	m, err := memberOf(obj)
	if err != nil {
		return err
	}
	if m.tag == "" && !m.etcd {
		return nil
	}
	if old != nil {
		if prev, err := memberOf(old); err == nil && prev.tag == m.tag && prev.etcd == m.etcd {
			return nil
		}
	}
	setups, err := m.setups(n)
	if err != nil {
		return err
	}
	var errs field.ErrorList
	for _, rs := range setups {
		release, ok := kcpversion.Known(rs.Spec.Version)
		if !ok {
			continue
		}
		if m.etcd && m.tag == "" {
			if err := upgrade.CheckCacheServerEtcd(release); err != nil {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "etcd"), fmt.Sprintf(
					"RootShard %q names this CacheServer and runs its setup at %s (spec.version): %v; pin spec.image.tag or move the setup first", rs.Name, release, err)))
			}
		}
		if m.tag == "" || len(setups) > 1 {
			// A CacheServer that several versioned setups name follows none of them.
			continue
		}
		warn, err := upgrade.CheckPinned(release, m.tag)
		tagPath := field.NewPath("spec", "image", "tag")
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(tagPath, m.tag, fmt.Sprintf("RootShard %q runs its setup at %s (spec.version): this %s", rs.Name, release, err)))
		case warn != "":
			warning.AddWarning(ctx, "", fmt.Sprintf("%s: this %s of RootShard %q %s", tagPath, m.kind, rs.Name, warn))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(operator.Kind(m.kind), m.name, errs)
}

// member is what memberRelease holds of a Shard, FrontProxy, CacheServer or
// VirtualWorkspace.
type member struct {
	kind, name, tag string
	etcd            bool
	// setups are the versioned RootShards whose setup it follows.
	setups func(n store.Neighbours) ([]*operator.RootShard, error)
}

// memberOf reads obj as a member of a setup.
func memberOf(obj runtime.Object) (member, error) {
	none := func(store.Neighbours) ([]*operator.RootShard, error) { return nil, nil }
	switch o := obj.(type) {
	case *operator.Shard:
		m := member{kind: "Shard", name: o.Name, tag: imageTag(o.Spec.Image)}
		m.setups = versionedRootShard(o.Namespace, o.Spec.RootShard.Reference)
		return m, nil
	case *operator.FrontProxy:
		m := member{kind: "FrontProxy", name: o.Name, tag: imageTag(o.Spec.Image)}
		m.setups = versionedRootShard(o.Namespace, o.Spec.RootShard.Reference)
		return m, nil
	case *operator.CacheServer:
		m := member{kind: "CacheServer", name: o.Name, tag: imageTag(o.Spec.Image), etcd: o.Spec.Etcd != nil}
		m.setups = func(n store.Neighbours) ([]*operator.RootShard, error) {
			items, err := n.List("rootshards", o.Namespace)
			if err != nil {
				return nil, err
			}
			var naming []*operator.RootShard
			for _, item := range items {
				if rs, ok := item.(*operator.RootShard); ok && rs.Spec.Version != "" && rs.Spec.Cache != nil && refersTo(rs.Spec.Cache.Reference, o.Name) {
					naming = append(naming, rs)
				}
			}
			return naming, nil
		}
		return m, nil
	case *operator.VirtualWorkspace:
		m := member{kind: "VirtualWorkspace", name: o.Name, tag: imageTag(o.Spec.Image), setups: none}
		switch t := o.Spec.Target; {
		case len(o.Spec.Command) > 0:
			// A third-party server runs its own image.
		case t.RootShardRef != nil:
			m.setups = versionedRootShard(o.Namespace, t.RootShardRef)
		case t.ShardRef != nil:
			m.setups = func(n store.Neighbours) ([]*operator.RootShard, error) {
				got, err := n.Get("shards", o.Namespace, t.ShardRef.Name)
				if s, ok := got.(*operator.Shard); ok && err == nil {
					return versionedRootShard(o.Namespace, s.Spec.RootShard.Reference)(n)
				}
				return nil, err
			}
		}
		return m, nil
	}
	return member{}, apierrors.NewInternalError(fmt.Errorf("not a member of a setup: %T", obj))
}

// versionedRootShard reads the RootShard ref names in namespace, when it has a spec.version.
// A member that names its RootShard otherwise (a copy of its join Secret, a link) is in
// another setup's cluster and keeps its own tag.
func versionedRootShard(namespace string, ref *corev1.LocalObjectReference) func(n store.Neighbours) ([]*operator.RootShard, error) {
	return func(n store.Neighbours) ([]*operator.RootShard, error) {
		if ref == nil {
			return nil, nil
		}
		got, err := n.Get("rootshards", namespace, ref.Name)
		if rs, ok := got.(*operator.RootShard); ok && err == nil && rs.Spec.Version != "" {
			return []*operator.RootShard{rs}, nil
		}
		return nil, err
	}
}
