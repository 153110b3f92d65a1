package framework

import (
	"context"
	_ "embed"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ShardGVR is kcp's Shard API, which a KcpDouble serves in every workspace.
var ShardGVR = schema.GroupVersionResource{Group: "core.kcp.io", Version: "v1alpha1", Resource: "shards"}

// ShardObject is a kcp Shard named name, at baseURL (empty for none).
func ShardObject(name, baseURL string) *unstructured.Unstructured {
	spec := map[string]any{}
	if baseURL != "" {
		spec["baseURL"] = baseURL
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.kcp.io/v1alpha1", "kind": "Shard",
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
}

// shardCRD is the CustomResourceDefinition of kcp's Shard API.
//
//go:embed crds/core.kcp.io_shards.yaml
var shardCRD []byte

// applyShardCRD installs kcp's Shard API into the backend as its admin, with server-side
// apply (a restart applies it again, unchanged), and waits until it is established.
func (d *KcpDouble) applyShardCRD(ctx context.Context) error {
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(shardCRD, &crd.Object); err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(d.adminConfig)
	if err != nil {
		return err
	}
	if _, err := client.Resource(crdGVR).Apply(ctx, crd.GetName(), crd, localstack.ApplyOptions); err != nil {
		return err
	}
	admins := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "system:kcp:admin:cluster-admin"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:kcp:admin"}},
	}}
	bindings := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	if _, err := client.Resource(bindings).Apply(ctx, admins.GetName(), admins, localstack.ApplyOptions); err != nil {
		return err
	}
	return localstack.Poll(ctx, "the Shard API to be established", time.Minute, []*localstack.Process{d.proc}, func(ctx context.Context) (bool, error) {
		got, err := client.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
		return err == nil && localstack.UnstructuredCondition(got, "Established"), err
	})
}
