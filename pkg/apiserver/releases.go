package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/warning"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// The refusals of a change of a setup's release (docs/kcp-versions.md, "Refused before
// anything changes"), held against the setup's other objects: a RootShard's spec.version
// against what its members run and their settings, a member's own spec.image.tag against
// its RootShard's spec.version. The rules are upgrade's; this reads the objects. Validation
// refused a spec.version that names no release already.

// imageTag is a component's spec.image.tag, "" when it pins none.
func imageTag(image *operator.ImageSpec) string {
	if image == nil {
		return ""
	}
	return image.Tag
}

// component is a member of a setup with its image: its tag at path of its object, its
// repository.
type component struct {
	kind, name, tag, repository string
	path                        *field.Path
}

// setupRelease refuses a RootShard's spec.version that the setup cannot move to, with a 422
// at spec.version (or at the RootShard's own pinned tags), and warns of every member that
// pins another release. A following member whose image is of another repository than kcp's
// runs, at the new release, code of that repository's choice: as a change of its own tag
// would, it needs create on Deployments, asked of authz (403); so does autoUpdate Patch, with
// which the server moves the release later with its own rights. It holds a new spec.version
// only: an edit that keeps it is not refused for what the other objects became since.
func setupRelease(authz authorizer.Authorizer) store.NeighbourCheck {
	return func(ctx context.Context, n store.Neighbours, obj, old runtime.Object) error {
		return holdSetupRelease(ctx, authz, n, obj, old)
	}
}

func holdSetupRelease(ctx context.Context, authz authorizer.Authorizer, n store.Neighbours, obj, old runtime.Object) error {
	rs, ok := obj.(*operator.RootShard)
	if !ok {
		return apierrors.NewInternalError(fmt.Errorf("not a RootShard: %T", obj))
	}
	prev, _ := old.(*operator.RootShard)
	if rs.Spec.Version == "" && prev != nil && prev.Spec.Version != "" {
		return versionRemoved(rs, prev)
	}
	release, ok := kcpversion.Known(rs.Spec.Version)
	if !ok {
		return nil
	}
	newVersion := prev == nil || prev.Spec.Version != rs.Spec.Version
	// autoUpdate Patch has the server move spec.version later, with its own rights.
	newAutoUpdate := autoPatch(rs) && (prev == nil || !autoPatch(prev))
	if !newVersion && !newAutoUpdate && sameCache(prev, rs) &&
		imageTag(prev.Spec.Image) == imageTag(rs.Spec.Image) && imageTag(proxyImage(prev)) == imageTag(proxyImage(rs)) {
		return nil
	}
	versionPath := field.NewPath("spec", "version")
	var errs field.ErrorList
	if prev != nil {
		if err := upgrade.CheckChange(runsBefore(prev), release); err != nil {
			errs = append(errs, field.Invalid(versionPath, rs.Spec.Version, err.Error()))
		}
	}
	if ref := rs.Spec.Cache; ref != nil && ref.Reference != nil {
		got, err := n.Get("cacheservers", rs.Namespace, ref.Reference.Name)
		if err != nil {
			return err
		}
		if cs, ok := got.(*operator.CacheServer); ok && cs.Spec.Etcd != nil && imageTag(cs.Spec.Image) == "" {
			if err := upgrade.CheckCacheServerEtcd(release); err != nil {
				errs = append(errs, field.Invalid(versionPath, rs.Spec.Version, fmt.Sprintf("CacheServer %q (spec.cache.ref) follows the setup: %v", cs.Name, err)))
			}
		}
	}
	members, err := membersOf(n, rs)
	if err != nil {
		return err
	}
	var need []store.Permission
	for _, m := range members {
		if m.tag == "" {
			if m.repository == "" || m.repository == operatorv1alpha1.DefaultImageRepository {
				continue
			}
			if newVersion {
				need = append(need, store.RunPermission(versionPath, fmt.Sprintf("%s for %s/%s, whose image is of repository %s", rs.Spec.Version, m.kind, m.name, m.repository)))
			}
			if newAutoUpdate {
				need = append(need, store.RunPermission(field.NewPath("spec", "maintenance", "autoUpdate"),
					fmt.Sprintf("Patch for %s/%s, whose image is of repository %s", m.kind, m.name, m.repository)))
			}
			continue
		}
		warn, err := upgrade.CheckPinned(release, m.tag)
		switch {
		case err != nil && m.kind == "RootShard":
			// The RootShard's own tags: the field to change is its own.
			errs = append(errs, field.Invalid(m.path, m.tag, err.Error()))
		case err != nil:
			errs = append(errs, field.Invalid(versionPath, rs.Spec.Version, fmt.Sprintf("%s/%s %s: change its %s first", m.kind, m.name, err, m.path)))
		case warn != "":
			warning.AddWarning(ctx, "", fmt.Sprintf("%s/%s %s: %s", m.kind, m.name, m.path, warn))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(operator.Kind("RootShard"), rs.Name, errs)
	}
	return store.RequirePermissions(ctx, authz, rs.Namespace, need, nil, operator.Resource("rootshards"), rs.Name)
}

// versionRemoved refuses to remove a setup's spec.version when what its members then run
// at once, without an ordered roll (their own tags, else the default), skips a minor or goes
// back one.
func versionRemoved(rs, prev *operator.RootShard) error {
	def := kcpversion.FromTag("")
	if err := upgrade.CheckChange(runsBefore(prev), def); err != nil {
		return apierrors.NewInvalid(operator.Kind("RootShard"), rs.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "version"), rs.Spec.Version,
			fmt.Sprintf("removing it moves every member that pins no tag to the default %s at once, which %v", def, err))})
	}
	return nil
}

func autoPatch(rs *operator.RootShard) bool {
	return rs.Spec.Maintenance != nil && rs.Spec.Maintenance.AutoUpdate == operator.AutoUpdatePatch
}

func proxyImage(rs *operator.RootShard) *operator.ImageSpec {
	if rs.Spec.Proxy == nil {
		return nil
	}
	return rs.Spec.Proxy.Image
}

func sameCache(a, b *operator.RootShard) bool {
	name := func(rs *operator.RootShard) string {
		if rs.Spec.Cache == nil || rs.Spec.Cache.Reference == nil {
			return ""
		}
		return rs.Spec.Cache.Reference.Name
	}
	return name(a) == name(b)
}

// runsBefore are the releases the members of the stored RootShard's setup run or are to
// run: its spec.version, and its status.version's current and each following member's
// desired and running release; before the roll recorded any, what the RootShard itself runs
// (its spec.image.tag, else the default).
func runsBefore(rs *operator.RootShard) []kcpversion.Version {
	tags := []string{rs.Spec.Version}
	if v := rs.Status.Version; v != nil {
		tags = append(tags, v.Current)
		for _, c := range v.Components {
			if !c.Pinned {
				tags = append(tags, c.Desired, c.Running)
			}
		}
	} else if t := imageTag(rs.Spec.Image); t != "" {
		tags = append(tags, t)
	} else if rs.Spec.Version == "" {
		tags = append(tags, kcpversion.DefaultTag)
	}
	return upgrade.Runs(tags...)
}

// membersOf are the members of rs's setup with their images (docs/kcp-versions.md, "Who
// follows the setup"): the RootShard itself and its internal proxy, the CacheServer it
// names, its Shards and FrontProxies, and the kcp VirtualWorkspaces of it or of its Shards.
func membersOf(n store.Neighbours, rs *operator.RootShard) ([]component, error) {
	var members []component
	add := func(kind, name string, image *operator.ImageSpec, path *field.Path) {
		c := component{kind: kind, name: name, path: path}
		if image != nil {
			c.tag, c.repository = image.Tag, image.Repository
		}
		members = append(members, c)
	}
	tagPath := field.NewPath("spec", "image", "tag")
	add("RootShard", rs.Name, rs.Spec.Image, tagPath)
	add("RootShard", rs.Name, proxyImage(rs), field.NewPath("spec", "proxy", "image", "tag"))
	if ref := rs.Spec.Cache; ref != nil && ref.Reference != nil {
		got, err := n.Get("cacheservers", rs.Namespace, ref.Reference.Name)
		if err != nil {
			return nil, err
		}
		if cs, ok := got.(*operator.CacheServer); ok {
			add("CacheServer", cs.Name, cs.Spec.Image, tagPath)
		}
	}
	shards := map[string]bool{}
	items, err := n.List("shards", rs.Namespace)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		if s, ok := item.(*operator.Shard); ok && refersTo(s.Spec.RootShard.Reference, rs.Name) {
			shards[s.Name] = true
			add("Shard", s.Name, s.Spec.Image, tagPath)
		}
	}
	if items, err = n.List("frontproxies", rs.Namespace); err != nil {
		return nil, err
	}
	for _, item := range items {
		if fp, ok := item.(*operator.FrontProxy); ok && refersTo(fp.Spec.RootShard.Reference, rs.Name) {
			add("FrontProxy", fp.Name, fp.Spec.Image, tagPath)
		}
	}
	if items, err = n.List("virtualworkspaces", rs.Namespace); err != nil {
		return nil, err
	}
	for _, item := range items {
		vw, ok := item.(*operator.VirtualWorkspace)
		if !ok || len(vw.Spec.Command) > 0 {
			continue
		}
		if t := vw.Spec.Target; refersTo(t.RootShardRef, rs.Name) || (t.ShardRef != nil && shards[t.ShardRef.Name]) {
			add("VirtualWorkspace", vw.Name, vw.Spec.Image, tagPath)
		}
	}
	return members, nil
}

func refersTo(ref *corev1.LocalObjectReference, name string) bool {
	return ref != nil && ref.Name == name
}
