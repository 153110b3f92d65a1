package hostcluster_test

import (
	"context"
	"errors"
	"testing"

	cmapply "github.com/cert-manager/cert-manager/pkg/client/applyconfigurations/certmanager/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kcp-setups/apiserver/pkg/controller/controllertest"
	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
	"github.com/kcp-setups/apiserver/pkg/resources/workload"
)

// TestWritesStopAtTheFirstFailure: a batch counts what it wrote, and nothing after a failed
// write is written.
func TestWritesStopAtTheFirstFailure(t *testing.T) {
	host := controllertest.NewHost(t)
	refused := errors.New("refused")
	apply := host.SecretApplier.Apply
	host.SecretApplier.Apply = func(ctx context.Context, s *corev1ac.SecretApplyConfiguration) (metav1.Object, error) {
		if *s.Name == "b" {
			return nil, refused
		}
		return apply(ctx, s)
	}
	w := host.Host.Writes(t.Context())
	w.Secrets(corev1ac.Secret("a", "team-a"), nil, corev1ac.Secret("b", "team-a"), corev1ac.Secret("c", "team-a"))
	w.Services(corev1ac.Service("s", "team-a"))
	steps := 0
	w.Do(func(context.Context) (int, error) { steps++; return 1, nil })
	wrote, err := w.Done()
	require.ErrorIs(t, err, refused)
	assert.Equal(t, 1, wrote)
	assert.Zero(t, steps, "a step after the failure does not run")
	assert.Equal(t, []string{"Secret a"}, host.Writes())

	// A builder's failure stops the batch as a refused write does, and takes its place.
	host.Reset()
	w = host.Host.Writes(t.Context())
	w.Secret(corev1ac.Secret("e", "team-a"), nil)
	w.Secret(nil, refused)
	w.ConfigMap(corev1ac.ConfigMap("c", "team-a"), nil)
	w.BuiltSecrets([]*corev1ac.SecretApplyConfiguration{corev1ac.Secret("d", "team-a")}, nil)
	assert.False(t, w.Built(nil), "the batch has stopped")
	wrote, err = w.Done()
	assert.ErrorIs(t, err, refused)
	assert.Equal(t, 1, wrote)
	assert.Equal(t, []string{"Secret e"}, host.Writes(), "nothing after the builder's failure")
}

// TestDeploymentWhenMounted: a Deployment is created once what it waits for exists (its
// Secrets, its ConfigMap, and not while held), not the user's, and rolls when any Secret it
// mounts changes.
func TestDeploymentWhenMounted(t *testing.T) {
	host := controllertest.NewHost(t)
	var hashes []string
	deployment := func(_ *appsv1.Deployment, hash string) *appsv1ac.DeploymentApplyConfiguration {
		hashes = append(hashes, hash)
		return appsv1ac.Deployment("kcp", "team-a").WithSpec(appsv1ac.DeploymentSpec().WithReplicas(1).
			WithTemplate(corev1ac.PodTemplateSpec().WithAnnotations(map[string]string{"secrets-hash": hash})))
	}
	mounts := []workload.Mount{{Volume: "server", Secret: "server"}, {Volume: "users-ca", Secret: "users-ca", User: true},
		{Volume: "paths", ConfigMap: "paths"}, {Volume: "audit", ConfigMap: "audit-policy", User: true}}
	realize := func(held bool) int {
		t.Helper()
		w := host.Host.Writes(t.Context())
		if held {
			w.DeploymentWhenMountedHeld("team-a", "kcp", mounts, deployment)
		} else {
			w.DeploymentWhenMounted("team-a", "kcp", mounts, deployment)
		}
		wrote, err := w.Done()
		require.NoError(t, err)
		return wrote
	}
	secret := func(name, version string) {
		require.NoError(t, host.Caches["secrets"].Update(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, ResourceVersion: version}}))
	}

	assert.Zero(t, realize(false), "its Secret does not exist")
	secret("server", "1")
	assert.Zero(t, realize(false), "its ConfigMap does not exist")
	require.NoError(t, host.Caches["configmaps"].Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "paths", ResourceVersion: "1"}}))
	assert.Zero(t, realize(true), "held back")
	assert.Empty(t, hashes, "nothing built while it waits")

	assert.Equal(t, 1, realize(false), "created once everything exists")
	assert.Equal(t, 0, realize(true), "unchanged; a Deployment that exists is not held back")
	secret("users-ca", "1")
	assert.Equal(t, 1, realize(false), "a user's Secret appearing rolls it")
	secret("server", "2")
	assert.Equal(t, 1, realize(false), "a Secret changing rolls it")
	require.Len(t, hashes, 4)
	assert.Equal(t, hashes[0], hashes[1])
	assert.NotEqual(t, hashes[1], hashes[2])
	assert.NotEqual(t, hashes[2], hashes[3])
}

// TestPlanningWritesNothing: a batch in a context of Planning writes nothing and runs no step
// of its own; it records the Certificates and Deployments it would apply, a Deployment with
// whether it exists; a builder's failure still stops it.
func TestPlanningWritesNothing(t *testing.T) {
	host := controllertest.NewHost(t)
	p := &hostcluster.Plan{}
	w := host.Host.Writes(hostcluster.Planning(t.Context(), p))
	w.Secrets(corev1ac.Secret("a", "team-a"))
	w.Services(corev1ac.Service("s", "team-a"))
	w.ConfigMap(corev1ac.ConfigMap("c", "team-a"), nil)
	w.Certificates(nil, []*cmapply.CertificateApplyConfiguration{cmapply.Certificate("cert", "team-a")})
	steps := 0
	w.Do(func(context.Context) (int, error) { steps++; return 1, nil })
	w.DeploymentWhenMounted("team-a", "d", nil, func(current *appsv1.Deployment, _ string) *appsv1ac.DeploymentApplyConfiguration {
		return appsv1ac.Deployment("d", "team-a")
	})
	wrote, err := w.Done()
	require.NoError(t, err)
	assert.Zero(t, wrote)
	assert.Zero(t, steps, "no step runs")
	assert.Empty(t, host.Writes(), "nothing is written")
	require.Len(t, p.Certificates, 1)
	assert.Equal(t, "cert", *p.Certificates[0].Name)
	require.Len(t, p.Deployments, 1)
	assert.Equal(t, "d", *p.Deployments[0].Deployment.Name)
	assert.False(t, p.Deployments[0].Exists, "not in the cache: it would be created")

	refused := errors.New("refused")
	w = host.Host.Writes(hostcluster.Planning(t.Context(), &hostcluster.Plan{}))
	w.Secret(nil, refused)
	_, err = w.Done()
	assert.ErrorIs(t, err, refused)
}
