package pki

// The labels on every object the controllers write to the host cluster. The controllers find
// what they own by them, and delete it by them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	// LabelName names the application of a workload: NameKcp, as kcp-operator labels them.
	LabelName = "app.kubernetes.io/name"
	// NameKcp is the value of LabelName on every kcp workload.
	NameKcp = "kcp"
	// ManagedBy is the value of LabelManagedBy, and the server-side apply field manager.
	ManagedBy = "kcp-setups"
)

// OwnerLabel is the label that names the owning object of a kind, such as
// operator.kcp.io/rootshard.
func OwnerLabel(kind string) string { return AnnotationPrefix + kind }

// LabelOwnerUID carries the UID of the object that owns a host object, next to the owner's
// kind and name in OwnerLabel: a leftover of a deleted owner of the same name, or an object
// another setup derives under the same name, is never taken for this owner's. It is on the
// objects' metadata only, never in a selector or a pod template, so that adding it changes
// no immutable field and rolls no pod.
const LabelOwnerUID = AnnotationPrefix + "owner-uid"

// AnnotationPrefix is the prefix of the server's own labels and annotations.
const AnnotationPrefix = "operator.kcp.io/"

// kcp-operator's app.kubernetes.io/component values of the workloads of each kind, from its
// internal/resources (GetRootShardResourceLabels and its siblings).
const (
	RootShardWorkload        = "rootshard"
	ShardWorkload            = "shard"
	FrontProxyWorkload       = "front-proxy"
	CacheServerWorkload      = "cache-server"
	VirtualWorkspaceWorkload = "virtual-workspace"
)

// WorkloadLabels are the labels of a Deployment or Service owned by the object name of kind:
// its Labels in component, kcp-operator's value for the kind (RootShardWorkload, ...), and
// app.kubernetes.io/name: kcp, so that selectors and monitoring written for kcp-operator's
// workloads find these. app.kubernetes.io/managed-by stays kcp-setups: the controllers find
// what they own by it. A Deployment's pods carry the same labels, except where its selector,
// which is immutable, says otherwise (PodLabels).
func WorkloadLabels(kind, name, component string) map[string]string {
	l := Labels(kind, name, component)
	l[LabelName] = NameKcp
	return l
}

// PodLabels are the labels of a workload's pods: the workload's labels, overridden by its
// pod selector, which the pods must match and which never changes.
func PodLabels(workload, selector map[string]string) map[string]string {
	out := make(map[string]string, len(workload)+len(selector))
	for k, v := range workload {
		out[k] = v
	}
	for k, v := range selector {
		out[k] = v
	}
	return out
}

// Labels are the labels of an object owned by the object name of kind (lower case), in the
// given component role.
func Labels(kind, name, component string) map[string]string {
	return map[string]string{
		LabelManagedBy:   ManagedBy,
		LabelInstance:    name,
		LabelComponent:   component,
		OwnerLabel(kind): name,
	}
}

// LabelReference selects the reference Secrets, for sync tools; its value is the kind of
// reference (reference.Reference).
const LabelReference = AnnotationPrefix + "reference"
