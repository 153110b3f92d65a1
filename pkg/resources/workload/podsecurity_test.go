package workload_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// goldenPods are the pod templates of the objects of kind in the builders' golden files,
// keyed by the file and the object's name; template picks an object's pod template.
func goldenPods[T any](t *testing.T, kind string, template func(*T) (metav1.TypeMeta, metav1.ObjectMeta, *corev1.PodTemplateSpec)) map[string]*corev1.PodTemplateSpec {
	t.Helper()
	files, err := filepath.Glob("../*/testdata/*.yaml")
	require.NoError(t, err)
	out := map[string]*corev1.PodTemplateSpec{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var obj T
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				continue
			}
			typ, meta, pod := template(&obj)
			if typ.Kind != kind {
				continue
			}
			out[filepath.Base(filepath.Dir(filepath.Dir(file)))+"/"+filepath.Base(file)+"/"+meta.Name] = pod
		}
	}
	return out
}

// assertRestricted runs Pod Security admission's own checks, at the restricted level, over
// each pod, and checks that none carries a ServiceAccount token.
func assertRestricted(t *testing.T, pods map[string]*corev1.PodTemplateSpec) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	for name, pod := range pods {
		t.Run(name, func(t *testing.T) {
			results := evaluator.EvaluatePod(api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()},
				&pod.ObjectMeta, &pod.Spec)
			agg := policy.AggregateCheckResults(results)
			assert.True(t, agg.Allowed, "%s: %s", agg.ForbiddenReason(), agg.ForbiddenDetail())
			assert.Equal(t, new(false), pod.Spec.AutomountServiceAccountToken, "the pods carry no ServiceAccount token")
		})
	}
}

// TestGoldenDeploymentsAreRestricted checks every Deployment the builders' golden files hold:
// the loaded ones carry every field a spec passes through to the pods (extra volumes and
// mounts, the deployment template), so none of them may weaken the pods below restricted.
func TestGoldenDeploymentsAreRestricted(t *testing.T) {
	pods := goldenPods(t, "Deployment", func(d *appsv1.Deployment) (metav1.TypeMeta, metav1.ObjectMeta, *corev1.PodTemplateSpec) {
		return d.TypeMeta, d.ObjectMeta, &d.Spec.Template
	})
	initContainers := 0
	for _, pod := range pods {
		initContainers += len(pod.Spec.InitContainers)
	}
	assertRestricted(t, pods)
	assert.GreaterOrEqual(t, len(pods), 12, "every kind's minimal and loaded golden Deployment is checked, the VirtualWorkspace's four too")
	assert.GreaterOrEqual(t, initContainers, 2, "a VirtualWorkspace's init containers are checked with its pod")
}

// TestGoldenStatefulSetsAreRestricted does the same over every golden StatefulSet: a managed
// etcd's members, with the defaults and with a template.
func TestGoldenStatefulSetsAreRestricted(t *testing.T) {
	pods := goldenPods(t, "StatefulSet", func(ss *appsv1.StatefulSet) (metav1.TypeMeta, metav1.ObjectMeta, *corev1.PodTemplateSpec) {
		return ss.TypeMeta, ss.ObjectMeta, &ss.Spec.Template
	})
	assertRestricted(t, pods)
	assert.GreaterOrEqual(t, len(pods), 2, "the RootShard's and the Shard's managed etcd are checked")
}
