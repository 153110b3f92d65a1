package hostcluster

import (
	"context"
	"sync"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// Plan is what a reconcile would write to the host cluster, recorded instead of written: a
// controller's realize run in plan mode (Planning). It holds the objects whose change a
// preview reports (docs/kcp-versions.md, "Previewing a change"): the Deployments and
// StatefulSets, whose pods roll when their template changes, and the Certificates, issued
// again when their spec changes, and the PersistentVolumeClaims it creates. The rest of the batch (Secrets, Services, ConfigMaps,
// Issuers, PodDisruptionBudgets, the steps a batch runs by itself) is neither written nor
// recorded.
type Plan struct {
	mu           sync.Mutex
	Deployments  []PlannedDeployment
	StatefulSets []PlannedStatefulSet
	Certificates []*cmapply.CertificateApplyConfiguration
	// Claims are the PersistentVolumeClaims it would create (a backup's snapshot volume):
	// a claim is created once and never changed, so only one that does not exist is here.
	Claims []*corev1ac.PersistentVolumeClaimApplyConfiguration
}

// PlannedDeployment is a Deployment a plan would apply, and whether it exists now: one that
// does not is created, and rolls nothing.
type PlannedDeployment struct {
	Deployment *appsv1ac.DeploymentApplyConfiguration
	Exists     bool
}

// PlannedStatefulSet is a StatefulSet (a managed etcd) a plan would apply, and whether it
// exists now.
type PlannedStatefulSet struct {
	StatefulSet *appsv1ac.StatefulSetApplyConfiguration
	Exists      bool
}

type planKey struct{}

// Planning returns a context in which the host's batches of writes (Host.Writes) record
// into p instead of writing: a controller's realize, run with it, is the plan of what it
// would write. Everything realize reads, it still reads from the caches and the host, as
// when it writes; nothing is written, no step of the batch runs.
func Planning(ctx context.Context, p *Plan) context.Context {
	return context.WithValue(ctx, planKey{}, p)
}

// planOf is the plan ctx records into, nil when its batches write.
func planOf(ctx context.Context) *Plan {
	p, _ := ctx.Value(planKey{}).(*Plan)
	return p
}

func (p *Plan) deployment(d *appsv1ac.DeploymentApplyConfiguration, exists bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Deployments = append(p.Deployments, PlannedDeployment{Deployment: d, Exists: exists})
}

func (p *Plan) statefulSet(s *appsv1ac.StatefulSetApplyConfiguration, exists bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.StatefulSets = append(p.StatefulSets, PlannedStatefulSet{StatefulSet: s, Exists: exists})
}

func (p *Plan) certificates(certs []*cmapply.CertificateApplyConfiguration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Certificates = append(p.Certificates, certs...)
}

func (p *Plan) claim(c *corev1ac.PersistentVolumeClaimApplyConfiguration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Claims = append(p.Claims, c)
}
