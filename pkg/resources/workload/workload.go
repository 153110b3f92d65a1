// Package workload holds what every component's Deployment and Service share: image,
// security context, HTTPS probes, the user's templates, replicas and the rollout hash of
// mounted Secrets. It is pure: no I/O.
package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
)

// SecretsHashAnnotation is the pod template annotation that changes when a mounted Secret
// changes, so that the Deployment rolls, for example after cert-manager renewed a
// certificate.
const SecretsHashAnnotation = "operator.kcp.io/secrets-hash"

// PortName is the name of every component's HTTPS port.
const PortName = "https"

// Image is the image reference of a component.
func Image(spec *operatorv1alpha1.ImageSpec) string {
	return ImageOr(spec, operatorv1alpha1.DefaultImageRepository, operatorv1alpha1.DefaultImageTag)
}

// ImageOr is the image reference of spec, with repo and tag where spec names none.
func ImageOr(spec *operatorv1alpha1.ImageSpec, repo, tag string) string {
	if spec != nil {
		if spec.Repository != "" {
			repo = spec.Repository
		}
		if spec.Tag != "" {
			tag = spec.Tag
		}
	}
	return repo + ":" + tag
}

// KcpVersion is the kcp release of a component's image (its tag, else the default).
func KcpVersion(spec *operatorv1alpha1.ImageSpec) kcpversion.Version {
	if spec == nil {
		return kcpversion.FromTag("")
	}
	return kcpversion.FromTag(spec.Tag)
}

// Replicas is the replica count to apply: the spec's when given, else the count the
// Deployment has now (so that an HPA may own it), else the default for a new Deployment.
func Replicas(spec *int32, current *int32, def int32) int32 {
	switch {
	case spec != nil:
		return *spec
	case current != nil:
		return *current
	default:
		return def
	}
}

// SecretsHash hashes the resource versions of mounted Secrets, keyed by name.
func SecretsHash(versions map[string]string) string {
	names := make([]string, 0, len(versions))
	for n := range versions {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n + "=" + versions[n] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// SecurityContext is the restricted security context of every component's container.
func SecurityContext() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithReadOnlyRootFilesystem(true).
		WithAllowPrivilegeEscalation(false).
		WithRunAsNonRoot(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
}

// Profile is what a kind of component needs from its pods by default: how long its probes
// bear with it, and the resources it gets when its spec names none.
type Profile struct {
	// ReadinessFailures and LivenessFailures are the failure thresholds of the readiness
	// and liveness probes, which run every 10 seconds.
	ReadinessFailures, LivenessFailures int32
	// Resources apply when the spec's resources are unset.
	Resources corev1.ResourceRequirements
}

// resources is a ResourceRequirements of CPU and memory requests and limits.
func resources(cpuRequest, memoryRequest, cpuLimit, memoryLimit string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuRequest), corev1.ResourceMemory: resource.MustParse(memoryRequest)},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuLimit), corev1.ResourceMemory: resource.MustParse(memoryLimit)},
	}
}

// The profiles of the components, as kcp-operator has learned them in production.
var (
	// KcpServer is a root shard's or a shard's: its /livez and /readyz check etcd, so a
	// slow etcd must not get it restarted before a minute has passed.
	KcpServer = Profile{ReadinessFailures: 6, LivenessFailures: 6, Resources: resources("1", "1Gi", "2", "2Gi")}
	// CacheServer is a cache server's, which also checks its etcd.
	CacheServer = Profile{ReadinessFailures: 6, LivenessFailures: 6, Resources: resources("500m", "1Gi", "1", "2Gi")}
	// FrontProxy is a front proxy's: no etcd of its own, and a stateless proxy whose memory
	// goes to its index of every logical cluster and the shard it lives on, so it starts
	// smaller than a shard and may grow to 1 CPU and 1Gi.
	FrontProxy = Profile{ReadinessFailures: 3, LivenessFailures: 3, Resources: resources("250m", "256Mi", "1", "1Gi")}
	// Etcd is a managed etcd member's: a small cluster's working set, with room to grow
	// toward etcd's default 2GiB quota of data in memory.
	Etcd = Profile{ReadinessFailures: 3, LivenessFailures: 8, Resources: resources("250m", "512Mi", "2", "2Gi")}
	// VirtualWorkspace is a virtual workspace server's, and its init containers': no etcd,
	// but its health follows its informers on a shard that may be slow to answer, and it
	// gets kcp-operator's resources for it, a shard's.
	VirtualWorkspace = Profile{ReadinessFailures: 6, LivenessFailures: 6, Resources: resources("1", "1Gi", "2", "2Gi")}
)

// ProbeTimeoutSeconds is how long every probe waits for an answer: a loaded kcp answers
// /readyz in more than the default second, and a timeout counts as a failure.
const ProbeTimeoutSeconds = 10

// Probes sets the HTTPS startup (60×5s on /readyz), readiness (/readyz) and liveness (/livez)
// probes of a container, with the profile's failure thresholds.
func Probes(c *corev1ac.ContainerApplyConfiguration, p Profile) {
	get := func(path string) *corev1ac.ProbeApplyConfiguration {
		return corev1ac.Probe().WithHTTPGet(corev1ac.HTTPGetAction().
			WithPath(path).WithPort(intstr.FromString(PortName)).WithScheme(corev1.URISchemeHTTPS)).
			WithTimeoutSeconds(ProbeTimeoutSeconds)
	}
	c.WithStartupProbe(get("/readyz").WithPeriodSeconds(5).WithFailureThreshold(60)).
		WithReadinessProbe(get("/readyz").WithPeriodSeconds(10).WithFailureThreshold(p.ReadinessFailures)).
		WithLivenessProbe(get("/livez").WithPeriodSeconds(10).WithFailureThreshold(p.LivenessFailures))
}

// Resources sets a container's resources from the spec, else the profile's defaults.
func Resources(c *corev1ac.ContainerApplyConfiguration, r *corev1.ResourceRequirements, p Profile) {
	if r == nil || (len(r.Requests) == 0 && len(r.Limits) == 0) {
		// A copy: the apply configuration keeps the maps, which are the profile's own.
		r = p.Resources.DeepCopy()
	}
	rr := corev1ac.ResourceRequirements()
	if len(r.Requests) > 0 {
		rr.WithRequests(r.Requests)
	}
	if len(r.Limits) > 0 {
		rr.WithLimits(r.Limits)
	}
	c.WithResources(rr)
}

// ApplyDeploymentTemplate merges the user's template into a Deployment and its pod template.
// Selector labels are set before and win.
func ApplyDeploymentTemplate(d *appsv1ac.DeploymentApplyConfiguration, pod *corev1ac.PodTemplateSpecApplyConfiguration, podSpec *corev1ac.PodSpecApplyConfiguration, t *operatorv1alpha1.DeploymentTemplate) {
	if t != nil && t.Metadata != nil {
		d.WithLabels(without(t.Metadata.Labels, d.Labels)).WithAnnotations(t.Metadata.Annotations)
	}
	applyPodTemplate(pod, podSpec, t)
}

// ApplyStatefulSetTemplate merges the user's template into a StatefulSet and its pod
// template, as ApplyDeploymentTemplate does into a Deployment.
func ApplyStatefulSetTemplate(ss *appsv1ac.StatefulSetApplyConfiguration, pod *corev1ac.PodTemplateSpecApplyConfiguration, podSpec *corev1ac.PodSpecApplyConfiguration, t *operatorv1alpha1.DeploymentTemplate) {
	if t != nil && t.Metadata != nil {
		ss.WithLabels(without(t.Metadata.Labels, ss.Labels)).WithAnnotations(t.Metadata.Annotations)
	}
	applyPodTemplate(pod, podSpec, t)
}

// applyPodTemplate merges the pod part of the user's template into a pod template.
func applyPodTemplate(pod *corev1ac.PodTemplateSpecApplyConfiguration, podSpec *corev1ac.PodSpecApplyConfiguration, t *operatorv1alpha1.DeploymentTemplate) {
	if t == nil || t.Spec == nil || t.Spec.Template == nil {
		return
	}
	if m := t.Spec.Template.Metadata; m != nil {
		pod.WithLabels(without(m.Labels, pod.Labels)).WithAnnotations(without(m.Annotations, pod.Annotations))
	}
	s := t.Spec.Template.Spec
	if s == nil {
		return
	}
	if len(s.NodeSelector) > 0 {
		podSpec.WithNodeSelector(s.NodeSelector)
	}
	if s.Affinity != nil {
		podSpec.WithAffinity(toApply[corev1ac.AffinityApplyConfiguration](s.Affinity))
	}
	for i := range s.Tolerations {
		podSpec.WithTolerations(toApply[corev1ac.TolerationApplyConfiguration](&s.Tolerations[i]))
	}
	for i := range s.HostAliases {
		podSpec.WithHostAliases(toApply[corev1ac.HostAliasApplyConfiguration](&s.HostAliases[i]))
	}
	for _, ref := range s.ImagePullSecrets {
		podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(ref.Name))
	}
	for i := range s.TopologySpreadConstraints {
		podSpec.WithTopologySpreadConstraints(toApply[corev1ac.TopologySpreadConstraintApplyConfiguration](&s.TopologySpreadConstraints[i]))
	}
}

// Service builds a component's Service on the https port, with the user's template.
func Service(namespace, name string, labels, selector map[string]string, port int32, t *operatorv1alpha1.ServiceTemplate) *corev1ac.ServiceApplyConfiguration {
	spec := corev1ac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP).WithSelector(selector).
		WithPorts(corev1ac.ServicePort().WithName(PortName).WithProtocol(corev1.ProtocolTCP).
			WithPort(port).WithTargetPort(intstr.FromString(PortName)))
	svc := corev1ac.Service(name, namespace).WithLabels(labels)
	if t != nil {
		if m := t.Metadata; m != nil {
			svc.WithLabels(without(m.Labels, labels)).WithAnnotations(m.Annotations)
		}
		if s := t.Spec; s != nil {
			if s.Type != "" {
				spec.WithType(s.Type)
			}
			if s.ClusterIP != "" {
				spec.WithClusterIP(s.ClusterIP)
			}
		}
	}
	return svc.WithSpec(spec)
}

// without returns the entries of m whose keys ours does not set: ours win.
func without(m, ours map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if _, taken := ours[k]; !taken {
			out[k] = v
		}
	}
	return out
}
