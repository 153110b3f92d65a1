package validation

import (
	"fmt"
	"slices"

	apivalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// ValidateCARotation validates a request to the rotation subresource of an object whose
// rotatable CAs are authorities and whose rotations wait for members of memberKinds (none
// for a CacheServer). Its metadata is checked against the URL by the registry, and it is
// never stored.
func ValidateCARotation(req *operator.CARotation, authorities, memberKinds []string) field.ErrorList {
	if req == nil {
		return nilObject("CARotation")
	}
	var allErrs field.ErrorList
	spec := field.NewPath("spec")
	switch req.Spec.Phase {
	case operator.CARotationStart, operator.CARotationComplete:
	case "":
		allErrs = append(allErrs, field.Required(spec.Child("phase"), "Start or Complete"))
	default:
		allErrs = append(allErrs, field.NotSupported(spec.Child("phase"), req.Spec.Phase,
			[]operator.CARotationRequestPhase{operator.CARotationStart, operator.CARotationComplete}))
	}
	path := spec.Child("authorities")
	if len(req.Spec.Authorities) == 0 {
		allErrs = append(allErrs, field.Required(path, "the CAs to rotate"))
	}
	seen := map[string]bool{}
	for i, a := range req.Spec.Authorities {
		switch {
		case seen[a]:
			allErrs = append(allErrs, field.Duplicate(path.Index(i), a))
		case !slices.Contains(authorities, a):
			allErrs = append(allErrs, field.NotSupported(path.Index(i), a, authorities))
		}
		seen[a] = true
	}
	members := spec.Child("excludeMembers")
	if len(memberKinds) == 0 && len(req.Spec.ExcludeMembers) > 0 {
		return append(allErrs, field.Forbidden(members, "this kind's rotations wait for no member"))
	}
	return append(allErrs, validateMembers(req.Spec.ExcludeMembers, memberKinds, members)...)
}

// MaxExcludedMembers bounds the members one rotation excludes from its wait, in a request and
// in status.rotations[].excludedMembers.
const MaxExcludedMembers = 32

// RootShardMemberKinds are the kinds of the members a RootShard's rotations wait for; a Link
// stands for the consumers its remote reports (rotation.LinkMemberKind).
var RootShardMemberKinds = []string{"Shard", "FrontProxy", "VirtualWorkspace", "Link"}

// validateMembers checks a list of rotation members: a known kind, a valid name, each once,
// at most MaxExcludedMembers.
func validateMembers(members []operator.CARotationMember, kinds []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(members) > MaxExcludedMembers {
		allErrs = append(allErrs, field.TooMany(fldPath, len(members), MaxExcludedMembers))
	}
	seen := map[operator.CARotationMember]bool{}
	for i, m := range members {
		p := fldPath.Index(i)
		if !slices.Contains(kinds, m.Kind) {
			allErrs = append(allErrs, field.NotSupported(p.Child("kind"), m.Kind, kinds))
		}
		if m.Name == "" {
			allErrs = append(allErrs, field.Required(p.Child("name"), fmt.Sprintf("the %s's name", m.Kind)))
		}
		for _, msg := range apivalidation.IsDNS1123Subdomain(m.Name) {
			if m.Name != "" {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), m.Name, msg))
			}
		}
		if seen[m] {
			allErrs = append(allErrs, field.Duplicate(p, m))
		}
		seen[m] = true
	}
	return allErrs
}

// RootShardAuthorities and CacheServerAuthorities are the CAs status.rotations may name.
var (
	RootShardAuthorities   = []string{"root", "server", "client", "front-proxy-client", "requestheader-client", "service-account", "etcd-client", "etcd-peer"}
	CacheServerAuthorities = []string{"ca"}
)

// validateRotations checks status.rotations as the rotation subresource and the controllers
// write it: one entry per known authority, a known phase, slot 0 or 1, excluded members of
// memberKinds.
func validateRotations(rotations []operator.CARotationState, authorities, memberKinds []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	seen := map[string]bool{}
	phases := []operator.CARotationPhase{operator.CARotationPreparing, operator.CARotationPrepared, operator.CARotationCompleting, operator.CARotationCompleted}
	for i, r := range rotations {
		p := fldPath.Index(i)
		switch {
		case seen[r.Authority]:
			allErrs = append(allErrs, field.Duplicate(p.Child("authority"), r.Authority))
		case !slices.Contains(authorities, r.Authority):
			allErrs = append(allErrs, field.NotSupported(p.Child("authority"), r.Authority, authorities))
		}
		seen[r.Authority] = true
		if !slices.Contains(phases, r.Phase) {
			allErrs = append(allErrs, field.NotSupported(p.Child("phase"), r.Phase, phases))
		}
		if r.Slot != 0 && r.Slot != 1 {
			allErrs = append(allErrs, field.Invalid(p.Child("slot"), r.Slot, "must be 0 or 1"))
		}
		allErrs = append(allErrs, validateMembers(r.ExcludedMembers, memberKinds, p.Child("excludedMembers"))...)
	}
	return allErrs
}
