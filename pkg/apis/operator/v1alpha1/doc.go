// Package v1alpha1 is the v1alpha1 version of the operator.kcp.io API: kcp setups
// (RootShard, Shard, FrontProxy, CacheServer) and their credentials (Kubeconfig,
// KubeconfigRequest). Field names follow the public kcp-operator API.
//
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=github.com/kcp-setups/apiserver/pkg/apis/operator
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=io.kcp.operator.v1alpha1
// +groupName=operator.kcp.io
package v1alpha1
