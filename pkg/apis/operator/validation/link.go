package validation

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

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
	allErrs = append(allErrs, validateOptionalDNS1123Subdomain(status.BootstrapSecretName, statusPath.Child("bootstrapSecretName"))...)
	return append(allErrs, validateLinkConsumerStatuses(status.Consumers, statusPath.Child("consumers"))...)
}

// The bounds of what a Link's status records of its remote's consumers: the remote reports
// them, so each is held to a size.
const (
	// MaxLinkConsumers is how many consumers a Link's status lists.
	MaxLinkConsumers = 256
	// MaxLinkConsumerCAs is how many CAs a consumer reports, and MaxLinkFingerprints how many
	// fingerprints per CA and kind of use (two while a CA rotates; more is a report to refuse).
	MaxLinkConsumerCAs  = 16
	MaxLinkFingerprints = 4
)

// LinkReportedKinds are the kinds a consumer reported over a link may be.
var LinkReportedKinds = []string{"Shard", "FrontProxy", "Kubeconfig", "CacheClient"}

func validateLinkConsumerStatuses(consumers []operator.LinkConsumerStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(consumers) > MaxLinkConsumers {
		allErrs = append(allErrs, field.TooMany(fldPath, len(consumers), MaxLinkConsumers))
	}
	type key struct{ kind, namespace, name string }
	seen := map[key]bool{}
	for i := range consumers {
		c := &consumers[i]
		p := fldPath.Index(i)
		k := key{c.Kind, c.Namespace, c.Name}
		if seen[k] {
			allErrs = append(allErrs, field.Duplicate(p, fmt.Sprintf("%s %s/%s", c.Kind, c.Namespace, c.Name)))
		}
		seen[k] = true
		allErrs = append(allErrs, ValidateLinkConsumerStatus(c, p)...)
	}
	return allErrs
}

// ValidateLinkConsumerStatus checks one consumer a remote reported: the listener refuses an
// event that fails it (400), as the status subresource does (422).
func ValidateLinkConsumerStatus(c *operator.LinkConsumerStatus, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if !slices.Contains(LinkReportedKinds, c.Kind) {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("kind"), c.Kind, LinkReportedKinds))
	}
	for _, msg := range apimachineryvalidation.ValidateNamespaceName(c.Namespace, false) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("namespace"), c.Namespace, msg))
	}
	allErrs = append(allErrs, validateDNS1123SubdomainName(c.Name, fldPath.Child("name"))...)
	switch {
	case c.UID == "":
		allErrs = append(allErrs, field.Required(fldPath.Child("uid"), ""))
	case len(c.UID) > 128:
		allErrs = append(allErrs, field.TooLong(fldPath.Child("uid"), "", 128))
	}
	if c.Generation < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("generation"), c.Generation, "must be at least 1"))
	}
	if c.Sequence < 1 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("sequence"), c.Sequence, "must be at least 1"))
	}
	if len(c.Trust) > MaxLinkConsumerCAs {
		allErrs = append(allErrs, field.TooMany(fldPath.Child("trust"), len(c.Trust), MaxLinkConsumerCAs))
	}
	cas := map[string]bool{}
	for i, ca := range c.Trust {
		p := fldPath.Child("trust").Index(i)
		if cas[ca.CA] {
			allErrs = append(allErrs, field.Duplicate(p.Child("ca"), ca.CA))
		}
		cas[ca.CA] = true
		if ca.CA == "" {
			allErrs = append(allErrs, field.Required(p.Child("ca"), ""))
		} else {
			allErrs = append(allErrs, invalidForEach(p.Child("ca"), ca.CA, validation.IsDNS1123Label(ca.CA))...)
		}
		allErrs = append(allErrs, validateFingerprints(ca.Trusted, p.Child("trusted"))...)
		allErrs = append(allErrs, validateFingerprints(ca.Served, p.Child("served"))...)
	}
	if len(c.KcpShard) > 253 {
		allErrs = append(allErrs, field.TooLong(fldPath.Child("kcpShard"), "", 253))
	}
	if c.BaseURL != "" {
		if u, err := url.Parse(c.BaseURL); err != nil || u.Scheme != "https" || u.Host == "" || len(c.BaseURL) > 2048 {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("baseURL"), c.BaseURL, "must be an https URL"))
		}
	}
	return allErrs
}

// validateFingerprints checks a set of SHA-256 fingerprints, each 64 lower-case hex digits.
func validateFingerprints(fps []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(fps) > MaxLinkFingerprints {
		allErrs = append(allErrs, field.TooMany(fldPath, len(fps), MaxLinkFingerprints))
	}
	for i, fp := range fps {
		if len(fp) != 64 || strings.Trim(fp, "0123456789abcdef") != "" {
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i), fp, "must be a SHA-256 fingerprint: 64 lower-case hex digits"))
		}
	}
	return allErrs
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
