package pki

// The labels on every object the controllers write to the host cluster. The controllers find
// what they own by them, and delete it by them.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
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
