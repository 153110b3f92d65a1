package hostcluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestListWatchResumesEachNamespace: over several namespaces, a list merges every
// namespace's items (whole lists, not pages), and each namespace's watch starts from the
// version last seen in that namespace (its list's, then its last event's), never from the
// version the reflector passes, which belongs to another namespace's history.
func TestListWatchResumesEachNamespace(t *testing.T) {
	listed := map[string]string{"team-a": "10", "team-b": "200"}
	watchers := map[string]*watch.FakeWatcher{}
	startedAt := map[string]string{}
	var listOpts []metav1.ListOptions
	lw := WatchNamespaces{"team-a", "team-b"}.ListWatch(
		func(_ context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			listOpts = append(listOpts, o)
			return &corev1.SecretList{ListMeta: metav1.ListMeta{ResourceVersion: listed[ns]},
				Items: []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}}}, nil
		},
		func(_ context.Context, ns string, o metav1.ListOptions) (watch.Interface, error) {
			startedAt[ns] = o.ResourceVersion
			watchers[ns] = watch.NewFakeWithChanSize(1, false)
			return watchers[ns], nil
		})
	require.True(t, lw.(interface{ IsWatchListSemanticsUnSupported() bool }).IsWatchListSemanticsUnSupported())

	list, err := lw.List(metav1.ListOptions{Limit: 500, Continue: "x", ResourceVersion: "0"})
	require.NoError(t, err)
	secrets := list.(*corev1.SecretList)
	require.Len(t, secrets.Items, 2)
	assert.Equal(t, "team-a", secrets.Items[0].Namespace)
	assert.Equal(t, "team-b", secrets.Items[1].Namespace)
	for _, o := range listOpts {
		assert.Zero(t, o.Limit, "whole lists: a continue token is one namespace's")
		assert.Empty(t, o.Continue)
	}

	w, err := lw.Watch(metav1.ListOptions{ResourceVersion: "200"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team-a": "10", "team-b": "200"}, startedAt)
	watchers["team-a"].Modify(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "s", ResourceVersion: "15"}})
	select {
	case ev := <-w.ResultChan():
		assert.Equal(t, watch.Modified, ev.Type)
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	// One namespace's watch ends: the merged one ends, and the next resumes each namespace.
	watchers["team-b"].Stop()
	select {
	case _, open := <-w.ResultChan():
		assert.False(t, open, "the merged watch ends with one of its watches")
	case <-time.After(5 * time.Second):
		t.Fatal("the merged watch did not end")
	}
	assert.True(t, watchers["team-a"].IsStopped(), "the other watches are stopped")
	_, err = lw.Watch(metav1.ListOptions{ResourceVersion: "15"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"team-a": "15", "team-b": "200"}, startedAt)
}

// TestListWatchOfEveryNamespace: without namespaces, one list and one watch of every namespace.
func TestListWatchOfEveryNamespace(t *testing.T) {
	var namespaces []string
	lw := WatchNamespaces(nil).ListWatch(
		func(_ context.Context, ns string, _ metav1.ListOptions) (runtime.Object, error) {
			namespaces = append(namespaces, ns)
			return &corev1.SecretList{}, nil
		},
		func(_ context.Context, ns string, _ metav1.ListOptions) (watch.Interface, error) {
			namespaces = append(namespaces, ns)
			return watch.NewFake(), nil
		})
	_, err := lw.List(metav1.ListOptions{})
	require.NoError(t, err)
	_, err = lw.(cache.Watcher).Watch(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"", ""}, namespaces)
}
