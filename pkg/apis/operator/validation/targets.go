package validation

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// targetRef is one of the references of a target of which exactly one is set, such as a
// Kubeconfig's or a VirtualWorkspace's.
type targetRef struct {
	// field is the reference's JSON name, e.g. rootShardRef.
	field string
	// kind is what the reference names, e.g. RootShard.
	kind string
	ref  *corev1.LocalObjectReference
	// namePath is the path of the name below the reference's field: name, or for a link
	// secretRef.name.
	namePath []string
}

// linkKind is the kind a target column shows for a link: Link/<bootstrap Secret>.
const linkKind = "Link"

// linkRef is the reference at field of a link, which names its bootstrap Secret: nil when
// link is nil.
func linkRef(field string, link *operator.RootShardLink) targetRef {
	r := targetRef{field: field, kind: linkKind, namePath: []string{"secretRef", "name"}}
	if link != nil {
		r.ref = &link.SecretRef
	}
	return r
}

// validateName validates the name of what a reference names: a Secret's (a link's bootstrap
// Secret too) is a DNS subdomain, our kinds' a DNS-1035 label.
func (r targetRef) validateName(refPath *field.Path) field.ErrorList {
	namePath := refPath.Child("name")
	if len(r.namePath) > 0 {
		namePath = refPath.Child(r.namePath[0], r.namePath[1:]...)
	}
	if r.kind == "Secret" || r.kind == linkKind {
		return validateDNS1123SubdomainName(r.ref.Name, namePath)
	}
	return validateDNS1035LabelName(r.ref.Name, namePath)
}

// kubeconfigTargetRefs are the references of a Kubeconfig's target, in field order.
func kubeconfigTargetRefs(target *operator.KubeconfigTarget) []targetRef {
	return []targetRef{
		{"rootShardRef", "RootShard", target.RootShardRef, nil},
		{"shardRef", "Shard", target.ShardRef, nil},
		{"frontProxyRef", "FrontProxy", target.FrontProxyRef, nil},
		{"rootShardSecretRef", "Secret", target.RootShardSecretRef, nil},
		linkRef("rootShardLink", target.RootShardLink),
	}
}

// rootShardConfigRefs are the references of a Shard's or FrontProxy's spec.rootShard.
func rootShardConfigRefs(config *operator.RootShardConfig) []targetRef {
	return []targetRef{{"ref", "RootShard", config.Reference, nil}, {"secretRef", "Secret", config.SecretRef, nil}, linkRef("link", config.Link)}
}

// cacheConfigRefs are the references of a spec.cache.
func cacheConfigRefs(config *operator.CacheConfig) []targetRef {
	return []targetRef{{"ref", "CacheServer", config.Reference, nil}, {"secretRef", "Secret", config.SecretRef, nil}, linkRef("link", config.Link)}
}

// virtualWorkspaceTargetRefs are the references of a VirtualWorkspace's target.
func virtualWorkspaceTargetRefs(target *operator.VirtualWorkspaceTarget) []targetRef {
	return []targetRef{
		{"rootShardRef", "RootShard", target.RootShardRef, nil},
		{"shardRef", "Shard", target.ShardRef, nil},
	}
}

// validateOneTarget checks that exactly one of refs is set. Every ref that is set has its
// name checked, so that all faults show up at once.
func validateOneTarget(refs []targetRef, fldPath *field.Path) field.ErrorList {
	return validateRefs(refs, true, fldPath)
}

// validateRefs checks that at most one of refs is set, and one when required.
func validateRefs(refs []targetRef, required bool, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	fields := make([]string, len(refs))
	for i, r := range refs {
		fields[i] = r.field
	}
	alternatives := joinOr(fields)
	set := 0
	for _, r := range refs {
		if r.ref == nil {
			continue
		}
		refPath := fldPath.Child(r.field)
		if set++; set > 1 {
			allErrs = append(allErrs, field.Forbidden(refPath, "only one of "+alternatives+" may be set"))
		}
		allErrs = append(allErrs, r.validateName(refPath)...)
	}
	if set == 0 && required {
		allErrs = append(allErrs, field.Required(fldPath, "one of "+alternatives+" is required"))
	}
	return allErrs
}

// describeTarget renders a target as the Target printer column does, e.g. FrontProxy/edge.
func describeTarget(refs []targetRef) string {
	for _, r := range refs {
		if r.ref != nil {
			return r.kind + "/" + r.ref.Name
		}
	}
	return ""
}

// joinOr lists alternatives as a sentence does: "a, b or c".
func joinOr(alternatives []string) string {
	if len(alternatives) < 2 {
		return strings.Join(alternatives, "")
	}
	last := len(alternatives) - 1
	return strings.Join(alternatives[:last], ", ") + " or " + alternatives[last]
}
