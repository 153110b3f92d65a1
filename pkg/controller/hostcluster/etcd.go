package hostcluster

import (
	"maps"
	"slices"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// Etcd applies a managed etcd's Services, StatefulSet and PodDisruptionBudget, and returns
// the StatefulSet as the cache has it (nil before it exists). The StatefulSet is created once
// the Secrets its members mount exist, and its pods roll when one changes.
func (w *Writes) Etcd(e *etcd.Cluster) *appsv1.StatefulSet {
	w.Services(e.PeerService(), e.Service())
	if w.err != nil {
		return nil
	}
	current, err := w.host.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		w.err = err
		return nil
	}
	w.restoreClient(e)
	if w.err != nil {
		return nil
	}
	// The members' restore runs in the server's own image: without one (no
	// --etcd-agent-image, EtcdBackupReady says so) nothing starts rather than an empty cluster.
	e.AgentImage = w.host.EtcdAgentImage
	if current == nil && (e.HoldForRestore || e.Restoring != nil && e.AgentImage == "") {
		// The snapshot a restore names has not passed its check: nothing starts from it,
		// and no empty cluster starts instead.
		return nil
	}
	if current != nil {
		// A StatefulSet's claim templates cannot change: one from before the claims carried
		// their owner's UID keeps them unmarked (and its owner's deletion keeps those claims).
		e.OwnerUID = claimsOwnerUID(current)
	}
	versions := w.host.MountedVersions(e.Namespace, e.MountedSecrets())
	if current == nil && slices.ContainsFunc(e.MountedSecrets(), func(s string) bool { _, ok := versions[s]; return !ok }) {
		// Created before its certificates, the StatefulSet would roll its members once per
		// certificate issued; their Secrets' events bring the owner back.
		return nil
	}
	sts := e.StatefulSet(workload.SecretsHash(versions))
	if w.plan != nil {
		w.plan.statefulSet(sts, current != nil)
		return current
	}
	w.apply(w.host.StatefulSetApplier.ApplyIfChanged(w.ctx, sts))
	if pdb := e.DisruptionBudget(); pdb != nil && w.err == nil {
		w.apply(w.host.DisruptionBudgetApplier.ApplyIfChanged(w.ctx, pdb))
	}
	return current
}

// restoreClient applies the members' client certificate toward another setup's agent while a
// restore from that setup's store is about to start (the StatefulSet waits for its Secret),
// and deletes it, Certificate then Secret, each only when it carries the owner's UID, once no
// restore reads with it (e.DropRestoreClient): it is of another RootShard's etcd client CA,
// which that setup's agent and etcd trust.
func (w *Writes) restoreClient(e *etcd.Cluster) {
	if r := e.Restoring; r != nil && r.Certificate != nil {
		if w.plan != nil {
			w.plan.certificates([]*cmapply.CertificateApplyConfiguration{r.Certificate})
			return
		}
		w.apply(w.host.CertificateApplier.ApplyIfChanged(w.ctx, r.Certificate))
		return
	}
	if !e.DropRestoreClient || w.plan != nil {
		return
	}
	owner, ok := OwnerFrom(w.ctx)
	if !ok {
		return
	}
	ns, name := e.Namespace, e.RestoreClientName()
	cert, err := w.host.Certificates.Certificates(ns).Get(name)
	w.deleteOwned(owner, "Certificate", ns, name, cert, err, w.host.CertManager.CertmanagerV1().Certificates(ns).Delete)
	secret, err := w.host.Secrets.Secrets(ns).Get(name)
	w.deleteOwned(owner, "Secret", ns, name, secret, err, w.host.Kube.CoreV1().Secrets(ns).Delete)
}

// claimsOwnerUID is the owner UID the claim templates of sts give its claims.
func claimsOwnerUID(sts *appsv1.StatefulSet) types.UID {
	for _, t := range sts.Spec.VolumeClaimTemplates {
		if uid := t.Labels[pki.LabelOwnerUID]; uid != "" {
			return types.UID(uid)
		}
	}
	return ""
}

// EtcdEndpoint is where a managed etcd's client port is reached: its client Service, whose
// name the members' serving certificate carries, and the members behind it.
func EtcdEndpoint(e *etcd.Cluster) kcpclient.Endpoint {
	return kcpclient.Endpoint{Namespace: e.Namespace, Service: e.Name(), Port: etcd.ClientPort,
		Selector: e.SelectorLabels(), ClusterDomain: e.ClusterDomain}
}

// EtcdMemberEndpoint is where member i of a managed etcd is reached by itself: its own DNS name
// under the peer Service, which the members' serving certificate carries, and its pod alone
// (the StatefulSet controller labels each pod with its name).
func EtcdMemberEndpoint(e *etcd.Cluster, i int32) kcpclient.Endpoint {
	selector := maps.Clone(e.SelectorLabels())
	selector[appsv1.StatefulSetPodNameLabel] = e.MemberName(i)
	return kcpclient.Endpoint{Namespace: e.Namespace, Service: e.MemberName(i) + "." + e.PeerServiceName(), Port: etcd.ClientPort,
		Selector: selector, ClusterDomain: e.ClusterDomain}
}

// EtcdAgentEndpoint is where a managed etcd's backup agent is reached: its Service, whose
// name the agent's serving certificate carries, and the agent's pod behind it.
func EtcdAgentEndpoint(e *etcd.Cluster) kcpclient.Endpoint {
	return kcpclient.Endpoint{Namespace: e.Namespace, Service: e.AgentName(), Port: etcd.AgentPort,
		Selector: e.AgentSelectorLabels(), ClusterDomain: e.ClusterDomain}
}
