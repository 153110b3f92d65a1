package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/pki"
)

// OwnerKey is the key of the object of kind that owns a host object, by its owner label, or
// nil.
func OwnerKey(m metav1.Object, kind string) []string {
	if name := m.GetLabels()[pki.OwnerLabel(kind)]; name != "" {
		return []string{m.GetNamespace() + "/" + name}
	}
	return nil
}
