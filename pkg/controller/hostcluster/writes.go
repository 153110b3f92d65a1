package hostcluster

import (
	"context"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/kcp"
	"github.com/kcp-setups/apiserver/pkg/resources/reference"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Writes is one reconcile's writes to the host cluster, in the order they depend on each
// other: each write that changed an object counts, and the first failure stops the rest, so
// that a reconcile reads as the list of what it writes. Every write goes through the
// appliers (hash, ownership, drift), as one by one.
type Writes struct {
	ctx   context.Context
	host  *Host
	wrote int
	err   error
	// joined is the Joined of the batch (Joined): the certificates it writes are issued as
	// that says (Joined.IssuedBy).
	joined *reference.Joined
	// plan, when set, records what the batch would write instead (Planning).
	plan *Plan
}

// Writes starts a batch of writes for the reconcile of ctx; in a context of Planning, a
// batch that records into its plan instead of writing.
func (h *Host) Writes(ctx context.Context) *Writes {
	return &Writes{ctx: ctx, host: h, plan: planOf(ctx)}
}

// Done is how many objects the batch wrote, and the failure that stopped it: what
// Lifecycle.Applied records.
func (w *Writes) Done() (int, error) { return w.wrote, w.err }

// Built takes the error of a builder (or of a read of what it builds from) and reports
// whether the batch goes on: err stops it, as a failed write does. With Secret, BuiltSecrets
// and ConfigMap, which take the builders' (value, error) pairs as they are, a reconcile has
// no exit of its own.
func (w *Writes) Built(err error) bool {
	if w.err == nil {
		w.err = err
	}
	return w.err == nil
}

// Failed reports whether the batch has stopped: what it would build next is not needed.
func (w *Writes) Failed() bool { return w.err != nil }

// Do runs a step of the batch that writes by itself and counts its writes, unless the batch
// has stopped.
func (w *Writes) Do(step func(ctx context.Context) (int, error)) {
	if w.err != nil || w.plan != nil {
		return
	}
	n, err := step(w.ctx)
	w.wrote += n
	w.err = err
}

// write runs one applier's write and adds its outcome; a planned batch writes nothing of
// what its plan does not record.
func (w *Writes) write(applier func() (bool, error)) {
	if w.plan == nil {
		w.apply(applier())
	}
}

// apply adds the outcome of one applier's write.
func (w *Writes) apply(wrote bool, err error) {
	if wrote {
		w.wrote++
	}
	w.err = err
}

// Secrets applies Secrets, in order; a nil one is one not needed.
func (w *Writes) Secrets(secrets ...*corev1ac.SecretApplyConfiguration) {
	for _, s := range secrets {
		if w.err != nil {
			return
		}
		if s == nil {
			continue
		}
		w.write(func() (bool, error) { return w.host.SecretApplier.ApplyIfChanged(w.ctx, s) })
	}
}

// Secret applies a Secret as its builder returned it (Built); nil is one not needed.
func (w *Writes) Secret(s *corev1ac.SecretApplyConfiguration, err error) {
	if w.Built(err) {
		w.Secrets(s)
	}
}

// BuiltSecrets applies Secrets as their builder returned them (Built), in order.
func (w *Writes) BuiltSecrets(secrets []*corev1ac.SecretApplyConfiguration, err error) {
	if w.Built(err) {
		w.Secrets(secrets...)
	}
}

// Services applies Services, in order.
func (w *Writes) Services(services ...*corev1ac.ServiceApplyConfiguration) {
	for _, s := range services {
		if w.err != nil {
			return
		}
		w.write(func() (bool, error) { return w.host.ServiceApplier.ApplyIfChanged(w.ctx, s) })
	}
}

// ConfigMap applies a ConfigMap as its builder returned it (Built).
func (w *Writes) ConfigMap(cm *corev1ac.ConfigMapApplyConfiguration, err error) {
	if w.Built(err) {
		w.write(func() (bool, error) { return w.host.ConfigMapApplier.ApplyIfChanged(w.ctx, cm) })
	}
}

// Certificates applies Issuers and Certificates, then has the leaves whose CA changed since
// they were issued issued again (ReissueStaleLeaves).
func (w *Writes) Certificates(issuers []*cmapply.IssuerApplyConfiguration, certs []*cmapply.CertificateApplyConfiguration) {
	for _, issuer := range issuers {
		if w.err != nil {
			return
		}
		w.write(func() (bool, error) { return w.host.IssuerApplier.ApplyIfChanged(w.ctx, issuer) })
	}
	certs = w.joined.IssuedBy(certs)
	if w.plan != nil && w.err == nil {
		w.plan.certificates(certs)
		return
	}
	for _, cert := range certs {
		if w.err != nil {
			return
		}
		w.apply(w.host.CertificateApplier.ApplyIfChanged(w.ctx, cert))
	}
	w.Do(func(ctx context.Context) (int, error) {
		return w.host.ReissueStaleLeaves(ctx, issuers, certs, w.joined.SignersOf())
	})
}

// Joined applies the local CA Secrets, bundles and CA Issuers a consumer realizes from a
// reference Secret (reference.Join); nothing for nil, a consumer of a RootShard of its
// namespace. They carry the consumer's owner label: its deletion deletes them. The
// certificates the batch writes afterwards are issued as j says: over the link, for a
// linked consumer.
func (w *Writes) Joined(j *reference.Joined) {
	if j == nil {
		return
	}
	w.joined = j
	w.Secrets(j.Secrets...)
	w.Certificates(j.Issuers, nil)
}

// Workload applies a component's Deployment, then its PodDisruptionBudget.
func (w *Writes) Workload(d *appsv1ac.DeploymentApplyConfiguration) {
	w.workload(d, true)
}

// workload is Workload of a Deployment that exists or not: a plan records which.
func (w *Writes) workload(d *appsv1ac.DeploymentApplyConfiguration, exists bool) {
	if w.err != nil {
		return
	}
	if w.plan != nil {
		w.plan.deployment(d, exists)
		return
	}
	w.apply(w.host.DeploymentApplier.ApplyIfChanged(w.ctx, d))
	if w.err == nil {
		w.apply(w.host.ApplyDisruptionBudget(w.ctx, d))
	}
}

// DeploymentWhenMounted applies the Deployment namespace/name that deployment builds, from
// the Deployment as the cache has it (nil before it exists) and the hash of what its pods
// mount, with its PodDisruptionBudget (Workload). mounts are the builder's, as it mounts
// them: the Deployment is created once every one it waits for (workload.Mount.Waited)
// exists, and rolls when one that rolls it (workload.Mount.Rolls) changes. Created before
// them, it would roll once per Secret issued; their events bring its owner back.
func (w *Writes) DeploymentWhenMounted(namespace, name string, mounts []workload.Mount,
	deployment func(current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration) {
	w.deploymentWhenMounted(namespace, name, mounts, false, deployment)
}

// deploymentWhenMounted is DeploymentWhenMounted, with hold holding back the Deployment's
// creation for a reason of its owner's, whose event brings it back: a managed etcd whose
// members are not ready yet.
func (w *Writes) deploymentWhenMounted(namespace, name string, mounts []workload.Mount, hold bool,
	deployment func(current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration) {
	if w.err != nil {
		return
	}
	current, err := w.host.Deployments.Deployments(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		w.err = err
		return
	}
	versions, missing := w.host.mountedVersions(namespace, mounts)
	if current == nil && (hold || missing) {
		return
	}
	w.workload(deployment(current, workload.SecretsHash(versions)), current != nil)
}

// ExtraBundle is a CA bundle Secret made of one the controllers write (Base) and a user's
// extra CAs (Extra: a caBundleSecretRef or clientCABundleRef), which Build merges.
type ExtraBundle struct {
	Extra *corev1.LocalObjectReference
	Base  string
	Build func(base, extra []byte) *corev1ac.SecretApplyConfiguration
}

// ExtraBundles applies the bundles of namespace whose Extra is set, once every Base they are
// made of is written: until then there is nothing to add to, the Bases' events bring the
// owner back, and its Deployment waits for its bundles.
func (w *Writes) ExtraBundles(namespace string, bundles ...ExtraBundle) {
	if w.err != nil {
		return
	}
	var merged []*corev1ac.SecretApplyConfiguration
	for _, b := range bundles {
		if b.Extra == nil {
			continue
		}
		base, found, err := w.host.OwnCABundle(namespace, b.Base)
		if err != nil || !found {
			w.err = err
			return
		}
		extra, err := w.host.UsersCABundle(w.ctx, namespace, b.Extra)
		if err != nil {
			w.err = err
			return
		}
		merged = append(merged, b.Build(base, extra))
	}
	w.Secrets(merged...)
}

// KcpServer applies a kcp server's admin kubeconfigs and Service, its managed etcd, and its
// Deployment with its PodDisruptionBudget. The Deployment's pods roll when a Secret they
// mount changes.
func (w *Writes) KcpServer(s kcp.Server) {
	for _, identity := range []string{kcp.LogicalClusterAdmin, kcp.ExternalLogicalClusterAdmin} {
		w.Secret(s.AdminKubeconfig(identity))
	}
	w.Services(s.Service())
	if w.err != nil || s.Spec.KcpVirtualWorkspace != nil && s.VirtualWorkspace == nil {
		// Its VirtualWorkspace cannot serve it yet: the Deployment is rolled neither to
		// in-process virtual workspaces nor to a server that is not there. The
		// VirtualWorkspace's event brings the server's owner back.
		return
	}
	etcdReady := true
	if s.Etcd != nil {
		sts := w.Etcd(s.Etcd)
		w.EtcdBackupAgent(s.Etcd)
		etcdReady = sts != nil
		if etcdReady {
			etcdReady, _, _ = StatefulSetReady(sts)
		}
	}
	// Created before its managed etcd has every member ready, kcp would crash-loop until it
	// has; the StatefulSet's events bring the server's owner back.
	w.deploymentWhenMounted(s.Namespace, s.DeploymentName(), s.Mounts(), !etcdReady, s.Deployment)
}
