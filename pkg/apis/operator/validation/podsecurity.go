package validation

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The server writes a setup's Deployment with its own rights, so what a spec passes through
// to the pods must be no more than a restricted pod of the namespace could have: otherwise
// the author of a RootShard gets, through the server, what they could not create themselves.

// allowedVolumeSources are the volume sources Pod Security's restricted level allows (a
// subset of baseline's, which forbids hostPath). Volume types that reach the node or run
// code there (hostPath, gitRepo, flexVolume, the in-tree storage drivers) are left out, and
// so is any source added to Kubernetes later, until it is judged.
var allowedVolumeSources = sets.New(
	"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
)

// volumeSourceNames are the JSON names of corev1.VolumeSource's fields, in field order, so
// that a set source is found without listing every volume type by hand.
var volumeSourceNames = func() []string {
	t := reflect.TypeFor[corev1.VolumeSource]()
	out := make([]string, t.NumField())
	for i := range out {
		out[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return out
}()

// forbiddenPodAnnotationPrefixes are the pod annotations through which a pod asks the
// kubelet for a weaker AppArmor or seccomp profile than the one the controllers set.
var forbiddenPodAnnotationPrefixes = []string{
	"container.apparmor.security.beta.kubernetes.io/",
	"seccomp.security.alpha.kubernetes.io/",
}

// validateVolumeSource refuses every volume source a restricted pod may not use, each at its
// own path, such as spec.extraVolumes[0].hostPath.
func validateVolumeSource(src *corev1.VolumeSource, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	v := reflect.ValueOf(src).Elem()
	for i, name := range volumeSourceNames {
		// Every source is a pointer; the kind check keeps a future non-pointer field from
		// panicking here, and TestEveryVolumeSourceIsJudged from passing unnoticed.
		if f := v.Field(i); f.Kind() != reflect.Pointer || f.IsNil() || allowedVolumeSources.Has(name) {
			continue
		}
		allErrs = append(allErrs, field.Forbidden(fldPath.Child(name),
			"the server realizes pods with its own rights, so a volume may only be one of "+
				strings.Join(sets.List(allowedVolumeSources), ", ")+" (Pod Security restricted); "+
				"put the files in a Secret or ConfigMap, or the data on a persistentVolumeClaim, and name that instead"))
	}
	return allErrs
}

// validateMountPropagation refuses Bidirectional propagation, which only a privileged
// container gets: it would let mounts made in the pod reach the node.
func validateMountPropagation(mode *corev1.MountPropagationMode, fldPath *field.Path) field.ErrorList {
	if mode == nil || *mode != corev1.MountPropagationBidirectional {
		return nil
	}
	return field.ErrorList{field.Forbidden(fldPath, "Bidirectional requires a privileged container, and the server never realizes one")}
}

// validateTolerationScope refuses a toleration of every taint. It would let the pods onto
// every node, control-plane nodes included, that the cluster keeps workloads off.
func validateTolerationScope(t corev1.Toleration, fldPath *field.Path) field.ErrorList {
	if t.Key != "" || t.Operator != corev1.TolerationOpExists {
		return nil
	}
	return field.ErrorList{field.Forbidden(fldPath.Child("key"), "a toleration must name the taint it tolerates: one that tolerates every taint is refused")}
}

// validatePodAnnotations refuses annotations that change the pods' security profile.
func validatePodAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		for _, prefix := range forbiddenPodAnnotationPrefixes {
			if strings.HasPrefix(k, prefix) {
				allErrs = append(allErrs, field.Forbidden(fldPath.Key(k), "the pods' security profile is the restricted one the server sets"))
			}
		}
	}
	return allErrs
}
