package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// minKubeconfigValidity is the shortest certificate lifetime of a Kubeconfig: cert-manager
// refuses Certificates that live less than an hour.
const minKubeconfigValidity = time.Hour

// workspacePathFmt is what kcp-operator's targetWorkspace pattern admits: a workspace path
// such as root:team-a, or a logical cluster's name such as 2x8k4qzl9j1mvh5c, both served by
// kcp at /clusters/<value>. Each ':'-separated segment is a DNS-1123 label.
const workspacePathFmt = `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(:[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*`

var workspacePathRegexp = regexp.MustCompile("^" + workspacePathFmt + "$")

// DefaultMaxKubeconfigValidity is the longest spec.validity of a Kubeconfig, unless the
// server's --max-kubeconfig-validity says otherwise: a Kubeconfig is renewed for as long as it
// exists, so its validity bounds how long a leaked certificate stays good, not how long the
// credential is available.
const DefaultMaxKubeconfigValidity = 30 * 24 * time.Hour

// KubeconfigValidation validates Kubeconfigs under the server's bounds.
type KubeconfigValidation struct {
	// MaxValidity bounds spec.validity; zero is DefaultMaxKubeconfigValidity.
	MaxValidity time.Duration
}

// ValidateKubeconfig validates a Kubeconfig on creation, under the default bounds.
func ValidateKubeconfig(kubeconfig *operator.Kubeconfig) field.ErrorList {
	return KubeconfigValidation{}.Validate(kubeconfig)
}

// ValidateKubeconfigUpdate validates an update of a Kubeconfig's metadata and spec, under the
// default bounds.
func ValidateKubeconfigUpdate(newObj, oldObj *operator.Kubeconfig) field.ErrorList {
	return KubeconfigValidation{}.ValidateUpdate(newObj, oldObj)
}

// Validate validates a Kubeconfig on creation.
func (v KubeconfigValidation) Validate(kubeconfig *operator.Kubeconfig) field.ErrorList {
	if kubeconfig == nil {
		return nilObject("Kubeconfig")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&kubeconfig.ObjectMeta, true, kubeconfigNameFunc, field.NewPath("metadata"))
	allErrs = append(allErrs, validateKubeconfigSpec(&kubeconfig.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateKubeconfigIdentity(&kubeconfig.Spec, field.NewPath("spec"))...)
	return allErrs
}

// ValidateUpdate validates an update of a Kubeconfig's metadata and spec. The identity's
// bounds apply to a changed value only, so that a Kubeconfig stored before them can still be
// edited otherwise, and its finalizers removed.
func (v KubeconfigValidation) ValidateUpdate(newObj, oldObj *operator.Kubeconfig) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("Kubeconfig")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateKubeconfigSpec(&newObj.Spec, specPath)...)
	if newObj.Spec.Username != oldObj.Spec.Username || !slices.Equal(newObj.Spec.Groups, oldObj.Spec.Groups) {
		allErrs = append(allErrs, validateKubeconfigIdentity(&newObj.Spec, specPath)...)
	}
	// The Secret holds credentials for one target; pointing it elsewhere would leave a
	// kubeconfig whose server and certificate disagree until the next renewal.
	newTarget := newObj.Spec.Target
	allErrs = append(allErrs, validateImmutable(newTarget, oldObj.Spec.Target, describeTarget(kubeconfigTargetRefs(&newTarget)), specPath.Child("target"))...)
	return allErrs
}

// Max is the server's maximum validity: MaxValidity, else DefaultMaxKubeconfigValidity.
func (v KubeconfigValidation) Max() time.Duration {
	if v.MaxValidity <= 0 {
		return DefaultMaxKubeconfigValidity
	}
	return v.MaxValidity
}

// Warnings are a Kubeconfig's warnings under the server's bounds: a spec.validity above the
// maximum is accepted, as kcp-operator accepts it (its samples ask for 8766h), and the
// certificate is issued for the maximum instead, so that no credential outlives it.
func (v KubeconfigValidation) Warnings(kc *operator.Kubeconfig) []string {
	warnings := KubeconfigWarnings(kc)
	if maxValidity := v.Max(); kc.Spec.Validity.Duration > maxValidity {
		warnings = append(warnings, fmt.Sprintf("spec.validity: %s is above the server's maximum (--max-kubeconfig-validity): the certificate is issued for %s and renewed as usual (status.validity)",
			kc.Spec.Validity.Duration, maxValidity))
	}
	return warnings
}

// validateKubeconfigIdentity holds a Kubeconfig's username and groups to what fits a
// certificate (validateIdentity).
func validateKubeconfigIdentity(spec *operator.KubeconfigSpec, fldPath *field.Path) field.ErrorList {
	return validateIdentity(spec.Username, spec.Groups, fldPath.Child("username"), fldPath.Child("groups"))
}

// ValidateKubeconfigStatusUpdate validates an update of a Kubeconfig's status.
func ValidateKubeconfigStatusUpdate(newObj, oldObj *operator.Kubeconfig) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("Kubeconfig")
	}
	status := &newObj.Status
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	allErrs = append(allErrs, validateStatus(status.Phase, kubeconfigPhases, status.ObservedGeneration, status.Conditions, statusPath)...)
	return append(allErrs, validateKubeconfigAuthorizationStatus(status.Authorization, statusPath.Child("authorization"))...)
}

// validateKubeconfigSpec checks a Kubeconfig's spec.
func validateKubeconfigSpec(spec *operator.KubeconfigSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateOneTarget(kubeconfigTargetRefs(&spec.Target), fldPath.Child("target"))
	allErrs = append(allErrs, validateWorkspacePath(spec.TargetWorkspace, fldPath.Child("targetWorkspace"))...)
	if spec.Username == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("username"), ""))
	}
	validityPath := fldPath.Child("validity")
	switch {
	case spec.Validity.Duration == 0:
		allErrs = append(allErrs, field.Required(validityPath, ""))
	case spec.Validity.Duration < minKubeconfigValidity:
		allErrs = append(allErrs, validateMinDuration(&spec.Validity, minKubeconfigValidity, validityPath)...)
	}
	allErrs = append(allErrs, validateDNS1123SubdomainName(spec.SecretRef.Name, fldPath.Child("secretRef", "name"))...)
	allErrs = append(allErrs, validateKubeconfigCertificateTemplate(spec.CertificateTemplate, spec.Validity, fldPath.Child("certificateTemplate"))...)
	allErrs = append(allErrs, validateKubeconfigAuthorization(spec.Authorization, spec.TargetWorkspace, fldPath.Child("authorization"))...)
	if spec.Authorization != nil && spec.Target.RootShardSecretRef != nil {
		// The server binds roles as its own identity toward a RootShard it runs; toward one
		// known by a copy of its Secret it has none, and the Secret grants none.
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("authorization"),
			"the server cannot bind roles in the kcp of a RootShard named by spec.target.rootShardSecretRef; bind them in kcp yourself"))
	}
	if spec.Authorization != nil && spec.Target.RootShardLink != nil {
		// Nor has it one toward a RootShard of another cluster, and the link's CSR policy
		// refuses the group the bindings would name (docs/links.md).
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("authorization"),
			"the server cannot bind roles in the kcp of a RootShard named by spec.target.rootShardLink; bind them in kcp yourself"))
	}
	return allErrs
}

// validateWorkspacePath checks a kcp workspace path such as root:team-a, or a logical
// cluster's name.
func validateWorkspacePath(workspace string, fldPath *field.Path) field.ErrorList {
	if workspacePathRegexp.MatchString(workspace) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, workspace, validation.RegexError(
		fmt.Sprintf("must be a workspace path or a logical cluster name: %q-separated segments of at most 63 lower case alphanumeric characters or '-', starting and ending with an alphanumeric character", ":"),
		workspacePathFmt, "root", "root:team-a", "2x8k4qzl9j1mvh5c"))}
}

// validateKubeconfigCertificateTemplate checks a Kubeconfig's certificate template. The
// identity and the lifetime have fields of their own, which the identity rule and the
// minimum check: a template may not add groups (the subject's organizations) or set the
// duration behind their back, and renews before the end of validity, as cert-manager
// requires.
func validateKubeconfigCertificateTemplate(tmpl *operator.CertificateTemplate, validity metav1.Duration, fldPath *field.Path) field.ErrorList {
	allErrs := validateCertificateTemplate(tmpl, fldPath)
	if tmpl == nil || tmpl.Spec == nil {
		return allErrs
	}
	specPath := fldPath.Child("spec")
	if s := tmpl.Spec.Subject; s != nil && len(s.Organizations) > 0 {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("subject", "organizations"),
			fmt.Sprintf("the groups of a Kubeconfig are spec.groups, which the identity rules check: write spec.groups: [%s] instead",
				strings.Join(s.Organizations, ", "))))
	}
	if d := tmpl.Spec.Duration; d != nil {
		allErrs = append(allErrs, field.Forbidden(specPath.Child("duration"),
			fmt.Sprintf("the lifetime of a Kubeconfig is spec.validity, which the server's maximum bounds: write spec.validity: %s instead", d.Duration)))
	}
	if r := tmpl.Spec.RenewBefore; r != nil && validity.Duration > 0 && r.Duration >= validity.Duration {
		allErrs = append(allErrs, field.Invalid(specPath.Child("renewBefore"), r.Duration.String(), "must be shorter than spec.validity"))
	}
	return allErrs
}
