package integration

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

const namespace = "team-a"

func objectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"team": "a"}}
}

func newRootShard(name string) *operatorv1alpha1.RootShard {
	return &operatorv1alpha1.RootShard{
		ObjectMeta: objectMeta(name),
		Spec: operatorv1alpha1.RootShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd.team-a.svc:2379"}},
			},
			External: operatorv1alpha1.ExternalConfig{Hostname: "kcp.example.com"},
		},
	}
}

func newShard(name, rootShard string) *operatorv1alpha1.Shard {
	return &operatorv1alpha1.Shard{
		ObjectMeta: objectMeta(name),
		Spec: operatorv1alpha1.ShardSpec{
			CommonShardSpec: operatorv1alpha1.CommonShardSpec{
				Etcd: operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://etcd.team-a.svc:2379"}},
			},
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: rootShard}},
		},
	}
}

func newFrontProxy(name, rootShard string) *operatorv1alpha1.FrontProxy {
	return &operatorv1alpha1.FrontProxy{
		ObjectMeta: objectMeta(name),
		Spec: operatorv1alpha1.FrontProxySpec{
			RootShard: operatorv1alpha1.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: rootShard}},
			External:  &operatorv1alpha1.FrontProxyExternalConfig{Hostname: "edge.example.com"},
		},
	}
}

func newCacheServer(name string) *operatorv1alpha1.CacheServer {
	return &operatorv1alpha1.CacheServer{ObjectMeta: objectMeta(name)}
}

func newKubeconfig(name, frontProxy string) *operatorv1alpha1.Kubeconfig {
	return &operatorv1alpha1.Kubeconfig{
		ObjectMeta: objectMeta(name),
		Spec: operatorv1alpha1.KubeconfigSpec{
			Target:    operatorv1alpha1.KubeconfigTarget{FrontProxyRef: &corev1.LocalObjectReference{Name: frontProxy}},
			Username:  "alice",
			Groups:    []string{"team-a"},
			Validity:  metav1.Duration{Duration: 24 * time.Hour},
			SecretRef: corev1.LocalObjectReference{Name: name + "-kubeconfig"},
		},
	}
}

func newVirtualWorkspace(name, rootShard string) *operatorv1alpha1.VirtualWorkspace {
	return &operatorv1alpha1.VirtualWorkspace{
		ObjectMeta: objectMeta(name),
		Spec: operatorv1alpha1.VirtualWorkspaceSpec{
			Target:   operatorv1alpha1.VirtualWorkspaceTarget{RootShardRef: &corev1.LocalObjectReference{Name: rootShard}},
			External: operatorv1alpha1.ExternalConfig{Hostname: "vw.example.com"},
		},
	}
}

func newLink(name, rootShard, identity string) *operatorv1alpha1.Link {
	return &operatorv1alpha1.Link{
		ObjectMeta: objectMeta(name),
		Spec: operatorv1alpha1.LinkSpec{
			RootShardRef: corev1.LocalObjectReference{Name: rootShard},
			Identity:     identity,
			Consumers:    []operatorv1alpha1.LinkConsumerKind{operatorv1alpha1.LinkConsumerShard, operatorv1alpha1.LinkConsumerKubeconfig},
		},
	}
}
