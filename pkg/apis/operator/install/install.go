// Package install registers the operator.kcp.io API group in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// Install registers the internal and every served version of the group, v1alpha1 first.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(operator.AddToScheme(scheme))
	utilruntime.Must(operatorv1alpha1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(operatorv1alpha1.SchemeGroupVersion))
}
