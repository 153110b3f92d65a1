package store

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
)

// adoptPath is the field of the adopt annotation, in errors.
var adoptPath = field.NewPath("metadata", "annotations").Key(operatorv1alpha1.AnnotationAdopt)

// ValidateAdopt allows the adopt annotation only with its one value.
func ValidateAdopt(o metav1.Object) field.ErrorList {
	v, ok := o.GetAnnotations()[operatorv1alpha1.AnnotationAdopt]
	if !ok || v == operatorv1alpha1.AdoptKcpOperator {
		return nil
	}
	return field.ErrorList{field.NotSupported(adoptPath, v, []string{operatorv1alpha1.AdoptKcpOperator})}
}

// ValidateAdoptUpdate refuses the adopt annotation on an update of an object stored without
// it: a takeover of kcp-operator's objects happens only while an object created with the
// annotation is first realized (the condition TakenOver records its end), never later, when
// the names it derives hold the setup's own objects and keys.
func ValidateAdoptUpdate(o, old metav1.Object) field.ErrorList {
	errs := ValidateAdopt(o)
	_, has := o.GetAnnotations()[operatorv1alpha1.AnnotationAdopt]
	if _, had := old.GetAnnotations()[operatorv1alpha1.AnnotationAdopt]; has && !had {
		errs = append(errs, field.Invalid(adoptPath, o.GetAnnotations()[operatorv1alpha1.AnnotationAdopt],
			"may be set only when the object is created: a takeover of kcp-operator's objects happens while an object created with it is first realized, never later"))
	}
	return errs
}

// AdoptPermissions are what taking over kcp-operator's objects has the server do: it
// rewrites and deletes Deployments, Services, ConfigMaps, Secrets (the CAs' keys among them),
// Certificates and Issuers of the namespace that its author did not make through this server.
// Only an author who may delete each of them directly may ask for it.
func AdoptPermissions(o metav1.Object) []Permission {
	if _, ok := o.GetAnnotations()[operatorv1alpha1.AnnotationAdopt]; !ok {
		return nil
	}
	fld, value := adoptPath.String(), operatorv1alpha1.AdoptKcpOperator
	perms := []Permission{
		{Field: fld, Value: value, Verb: "delete", Group: "apps", Resource: "deployments"},
		{Field: fld, Value: value, Verb: "delete", Resource: "services"},
		{Field: fld, Value: value, Verb: "delete", Resource: "configmaps"},
		{Field: fld, Value: value, Verb: "delete", Resource: "secrets"},
	}
	for _, r := range []string{"certificates", "issuers"} {
		perms = append(perms, Permission{Field: fld, Value: value, Verb: "delete", Group: cmv1.SchemeGroupVersion.Group, Resource: r})
	}
	return perms
}
