package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	clientset "github.com/kcp-setups/apiserver/pkg/generated/clientset/versioned"
)

// TestSetupReleasesAreHeld: the server refuses, with a 422 at the field and nothing stored, a
// change of a setup's release its members cannot follow and a member pinned too far from it,
// and warns of a member pinned near it (docs/kcp-versions.md, "Refused before anything
// changes").
func TestSetupReleasesAreHeld(t *testing.T) {
	s := startServer(t, embedded(t.TempDir()))
	defer s.stop()
	ctx := t.Context()
	cfg := rest.CopyConfig(s.config)
	warnings := &warningRecorder{}
	cfg.WarningHandler = warnings
	c, err := clientset.NewForConfig(cfg)
	require.NoError(t, err)
	ops := c.OperatorV1alpha1()

	cache := newCacheServer("cache")
	cache.Spec.Etcd = &operatorv1alpha1.EtcdConfig{Endpoints: []string{"https://cache-etcd.team-a.svc:2379"}}
	_, err = ops.CacheServers(namespace).Create(ctx, cache, metav1.CreateOptions{})
	require.NoError(t, err)

	rs := newRootShard("root")
	rs.Spec.Cache = &operatorv1alpha1.CacheConfig{Reference: &corev1.LocalObjectReference{Name: "cache"}}
	rs.Spec.Version = "v0.30.3"
	_, err = ops.RootShards(namespace).Create(ctx, rs, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.version")
	assert.Contains(t, err.Error(), `CacheServer "cache" (spec.cache.ref) follows the setup: the cache server of kcp v0.30.3 has only its embedded etcd`)
	_, err = ops.RootShards(namespace).Get(ctx, "root", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing stored: %v", err)

	rs.Spec.Version = "v0.31.6"
	rs, err = ops.RootShards(namespace).Create(ctx, rs, metav1.CreateOptions{})
	require.NoError(t, err)

	rs.Spec.Version = "v0.30.3"
	_, err = ops.RootShards(namespace).Update(ctx, rs, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
	assertInvalid(t, err, "spec.version")
	assert.Contains(t, err.Error(), "is a downgrade across a minor")

	shard := newShard("far", "root")
	shard.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.32.3"}
	_, err = ops.Shards(namespace).Create(ctx, shard, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.True(t, warned(warnings, `spec.image.tag: this Shard of RootShard "root" pins v0.32.3 and does not follow the setup's v0.31.6`), "warnings: %v", warnings.messages)

	shard = newShard("too-far", "root")
	shard.Spec.Image = &operatorv1alpha1.ImageSpec{Tag: "v0.29.0"}
	shard.Spec.Etcd.Endpoints = []string{"https://etcd-b.team-a.svc:2379"}
	_, err = ops.Shards(namespace).Create(ctx, shard, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.image.tag")
	_, err = ops.Shards(namespace).Get(ctx, "too-far", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "nothing stored: %v", err)
}

// warned reports whether a warning starts with prefix.
func warned(w *warningRecorder, prefix string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.messages {
		if strings.HasPrefix(m, prefix) {
			return true
		}
	}
	return false
}
