package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
)

// virtualWorkspaceContainerName is the name of the server container in a VirtualWorkspace's
// pod. Init containers share the pod's container names, so none may take it.
const virtualWorkspaceContainerName = "virtual-workspaces"

// ValidateVirtualWorkspace validates a VirtualWorkspace on creation.
func ValidateVirtualWorkspace(vw *operator.VirtualWorkspace) field.ErrorList {
	if vw == nil {
		return nilObject("VirtualWorkspace")
	}
	allErrs := apimachineryvalidation.ValidateObjectMeta(&vw.ObjectMeta, true, virtualWorkspaceNameFunc, field.NewPath("metadata"))
	return append(allErrs, validateVirtualWorkspaceSpec(&vw.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualWorkspaceUpdate validates an update of a VirtualWorkspace's metadata and spec.
func ValidateVirtualWorkspaceUpdate(newObj, oldObj *operator.VirtualWorkspace) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("VirtualWorkspace")
	}
	specPath := field.NewPath("spec")
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateVirtualWorkspaceSpec(&newObj.Spec, specPath)...)
	// The server's certificates come from the target's CAs and its shard points its
	// --shard-virtual-workspace-url at it: moving it to another shard would leave both shards
	// wired to a server that serves only one of them.
	newTarget := newObj.Spec.Target
	allErrs = append(allErrs, validateImmutable(newTarget, oldObj.Spec.Target,
		describeTarget(virtualWorkspaceTargetRefs(&newTarget)), specPath.Child("target"))...)
	return allErrs
}

// ValidateVirtualWorkspaceStatusUpdate validates an update of a VirtualWorkspace's status.
func ValidateVirtualWorkspaceStatusUpdate(newObj, oldObj *operator.VirtualWorkspace) field.ErrorList {
	if newObj == nil || oldObj == nil {
		return nilObject("VirtualWorkspace")
	}
	status := &newObj.Status
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newObj.ObjectMeta, &oldObj.ObjectMeta, field.NewPath("metadata"))
	return append(allErrs, validateStatus(status.Phase, setupPhases, status.ObservedGeneration, status.Conditions, field.NewPath("status"))...)
}

// validateVirtualWorkspaceSpec checks a VirtualWorkspace's spec.
func validateVirtualWorkspaceSpec(spec *operator.VirtualWorkspaceSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateComponentSpec(&spec.ComponentSpec, virtualWorkspaceTemplates, mountpaths.VirtualWorkspace(), fldPath)
	allErrs = append(allErrs, validateOneTarget(virtualWorkspaceTargetRefs(&spec.Target), fldPath.Child("target"))...)
	// The hostname is in the serving certificate and in the URL the shard announces.
	allErrs = append(allErrs, validateExternalConfig(&spec.External, fldPath.Child("external"))...)
	allErrs = append(allErrs, validateCommand(spec.Command, fldPath.Child("command"))...)
	allErrs = append(allErrs, validateVirtualWorkspaceInitContainers(spec, fldPath)...)
	allErrs = append(allErrs, validateVirtualWorkspaceVolumeNames(spec, fldPath)...)
	allErrs = append(allErrs, validateCABundleRefs(spec.CABundleSecretRef, spec.ClientCABundleRef, fldPath)...)
	allErrs = append(allErrs, validateSecretReference(spec.KubeconfigSecretRef, fldPath.Child("kubeconfigSecretRef"))...)
	allErrs = append(allErrs, validateClusterDomain(spec.ClusterDomain, fldPath.Child("clusterDomain"))...)
	return allErrs
}

// validateCommand checks a container's command. An empty list keeps the image's own; an
// empty entry is a mistake, such as a YAML list item left blank.
func validateCommand(command []string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, c := range command {
		if c == "" {
			allErrs = append(allErrs, field.Required(fldPath.Index(i), ""))
		}
	}
	return allErrs
}

// validateVirtualWorkspaceInitContainers checks the init containers of a VirtualWorkspace's
// pod. Each gets the same checks as the server's extras: its volumes join the pod, so they
// pass the same Pod Security rules as extraVolumes, and its mounts may not touch what the
// controllers mount into it.
func validateVirtualWorkspaceInitContainers(spec *operator.VirtualWorkspaceSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := specPath.Child("initContainers")
	// podVolumes are the volumes of the pod so far, by name, and where each was declared.
	podVolumes := map[string]declaredVolume{}
	extraVolumeNames := sets.New[string]()
	for i := range spec.ExtraVolumes {
		v := &spec.ExtraVolumes[i]
		extraVolumeNames.Insert(v.Name)
		if _, seen := podVolumes[v.Name]; !seen {
			podVolumes[v.Name] = declaredVolume{volume: v, path: specPath.Child("extraVolumes").Index(i)}
		}
	}
	names := sets.New[string]()
	for i := range spec.InitContainers {
		ic := &spec.InitContainers[i]
		idxPath := fldPath.Index(i)
		namePath := idxPath.Child("name")
		switch {
		case ic.Name == "":
			allErrs = append(allErrs, field.Required(namePath, ""))
		case names.Has(ic.Name):
			allErrs = append(allErrs, field.Duplicate(namePath, ic.Name))
		case ic.Name == virtualWorkspaceContainerName:
			allErrs = append(allErrs, field.Invalid(namePath, ic.Name, "is the name of the server container"))
		default:
			allErrs = append(allErrs, invalidForEach(namePath, ic.Name, validation.IsDNS1123Label(ic.Name))...)
		}
		names.Insert(ic.Name)

		allErrs = append(allErrs, validateImage(ic.Image, idxPath.Child("image"))...)
		allErrs = append(allErrs, validateCommand(ic.Command, idxPath.Child("command"))...)
		// args are passed as written: an empty one is a legitimate argument, such as the
		// script of sh -c "".
		allErrs = append(allErrs, validateSecretReference(ic.KubeconfigSecretRef, idxPath.Child("kubeconfigSecretRef"))...)
		allErrs = append(allErrs, validateResources(ic.Resources, idxPath.Child("resources"))...)

		volumesPath := idxPath.Child("volumes")
		volumeErrs, ownVolumes := validateExtraVolumes(ic.Volumes, volumesPath)
		allErrs = append(allErrs, volumeErrs...)
		allErrs = append(allErrs, validateSharedPodVolumes(ic.Volumes, podVolumes, volumesPath)...)
		// A mount may name the container's own volumes or the server's extraVolumes; the
		// volumes the controllers manage have no name a spec could rely on.
		mountable := ownVolumes.Union(extraVolumeNames)
		allErrs = append(allErrs, validateExtraVolumeMounts(ic.VolumeMounts, mountable, mountpaths.VirtualWorkspaceInit(), idxPath.Child("volumeMounts"))...)
	}
	return allErrs
}

// declaredVolume is a volume of the pod and the field that declared it first.
type declaredVolume struct {
	volume *corev1.Volume
	path   *field.Path
}

// validateSharedPodVolumes checks an init container's volumes against the pod's. Volume
// names are pod-scoped: the same scratch volume declared by several containers is one volume,
// as kcp-operator has it, but two different volumes under one name would leave one of them
// silently unused, so that is refused. Each new volume joins podVolumes.
func validateSharedPodVolumes(volumes []corev1.Volume, podVolumes map[string]declaredVolume, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	own := sets.New[string]()
	for i := range volumes {
		v := &volumes[i]
		if v.Name == "" || own.Has(v.Name) {
			// Reported by validateExtraVolumes, within the container's own list.
			continue
		}
		own.Insert(v.Name)
		first, seen := podVolumes[v.Name]
		switch {
		case !seen:
			podVolumes[v.Name] = declaredVolume{volume: v, path: fldPath.Index(i)}
		case !apiequality.Semantic.DeepEqual(first.volume, v):
			allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("name"), v.Name,
				fmt.Sprintf("is declared differently at %s: volume names are the pod's, so one name must be one volume", first.path)))
		}
	}
	return allErrs
}

// validateVirtualWorkspaceVolumeNames keeps the user's volumes off the names of the volumes
// the controllers add to the pod. Volume names are the pod's: a user's volume of such a name
// would be dropped for the controllers' one, and an init container mounting it would get the
// serving or admin key that is not meant for it.
func validateVirtualWorkspaceVolumeNames(spec *operator.VirtualWorkspaceSpec, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	check := func(volumes []corev1.Volume, fldPath *field.Path) {
		for i, v := range volumes {
			if strings.HasPrefix(v.Name, mountpaths.VirtualWorkspaceVolumePrefix) {
				allErrs = append(allErrs, field.Invalid(fldPath.Index(i).Child("name"), v.Name,
					fmt.Sprintf("may not begin with %q: the names of the volumes the server manages do", mountpaths.VirtualWorkspaceVolumePrefix)))
			}
		}
	}
	check(spec.ExtraVolumes, specPath.Child("extraVolumes"))
	for i := range spec.InitContainers {
		check(spec.InitContainers[i].Volumes, specPath.Child("initContainers").Index(i).Child("volumes"))
	}
	return allErrs
}
