package validation

import (
	"regexp"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

// imageTagFmt is the tag grammar of the OCI distribution spec.
const imageTagFmt = `[\w][\w.-]{0,127}`

var imageTagRegexp = regexp.MustCompile("^" + imageTagFmt + "$")

// validateImage checks an image override. The repository is not parsed further: registries
// differ in what they accept, and the host cluster reports a bad one on the pod.
func validateImage(image *operator.ImageSpec, fldPath *field.Path) field.ErrorList {
	if image == nil {
		return nil
	}
	var allErrs field.ErrorList
	if strings.IndexFunc(image.Repository, unicode.IsSpace) >= 0 {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("repository"), image.Repository, "may not contain whitespace"))
	}
	if image.Tag != "" && !imageTagRegexp.MatchString(image.Tag) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("tag"), image.Tag,
			validation.RegexError("must be a valid image tag", imageTagFmt, "v0.32.3", "latest")))
	}
	allErrs = append(allErrs, validateLocalObjectReferences(image.ImagePullSecrets, fldPath.Child("imagePullSecrets"))...)
	return allErrs
}
