package manager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller"
	"github.com/kcp-setups/apiserver/pkg/controller/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/controller/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/controller/rootshard"
	"github.com/kcp-setups/apiserver/pkg/controller/shard"
	"github.com/kcp-setups/apiserver/pkg/controller/virtualworkspace"
	"github.com/kcp-setups/apiserver/pkg/preview"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
)

// PreviewFunc says what a write of obj (old: the stored object, nil on create), objects of
// operator.kcp.io/v1alpha1, will do in the host cluster, as the lines of warnings: the full
// list for a server dry run, else the summary (docs/kcp-versions.md, "Previewing a change").
type PreviewFunc func(ctx context.Context, obj, old runtime.Object, full bool) []string

// planner is a controller that plans what its reconcile writes (controller.Plan), with a
// RootShard in place of the stored one of the object's setup.
type planner[T any] interface {
	Plan(ctx context.Context, obj T, rs *operatorv1alpha1.RootShard) (*hostcluster.Plan, error)
}

// The controllers that plan.
var (
	_ planner[*operatorv1alpha1.RootShard]        = (*rootshard.Controller)(nil)
	_ planner[*operatorv1alpha1.Shard]            = (*shard.Controller)(nil)
	_ planner[*operatorv1alpha1.FrontProxy]       = (*frontproxy.Controller)(nil)
	_ planner[*operatorv1alpha1.CacheServer]      = (*cacheserver.Controller)(nil)
	_ planner[*operatorv1alpha1.VirtualWorkspace] = (*virtualworkspace.Controller)(nil)
)

// previewer previews a write with the controllers the manager runs: their realize, in plan
// mode, for the stored object and for the new one.
type previewer struct {
	host              *hostcluster.Host
	indexes           controller.Indexes
	rootShards        planner[*operatorv1alpha1.RootShard]
	shards            planner[*operatorv1alpha1.Shard]
	frontProxies      planner[*operatorv1alpha1.FrontProxy]
	cacheServers      planner[*operatorv1alpha1.CacheServer]
	virtualWorkspaces planner[*operatorv1alpha1.VirtualWorkspace]
}

// newPreviewer finds the planning controllers among runs; nil when one is missing.
func newPreviewer(host *hostcluster.Host, runs []controller.Runner) *previewer {
	p := &previewer{host: host}
	for _, r := range runs {
		switch c := r.(type) {
		case *rootshard.Controller:
			p.rootShards, p.indexes = c, c.Indexes
		case *shard.Controller:
			p.shards = c
		case *frontproxy.Controller:
			p.frontProxies = c
		case *cacheserver.Controller:
			p.cacheServers = c
		case *virtualworkspace.Controller:
			p.virtualWorkspaces = c
		}
	}
	if p.rootShards == nil || p.shards == nil || p.frontProxies == nil || p.cacheServers == nil || p.virtualWorkspaces == nil {
		return nil
	}
	return p
}

// Preview is the PreviewFunc of the controllers. A failure of its own never fails the write
// it answers: it says so instead.
func (p *previewer) Preview(ctx context.Context, obj, old runtime.Object, full bool) (lines []string) {
	defer func() {
		if r := recover(); r != nil {
			utilruntime.HandleErrorWithContext(ctx, fmt.Errorf("%v", r), "Previewing a write panicked")
			lines = []string{preview.Prefix + "not available: the preview failed (the server's log says why)"}
		}
	}()
	if !p.host.CertManagerReady() {
		return []string{preview.NotAvailable}
	}
	var head []string
	var components []preview.Component
	switch o := obj.(type) {
	case *operatorv1alpha1.RootShard:
		prev, _ := old.(*operatorv1alpha1.RootShard)
		head, components = p.rootShard(ctx, o, prev)
	case *operatorv1alpha1.Shard:
		prev, _ := old.(*operatorv1alpha1.Shard)
		components = []preview.Component{plan(ctx, p.shards, "Shard", o, prev, nil, nil)}
	case *operatorv1alpha1.FrontProxy:
		prev, _ := old.(*operatorv1alpha1.FrontProxy)
		components = []preview.Component{plan(ctx, p.frontProxies, "FrontProxy", o, prev, nil, nil)}
	case *operatorv1alpha1.CacheServer:
		prev, _ := old.(*operatorv1alpha1.CacheServer)
		components = []preview.Component{plan(ctx, p.cacheServers, "CacheServer", o, prev, nil, nil)}
	case *operatorv1alpha1.VirtualWorkspace:
		prev, _ := old.(*operatorv1alpha1.VirtualWorkspace)
		components = []preview.Component{plan(ctx, p.virtualWorkspaces, "VirtualWorkspace", o, prev, nil, nil)}
	default:
		return nil
	}
	if full {
		return preview.Full(head, components)
	}
	return preview.Summary(head, components)
}

// rootShard previews a RootShard's change with its setup: its own, and its local Shards',
// VirtualWorkspaces' and FrontProxies' with the new RootShard in place of the stored one.
// A change of spec.version plans every member that does not pin a tag at the new release,
// as they are once the roll is through, in the roll's group order, the CacheServer it names
// among them (unless another versioned RootShard names it too: it then follows none).
func (p *previewer) rootShard(ctx context.Context, rs, old *operatorv1alpha1.RootShard) ([]string, []preview.Component) {
	target := ""
	var head []string
	if old != nil && rs.Spec.Version != "" && rs.Spec.Version != old.Spec.Version {
		target = rs.Spec.Version
		head = append(head, fmt.Sprintf("RootShard/%s: spec.version %s→%s rolls the setup group by group, each once the one before is rolled out and Available: %s",
			rs.Name, orUnset(old.Spec.Version), target, groups()))
	}
	// The stored dependents, as the stored RootShard has them; none for a RootShard
	// created: they are created with it.
	stored := old != nil
	after := afterRoll(rs, target)
	atTarget := func(spec *operatorv1alpha1.ComponentSpec) { atRelease(spec, after) }
	var components []preview.Component
	if target != "" && rs.Spec.Cache != nil && rs.Spec.Cache.Reference != nil {
		if cs, err := kinds.CacheServer.Lister(p.indexes, rs.Namespace).Get(rs.Spec.Cache.Reference.Name); err == nil {
			c := plan(ctx, p.cacheServers, "CacheServer", withRelease(cs, func(o *operatorv1alpha1.CacheServer) { atTarget(&o.Spec.ComponentSpec) }), cs, nil, nil)
			if p.sharedCache(rs) {
				c = preview.Component{Kind: "CacheServer", Name: cs.Name, Note: "follows no setup's release: another versioned RootShard names it too"}
			}
			components = append(components, c)
		}
	}
	self := withRelease(rs, func(o *operatorv1alpha1.RootShard) {
		atTarget(&o.Spec.ComponentSpec)
		if o.Spec.Proxy != nil && o.Spec.Proxy.Image != nil {
			atTarget(&o.Spec.Proxy.ComponentSpec)
		}
	})
	components = append(components, plan(ctx, p.rootShards, "RootShard", self, old, nil, nil))
	for _, s := range kinds.ShardsOf(p.indexes, rs.Namespace, rs.Name) {
		if s.Spec.RootShard.Reference == nil {
			continue
		}
		components = append(components, plan(ctx, p.shards, "Shard",
			withRelease(s, func(o *operatorv1alpha1.Shard) { atTarget(&o.Spec.ComponentSpec) }), storedOrNil(s, stored), rs, old))
	}
	for _, vw := range kinds.VirtualWorkspacesOf(p.indexes, rs.Namespace, rs.Name) {
		follows := func(o *operatorv1alpha1.VirtualWorkspace) {
			if len(o.Spec.Command) == 0 { // a third-party server runs its own image
				atTarget(&o.Spec.ComponentSpec)
			}
		}
		components = append(components, plan(ctx, p.virtualWorkspaces, "VirtualWorkspace", withRelease(vw, follows), storedOrNil(vw, stored), rs, old))
	}
	for _, fp := range kinds.FrontProxiesOf(p.indexes, rs.Namespace, rs.Name) {
		components = append(components, plan(ctx, p.frontProxies, "FrontProxy",
			withRelease(fp, func(o *operatorv1alpha1.FrontProxy) { atTarget(&o.Spec.ComponentSpec) }), storedOrNil(fp, stored), rs, old))
	}
	return head, components
}

// sharedCache reports whether another RootShard of rs's namespace with a spec.version names
// rs's CacheServer.
func (p *previewer) sharedCache(rs *operatorv1alpha1.RootShard) bool {
	all, err := kinds.RootShard.Lister(p.indexes, rs.Namespace).List(labels.Everything())
	if err != nil {
		return false
	}
	for _, o := range all {
		if o.Name != rs.Name && o.Spec.Version != "" && o.Spec.Cache != nil && o.Spec.Cache.Reference != nil &&
			o.Spec.Cache.Reference.Name == rs.Spec.Cache.Reference.Name {
			return true
		}
	}
	return false
}

// plan is the component obj of kind as a change from old (nil: created) makes it, obj
// planned with newRS in place of its stored RootShard, old with oldRS (both nil: the stored
// one).
func plan[T interface {
	comparable
	GetName() string
}](ctx context.Context, p planner[T], kind string, obj, old T, newRS, oldRS *operatorv1alpha1.RootShard) preview.Component {
	c := preview.Component{Kind: kind, Name: obj.GetName()}
	next, err := p.Plan(ctx, obj, newRS)
	if err != nil {
		c.Note = notPlanned(err)
		return c
	}
	var prev *hostcluster.Plan
	var zero T
	if old != zero {
		if prev, err = p.Plan(ctx, old, oldRS); err != nil {
			c.Note = notPlanned(err)
			return c
		}
	}
	c.Changes = preview.Diff(prev, next)
	return c
}

func notPlanned(err error) string { return "not previewed: " + err.Error() }

// storedOrNil is obj when stored, else nil.
func storedOrNil[T any](obj *T, stored bool) *T {
	if stored {
		return obj
	}
	return nil
}

// withRelease is a copy of obj that set changes.
func withRelease[T runtime.Object](obj T, set func(T)) T {
	c := obj.DeepCopyObject().(T)
	set(c)
	return c
}

// afterRoll is rs as a roll to target leaves it (status.version at target, no group
// rolling), nil without a target.
func afterRoll(rs *operatorv1alpha1.RootShard, target string) *operatorv1alpha1.RootShard {
	if target == "" {
		return nil
	}
	after := rs.DeepCopy()
	after.Status.Version = &operatorv1alpha1.SetupVersion{Current: target, Target: target}
	return after
}

// atRelease has a member of the setup of after built with the tag upgrade.Tag gives it
// there, as its controller does: a member that pins a tag keeps it, every other one is at
// the release; nil (no release change) changes nothing.
func atRelease(spec *operatorv1alpha1.ComponentSpec, after *operatorv1alpha1.RootShard) {
	if after == nil {
		return
	}
	pinned := ""
	if spec.Image != nil {
		pinned = spec.Image.Tag
	}
	tag := upgrade.Tag(after, upgrade.Member{Pinned: pinned})
	if spec.Image == nil {
		spec.Image = &operatorv1alpha1.ImageSpec{}
	}
	spec.Image.Tag = tag
}

// groups is upgrade.Order, as a preview says it.
func groups() string {
	out := ""
	for i, g := range upgrade.Order {
		if i > 0 {
			out += " → "
		}
		out += string(g)
	}
	return out
}

func orUnset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}
