package validation

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// maxLoggingLevel is the highest klog verbosity kcp knows.
const maxLoggingLevel = 10

// validateDNS1123SubdomainName checks a required name of a Secret, ConfigMap, issuer or host.
func validateDNS1123SubdomainName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return invalidForEach(fldPath, name, validation.IsDNS1123Subdomain(name))
}

// validateOptionalDNS1123Subdomain checks a name that may be left empty.
func validateOptionalDNS1123Subdomain(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	return invalidForEach(fldPath, name, validation.IsDNS1123Subdomain(name))
}

// validateDNS1035LabelName checks a required reference to a RootShard, Shard, FrontProxy or
// CacheServer, whose names are DNS-1035 labels.
func validateDNS1035LabelName(name string, fldPath *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return invalidForEach(fldPath, name, validation.IsDNS1035Label(name))
}

// invalidForEach turns the messages of a k8s.io/apimachinery/pkg/util/validation check into
// field errors.
func invalidForEach(fldPath *field.Path, value any, msgs []string) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range msgs {
		allErrs = append(allErrs, field.Invalid(fldPath, value, msg))
	}
	return allErrs
}

// validateSecretReference checks an optional reference to a Secret in the same namespace.
func validateSecretReference(ref *corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	return validateDNS1123SubdomainName(ref.Name, fldPath.Child("name"))
}

// referenceName is the name of an optional reference, empty when it is absent.
func referenceName(ref *corev1.LocalObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Name
}

// validateLocalObjectReferences checks a list of references such as imagePullSecrets.
func validateLocalObjectReferences(refs []corev1.LocalObjectReference, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, ref := range refs {
		allErrs = append(allErrs, validateDNS1123SubdomainName(ref.Name, fldPath.Index(i).Child("name"))...)
	}
	return allErrs
}

// validateDataKeyReference checks a reference to one key of a Secret or ConfigMap.
func validateDataKeyReference(ref *operator.LocalDataKeyReference, fldPath *field.Path) field.ErrorList {
	if ref == nil {
		return nil
	}
	allErrs := validateDNS1123SubdomainName(ref.Name, fldPath.Child("name"))
	if ref.Key == "" {
		allErrs = append(allErrs, field.Required(fldPath.Child("key"), ""))
	} else {
		allErrs = append(allErrs, invalidForEach(fldPath.Child("key"), ref.Key, validation.IsConfigMapKey(ref.Key))...)
	}
	return allErrs
}

// validateReplicas checks an optional replica count.
func validateReplicas(replicas *int32, fldPath *field.Path) field.ErrorList {
	if replicas == nil {
		return nil
	}
	return apimachineryvalidation.ValidateNonnegativeField(int64(*replicas), fldPath)
}

// validatePort checks a required port number.
func validatePort(port int32, fldPath *field.Path) field.ErrorList {
	return invalidForEach(fldPath, port, validation.IsValidPortNum(int(port)))
}

// validateNonNegativeInt32 checks a count or size where 0 means the component's default.
func validateNonNegativeInt32(value int32, fldPath *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateNonnegativeField(int64(value), fldPath)
}

// validateNonNegativeDuration checks an optional duration such as a TTL or a backoff.
func validateNonNegativeDuration(d *metav1.Duration, fldPath *field.Path) field.ErrorList {
	if d == nil || d.Duration >= 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, d.Duration.String(), apimachineryvalidation.IsNegativeErrorMsg)}
}

// validateMinDuration checks an optional duration against a lower bound.
func validateMinDuration(d *metav1.Duration, minimum time.Duration, fldPath *field.Path) field.ErrorList {
	if d == nil || d.Duration >= minimum {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, d.Duration.String(), fmt.Sprintf("must be at least %s", minimum))}
}

// validateClusterDomain checks the cluster's DNS domain, which is part of every in-cluster
// URL the server builds.
func validateClusterDomain(domain string, fldPath *field.Path) field.ErrorList {
	return validateDNS1123SubdomainName(domain, fldPath)
}

// validateLogging checks the klog verbosity.
func validateLogging(logging *operator.LoggingSpec, fldPath *field.Path) field.ErrorList {
	if logging == nil {
		return nil
	}
	return invalidForEach(fldPath.Child("level"), logging.Level, validation.IsInRange(int(logging.Level), 0, maxLoggingLevel))
}

// validateExtraArgs checks the arguments appended, as written and in order, to the end of a
// command line. Each is a flag, or the value of the flag just before it, which kcp-operator's
// users write as two entries (["--foo", "bar"]). A value anywhere else would be a positional
// argument, and "--" would turn the flags after it into ones; the server's own flags all
// carry their value after '=', so no entry can attach to one of them.
func validateExtraArgs(args []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	valueAllowed := false
	for i, arg := range args {
		switch {
		case arg == "--" || arg == "-":
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), arg, "must be a flag with a name"))
			valueAllowed = false
		case strings.HasPrefix(arg, "-"):
			// A flag without '=' may take its value from the next entry.
			valueAllowed = !strings.Contains(arg, "=")
		case valueAllowed:
			valueAllowed = false
		default:
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), arg,
				"must be a flag starting with '-', or the value of a flag without '=' just before it"))
		}
	}
	return allErrs
}

// validateNonEmptyUniqueStrings checks a list of names such as groups: every entry set and
// none repeated.
func validateNonEmptyUniqueStrings(values []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, v := range values {
		switch {
		case v == "":
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
		case seen.Has(v):
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), v))
		}
		seen.Insert(v)
	}
	return allErrs
}

// validateNoSurroundingWhitespace checks a user or group name that becomes a certificate
// subject, where surrounding whitespace would create a lookalike identity.
func validateNoSurroundingWhitespace(value string, fldPath *field.Path) field.ErrorList {
	if strings.TrimSpace(value) != value {
		return field.ErrorList{field.Invalid(fldPath, value, "may not begin or end with whitespace")}
	}
	return nil
}

// validateImmutable rejects a change. shown is what the error reports as the new value,
// because internal structs and pointers render poorly.
func validateImmutable(newVal, oldVal, shown any, fldPath *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(newVal, oldVal) {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, shown, apimachineryvalidation.FieldImmutableErrorMsg)}
}

// nilObject is returned instead of panicking when a caller passes no object.
func nilObject(kind string) field.ErrorList {
	return field.ErrorList{field.InternalError(field.NewPath(""), fmt.Errorf("no %s to validate", kind))}
}
