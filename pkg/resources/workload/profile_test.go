package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

func TestResourcesDefaultToTheProfile(t *testing.T) {
	for name, tc := range map[string]struct {
		profile                   Profile
		cpuRequest, memoryRequest string
		cpuLimit, memoryLimit     string
	}{
		"kcp server":        {KcpServer, "1", "1Gi", "2", "2Gi"},
		"cache server":      {CacheServer, "500m", "1Gi", "1", "2Gi"},
		"front proxy":       {FrontProxy, "250m", "256Mi", "1", "1Gi"},
		"virtual workspace": {VirtualWorkspace, "1", "1Gi", "2", "2Gi"},
	} {
		for specName, spec := range map[string]*corev1.ResourceRequirements{"nil": nil, "empty": {}} {
			c := corev1ac.Container()
			Resources(c, spec, tc.profile)
			req, lim := *c.Resources.Requests, *c.Resources.Limits
			assert.True(t, resource.MustParse(tc.cpuRequest).Equal(req[corev1.ResourceCPU]), "%s/%s cpu request", name, specName)
			assert.True(t, resource.MustParse(tc.memoryRequest).Equal(req[corev1.ResourceMemory]), "%s/%s memory request", name, specName)
			assert.True(t, resource.MustParse(tc.cpuLimit).Equal(lim[corev1.ResourceCPU]), "%s/%s cpu limit", name, specName)
			assert.True(t, resource.MustParse(tc.memoryLimit).Equal(lim[corev1.ResourceMemory]), "%s/%s memory limit", name, specName)
		}
	}
}

func TestSpecResourcesWin(t *testing.T) {
	c := corev1ac.Container()
	Resources(c, &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}, KcpServer)
	assert.Len(t, *c.Resources.Requests, 1, "the user's requests alone")
	assert.Nil(t, c.Resources.Limits, "no default limit is mixed into the user's requirements")

	c = corev1ac.Container()
	Resources(c, nil, KcpServer)
	(*c.Resources.Requests)[corev1.ResourceCPU] = resource.MustParse("99")
	assert.True(t, resource.MustParse("1").Equal(KcpServer.Resources.Requests[corev1.ResourceCPU]), "the profile is not shared with the output")
}

func TestProbes(t *testing.T) {
	for name, tc := range map[string]struct {
		profile                      Profile
		readinessFailures, liveFails int32
	}{
		"kcp server":        {KcpServer, 6, 6},
		"cache server":      {CacheServer, 6, 6},
		"front proxy":       {FrontProxy, 3, 3},
		"virtual workspace": {VirtualWorkspace, 6, 6},
	} {
		c := corev1ac.Container()
		Probes(c, tc.profile)
		for probe, p := range map[string]*corev1ac.ProbeApplyConfiguration{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			assert.EqualValues(t, 10, *p.TimeoutSeconds, "%s %s probe timeout", name, probe)
		}
		assert.EqualValues(t, tc.readinessFailures, *c.ReadinessProbe.FailureThreshold, name)
		assert.EqualValues(t, tc.liveFails, *c.LivenessProbe.FailureThreshold, name)
	}
}
