package controller

import (
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// The framework's own tests describe the kinds they need here: package kinds, which
// describes them for real, imports this one.

// rootShards is a RootShard's Kind named name.
func rootShards(name string) Kind[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus] {
	return Kind[*operatorv1alpha1.RootShard, operatorv1alpha1.RootShardStatus]{Name: name,
		StatusOf: func(o *operatorv1alpha1.RootShard) *operatorv1alpha1.RootShardStatus { return &o.Status },
		CommonOf: func(s *operatorv1alpha1.RootShardStatus) Common {
			return Common{Phase: &s.Phase, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		}}
}

// kubeconfigs is a Kubeconfig's Kind named name: a kind with phases of its own.
func kubeconfigs(name string) Kind[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus] {
	return Kind[*operatorv1alpha1.Kubeconfig, operatorv1alpha1.KubeconfigStatus]{Name: name,
		StatusOf: func(o *operatorv1alpha1.Kubeconfig) *operatorv1alpha1.KubeconfigStatus { return &o.Status },
		CommonOf: func(s *operatorv1alpha1.KubeconfigStatus) Common {
			return Common{OwnPhase: func() string { return string(s.Phase) }, ObservedGeneration: &s.ObservedGeneration, Conditions: &s.Conditions}
		}}
}
