package workload_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// TestGoldenDeploymentsAreRestricted runs Pod Security admission's own checks, at the
// restricted level, over every Deployment the builders' golden files hold: the loaded ones
// carry every field a spec passes through to the pods (extra volumes and mounts, the
// deployment template), so none of them may weaken the pods below restricted.
func TestGoldenDeploymentsAreRestricted(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	files, err := filepath.Glob("../*/testdata/*.yaml")
	require.NoError(t, err)

	seen, initContainers := 0, 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			var d appsv1.Deployment
			if err := yaml.Unmarshal(doc, &d); err != nil || d.Kind != "Deployment" {
				continue
			}
			seen++
			initContainers += len(d.Spec.Template.Spec.InitContainers)
			t.Run(filepath.Base(filepath.Dir(filepath.Dir(file)))+"/"+filepath.Base(file)+"/"+d.Name, func(t *testing.T) {
				results := evaluator.EvaluatePod(api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()},
					&d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec)
				agg := policy.AggregateCheckResults(results)
				assert.True(t, agg.Allowed, "%s: %s", agg.ForbiddenReason(), agg.ForbiddenDetail())
				assert.Equal(t, new(false), d.Spec.Template.Spec.AutomountServiceAccountToken, "the pods carry no ServiceAccount token")
			})
		}
	}
	assert.GreaterOrEqual(t, seen, 12, "every kind's minimal and loaded golden Deployment is checked, the VirtualWorkspace's four too")
	assert.GreaterOrEqual(t, initContainers, 2, "a VirtualWorkspace's init containers are checked with its pod")
}
