package virtualworkspace

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/mountpaths"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// ContainerName is the name of the server's container, which validation keeps init
// containers from.
const ContainerName = component

// Deployment builds the server's Deployment. current is the Deployment as it is now (nil when
// absent), whose replica count is kept when the spec sets none (a new one starts with
// operatorv1alpha1.DefaultReplicas, 2, as in kcp-operator); secretsHash is
// workload.SecretsHash of the mounted Secrets, ours and the user's.
func (v VirtualWorkspace) Deployment(current *appsv1.Deployment, secretsHash string) *appsv1ac.DeploymentApplyConfiguration {
	spec := v.Spec.ComponentSpec
	spec.Image = v.image()
	// The extra volumes join the pod below, after ours, so that ours keep their names.
	spec.ExtraVolumes = nil

	command := []string{DefaultCommand}
	if v.ThirdParty() {
		command = v.Spec.Command
	}
	container := corev1ac.Container().WithName(ContainerName).WithCommand(command...).WithArgs(v.Args()...)
	volumes := &podVolumes{}
	for _, m := range v.serverMounts() {
		volumes.add(m.AsVolume())
		container.WithVolumeMounts(m.AsVolumeMount())
	}
	podSpec := corev1ac.PodSpec()
	var initContainers []*corev1ac.ContainerApplyConfiguration
	for i := range v.Spec.InitContainers {
		initContainers = append(initContainers, v.initContainer(i, volumes))
	}
	// Volume names are the pod's: the first declaration wins, ours, then the server's extra
	// volumes, then the init containers', as in kcp-operator. Validation refuses two
	// different volumes under one name and the user's names that ours take.
	for i := range v.Spec.ExtraVolumes {
		volumes.add(workload.Volume(&v.Spec.ExtraVolumes[i]))
	}
	for _, ic := range v.Spec.InitContainers {
		for i := range ic.Volumes {
			volumes.add(workload.Volume(&ic.Volumes[i]))
		}
	}
	podSpec.WithVolumes(volumes.list...).WithInitContainers(initContainers...)
	for _, name := range v.initPullSecrets() {
		podSpec.WithImagePullSecrets(corev1ac.LocalObjectReference().WithName(name))
	}
	return workload.Deployment(v.DeploymentName(), v.Namespace, pki.WorkloadLabels(Kind, v.Name, pki.VirtualWorkspaceWorkload), v.SelectorLabels(),
		&spec, container, podSpec, current, secretsHash, workload.VirtualWorkspace)
}

// initContainer builds the i-th init container: its image, else the server's; its command,
// arguments and resources; the restricted security context; our mounts for it, then its own.
// The volumes of our mounts join volumes.
func (v VirtualWorkspace) initContainer(i int, volumes *podVolumes) *corev1ac.ContainerApplyConfiguration {
	ic := &v.Spec.InitContainers[i]
	image := v.image()
	if ic.Image != nil {
		image = ic.Image
	}
	c := corev1ac.Container().WithName(ic.Name).WithImage(workload.Image(image)).WithSecurityContext(workload.SecurityContext())
	if len(ic.Command) > 0 {
		c.WithCommand(ic.Command...)
	}
	if len(ic.Args) > 0 {
		c.WithArgs(ic.Args...)
	}
	workload.Resources(c, ic.Resources, workload.VirtualWorkspace)
	for _, m := range v.initMounts(i) {
		volumes.add(m.AsVolume())
		c.WithVolumeMounts(m.AsVolumeMount())
	}
	for j := range ic.VolumeMounts {
		if strings.HasPrefix(ic.VolumeMounts[j].Name, mountpaths.VirtualWorkspaceVolumePrefix) {
			// Validation refuses such a name; should one slip through, it must not reach the
			// serving or admin key of one of our volumes.
			continue
		}
		c.WithVolumeMounts(workload.VolumeMount(&ic.VolumeMounts[j]))
	}
	return c
}

// initPullSecrets are the pull secrets of the init containers' own images that the server's
// image and the deployment template do not already add, once each.
func (v VirtualWorkspace) initPullSecrets() []string {
	seen := map[string]bool{}
	if img := v.image(); img != nil {
		for _, ref := range img.ImagePullSecrets {
			seen[ref.Name] = true
		}
	}
	for _, ref := range templatePullSecrets(v.Spec.DeploymentTemplate) {
		seen[ref.Name] = true
	}
	var names []string
	for _, ic := range v.Spec.InitContainers {
		if ic.Image == nil {
			continue
		}
		for _, ref := range ic.Image.ImagePullSecrets {
			if !seen[ref.Name] {
				seen[ref.Name] = true
				names = append(names, ref.Name)
			}
		}
	}
	return names
}

func templatePullSecrets(t *operatorv1alpha1.DeploymentTemplate) []corev1.LocalObjectReference {
	if t == nil || t.Spec == nil || t.Spec.Template == nil || t.Spec.Template.Spec == nil {
		return nil
	}
	return t.Spec.Template.Spec.ImagePullSecrets
}

// podVolumes are the pod's volumes in order, each name once: the first declaration wins.
type podVolumes struct {
	list  []*corev1ac.VolumeApplyConfiguration
	names map[string]bool
}

func (p *podVolumes) add(vol *corev1ac.VolumeApplyConfiguration) {
	if p.names == nil {
		p.names = map[string]bool{}
	}
	if vol.Name == nil || p.names[*vol.Name] {
		return
	}
	p.names[*vol.Name] = true
	p.list = append(p.list, vol)
}
