package store

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// EtcdVolumesPermissions are what the delete-etcd-volumes annotation has the server do: when
// the object goes, it deletes its managed etcd's PersistentVolumeClaims, the setup's data.
// Only an author who may delete them directly may ask for it; any other value asks nothing.
func EtcdVolumesPermissions(o metav1.Object) []Permission {
	if o.GetAnnotations()[operatorv1alpha1.AnnotationDeleteEtcdVolumes] != "true" {
		return nil
	}
	return []Permission{{
		Field: field.NewPath("metadata", "annotations").Key(operatorv1alpha1.AnnotationDeleteEtcdVolumes).String(),
		Value: "true", Verb: "delete", Resource: "persistentvolumeclaims",
	}}
}
