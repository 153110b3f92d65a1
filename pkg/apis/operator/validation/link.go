package validation

import (
	"slices"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// linkNameFunc: a Link's name is part of the URI SAN of its client certificate and of the
// names of what the server writes for it, so it is a DNS-1035 label, as every kind's.
var linkNameFunc = reserved(apimachineryvalidation.NameIsDNS1035Label)

// ValidateLink validates a Link on creation.
func ValidateLink(l *operator.Link) field.ErrorList {
	if l == nil {
		return nilObject("Link")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&l.ObjectMeta, true, linkNameFunc, field.NewPath("metadata"))
	return append(allErrs, validateLinkSpec(&l.Spec, field.NewPath("spec"))...)
}

// ValidateLinkUpdate validates an update of a Link's metadata and spec. The RootShard and the
// identity are what the remote's certificate and trust are made for: another RootShard or
// identity is another member, which is another Link.
func ValidateLinkUpdate(newObj, oldObj *operator.Link) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("Link")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateLinkSpec(&newObj.Spec, specPath)...)
	allErrs = append(allErrs, validateImmutable(newObj.Spec.RootShardRef, oldObj.Spec.RootShardRef,
		newObj.Spec.RootShardRef.Name, specPath.Child("rootShardRef"))...)
	allErrs = append(allErrs, validateImmutable(newObj.Spec.Identity, oldObj.Spec.Identity,
		newObj.Spec.Identity, specPath.Child("identity"))...)
	return allErrs
}

// ValidateLinkStatusUpdate validates an update of a Link's status.
func ValidateLinkStatusUpdate(newObj, oldObj *operator.Link) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("Link")
	}
	status, statusPath := &newObj.Status, field.NewPath("status")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateStatus[operator.Phase]("", nil, status.ObservedGeneration, status.Conditions, statusPath)...)
	return append(allErrs, validateOptionalDNS1123Subdomain(status.BootstrapSecretName, statusPath.Child("bootstrapSecretName"))...)
}

// validateLinkSpec checks a Link's spec.
func validateLinkSpec(spec *operator.LinkSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateDNS1035LabelName(spec.RootShardRef.Name, fldPath.Child("rootShardRef", "name"))
	allErrs = append(allErrs, validateLinkIdentity(spec.Identity, fldPath.Child("identity"))...)
	allErrs = append(allErrs, validateLinkConsumers(spec.Consumers, fldPath.Child("consumers"))...)
	if ref := spec.CacheServerRef; ref != nil {
		allErrs = append(allErrs, validateDNS1035LabelName(ref.Name, fldPath.Child("cacheServerRef", "name"))...)
	}
	return append(allErrs, validateLinkDNSNames(spec.DNSNames, fldPath.Child("dnsNames"))...)
}

// validateLinkIdentity checks the identity a remote's client certificate carries as a DNS
// SAN and its common name: a DNS-1123 subdomain, which is lower case, so that the listener
// compares it byte for byte with the certificate's, of at most 64 characters.
func validateLinkIdentity(identity string, fldPath *field.Path) field.ErrorList {
	if identity == "" {
		return field.ErrorList{field.Required(fldPath, "the DNS name the remote's client certificate carries")}
	}
	if len(identity) > MaxCommonNameLength {
		// The Link's client certificate carries it as its CommonName too.
		return field.ErrorList{field.TooLong(fldPath, identity, MaxCommonNameLength)}
	}
	return invalidForEach(fldPath, identity, validation.IsDNS1123Subdomain(identity))
}

// validateLinkConsumers checks the consumer kinds: at least one, each known, none twice.
func validateLinkConsumers(consumers []operator.LinkConsumerKind, fldPath *field.Path) field.ErrorList {
	if len(consumers) == 0 {
		return field.ErrorList{field.Required(fldPath, "the kinds the remote may realize: "+joinOr(consumerKindNames()))}
	}
	var allErrs field.ErrorList
	seen := sets.New[operator.LinkConsumerKind]()
	for i, c := range consumers {
		switch {
		case !slices.Contains(operator.LinkConsumerKinds, c):
			allErrs = append(allErrs, field.NotSupported(fldPath.Index(i), c, operator.LinkConsumerKinds))
		case seen.Has(c):
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), c))
		}
		seen.Insert(c)
	}
	return allErrs
}

// consumerKindNames are the consumer kinds, for a message.
func consumerKindNames() []string {
	names := make([]string, len(operator.LinkConsumerKinds))
	for i, k := range operator.LinkConsumerKinds {
		names[i] = string(k)
	}
	return names
}

// validateLinkDNSNames checks the DNS names a remote's serving certificates may carry, as a
// certificate template's: each a DNS-1123 subdomain, or "*." and one; and none twice.
func validateLinkDNSNames(names []string, fldPath *field.Path) field.ErrorList {
	allErrs := validateDNSNames(names, fldPath)
	seen := sets.New[string]()
	for i, name := range names {
		if name != "" && seen.Has(name) {
			allErrs = append(allErrs, field.Duplicate(fldPath.Index(i), name))
		}
		seen.Insert(name)
	}
	return allErrs
}
