package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of every kind in this package.
const GroupName = "operator.kcp.io"

// SchemeGroupVersion is the group and version of this package.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource takes an unqualified resource and returns a group-qualified GroupResource.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

var (
	// SchemeBuilder registers the types, defaulters and conversions of this version.
	SchemeBuilder      runtime.SchemeBuilder
	localSchemeBuilder = &SchemeBuilder
	// AddToScheme adds this version to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// The generated defaulters and conversions register themselves on localSchemeBuilder;
	// the types, the hand-written defaults and the field label conversions are added here.
	localSchemeBuilder.Register(addKnownTypes, addDefaultingFuncs, addFieldLabelConversions)
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&RootShard{}, &RootShardList{},
		&Shard{}, &ShardList{},
		&FrontProxy{}, &FrontProxyList{},
		&CacheServer{}, &CacheServerList{},
		&Kubeconfig{}, &KubeconfigList{},
		&VirtualWorkspace{}, &VirtualWorkspaceList{},
		&Link{}, &LinkList{},
		&KubeconfigRequest{},
		&CARotation{},
		&EtcdSnapshotRequest{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
