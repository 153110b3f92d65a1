package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/kcpclient"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// RealizeEtcd applies a managed etcd's Services, StatefulSet and PodDisruptionBudget, and
// returns how many objects it wrote and the StatefulSet as the cache has it (nil before it
// exists). The StatefulSet is created once the Secrets its members mount exist, and its pods
// roll when one changes.
func (h *Host) RealizeEtcd(ctx context.Context, e *etcd.Cluster) (int, *appsv1.StatefulSet, error) {
	wrote := 0
	for _, svc := range []*corev1ac.ServiceApplyConfiguration{e.PeerService(), e.Service()} {
		w, err := h.ServiceApplier.ApplyIfChanged(ctx, svc)
		if err != nil {
			return wrote, nil, err
		}
		wrote += Count(w)
	}
	current, err := h.StatefulSets.StatefulSets(e.Namespace).Get(e.Name())
	if apierrors.IsNotFound(err) {
		current, err = nil, nil
	}
	if err != nil {
		return wrote, nil, err
	}
	versions := h.MountedVersions(e.Namespace, e.MountedSecrets())
	if current == nil {
		// Created before its certificates, the StatefulSet would roll its members once per
		// certificate issued; their Secrets' events bring the owner back.
		for _, name := range e.MountedSecrets() {
			if _, ok := versions[name]; !ok {
				return wrote, nil, nil
			}
		}
	}
	w, err := h.StatefulSetApplier.ApplyIfChanged(ctx, e.StatefulSet(workload.SecretsHash(versions)))
	if err != nil {
		return wrote, current, err
	}
	wrote += Count(w)
	if pdb := e.DisruptionBudget(); pdb != nil {
		w, err := h.DisruptionBudgetApplier.ApplyIfChanged(ctx, pdb)
		if err != nil {
			return wrote, current, err
		}
		wrote += Count(w)
	}
	return wrote, current, nil
}

// EtcdEndpoint is where a managed etcd's client port is reached: its client Service, whose
// name the members' serving certificate carries, and the members behind it.
func EtcdEndpoint(e *etcd.Cluster) kcpclient.Endpoint {
	return kcpclient.Endpoint{Namespace: e.Namespace, Service: e.Name(), Port: etcd.ClientPort,
		Selector: e.SelectorLabels(), ClusterDomain: e.ClusterDomain}
}
