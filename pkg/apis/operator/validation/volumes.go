package validation

import (
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// validateExtras checks extraArgs, extraVolumes and extraVolumeMounts of a spec. reserved
// are the directories the controllers mount into the component's container
// (pkg/resources/mountpaths).
func validateExtras(args []string, volumes []corev1.Volume, mounts []corev1.VolumeMount, reserved []string, specPath *field.Path) field.ErrorList {
	allErrs := validateExtraArgs(args, specPath.Child("extraArgs"))
	volumeErrs, volumeNames := validateExtraVolumes(volumes, specPath.Child("extraVolumes"))
	allErrs = append(allErrs, volumeErrs...)
	allErrs = append(allErrs, validateExtraVolumeMounts(mounts, volumeNames, reserved, specPath.Child("extraVolumeMounts"))...)
	return allErrs
}

// validateExtraVolumes checks the names and sources of extra volumes and returns the names
// for the mounts to refer to. A source is checked only for what a restricted pod may use;
// the rest of it is left to the host cluster.
func validateExtraVolumes(volumes []corev1.Volume, fldPath *field.Path) (field.ErrorList, sets.Set[string]) {
	var allErrs field.ErrorList
	names := sets.New[string]()
	for i, vol := range volumes {
		namePath := fldPath.Index(i).Child("name")
		switch {
		case vol.Name == "":
			allErrs = append(allErrs, field.Required(namePath, ""))
		case names.Has(vol.Name):
			allErrs = append(allErrs, field.Duplicate(namePath, vol.Name))
		default:
			allErrs = append(allErrs, invalidForEach(namePath, vol.Name, validation.IsDNS1123Label(vol.Name))...)
		}
		names.Insert(vol.Name)
		allErrs = append(allErrs, validateVolumeSource(&vol.VolumeSource, fldPath.Index(i))...)
	}
	return allErrs, names
}

// validateExtraVolumeMounts checks that every extra mount names an extra volume and mounts
// it at its own absolute path, neither at, under nor above a reserved directory: either
// would hide what the controllers mount there, or be hidden by it.
func validateExtraVolumeMounts(mounts []corev1.VolumeMount, volumeNames sets.Set[string], reserved []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	mountPaths := sets.New[string]()
	for i, mount := range mounts {
		idxPath := fldPath.Index(i)
		namePath, mountPathPath := idxPath.Child("name"), idxPath.Child("mountPath")
		allErrs = append(allErrs, validateMountPropagation(mount.MountPropagation, idxPath.Child("mountPropagation"))...)
		switch {
		case mount.Name == "":
			allErrs = append(allErrs, field.Required(namePath, ""))
		case !volumeNames.Has(mount.Name):
			allErrs = append(allErrs, field.NotFound(namePath, mount.Name))
		}

		if mount.MountPath == "" {
			allErrs = append(allErrs, field.Required(mountPathPath, ""))
			continue
		}
		if !path.IsAbs(mount.MountPath) {
			allErrs = append(allErrs, field.Invalid(mountPathPath, mount.MountPath, "must be an absolute path"))
			continue
		}
		cleaned := path.Clean(mount.MountPath)
		if dir, found := mountpaths.Overlaps(cleaned, reserved); found {
			allErrs = append(allErrs, field.Invalid(mountPathPath, mount.MountPath,
				"may not be at, under or above "+dir+": the server mounts what it manages there"))
			continue
		}
		if mountPaths.Has(cleaned) {
			// The host cluster rejects two mounts at one path in a container.
			allErrs = append(allErrs, field.Duplicate(mountPathPath, mount.MountPath))
		}
		mountPaths.Insert(cleaned)
	}
	return allErrs
}
