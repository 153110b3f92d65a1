package manager

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kcp-setups/apiserver/pkg/controller/hostcluster"
)

func secret(ns, name string, labels map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Data: map[string][]byte{"k": []byte("v")}}
}

// TestSecretsInformerHoldsOnlyServedNamespaces: with --watch-namespaces, the factory's
// Secret informer (its lister too) holds only the Secrets of the served namespaces that its
// selector selects, at the first list and as they come and go; without, every namespace's.
func TestSecretsInformerHoldsOnlyServedNamespaces(t *testing.T) {
	mine := map[string]string{"operator.kcp.io/reference": "true"}
	for _, tc := range []struct {
		served string
		want   []string
	}{
		{"team-a,team-b", []string{"team-a/a", "team-a/late", "team-b/b"}},
		{"", []string{"team-a/a", "team-a/late", "team-b/b", "team-c/c", "team-c/late"}},
	} {
		t.Run(tc.served, func(t *testing.T) {
			namespaces, err := hostcluster.ParseWatchNamespaces(tc.served)
			require.NoError(t, err)
			kube := fake.NewClientset(secret("team-a", "a", mine), secret("team-b", "b", mine), secret("team-c", "c", mine),
				secret("team-a", "unlabelled", nil), secret("team-a", "gone", mine))
			tweak := func(o *metav1.ListOptions) { o.LabelSelector = "operator.kcp.io/reference" }
			factory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTweakListOptions(tweak))
			SecretsInformer(factory, kube, namespaces, tweak)
			lister := factory.Core().V1().Secrets().Lister()
			ctx, cancel := context.WithCancel(t.Context())
			defer factory.Shutdown()
			defer cancel()
			factory.Start(ctx.Done())
			require.True(t, cache.WaitForCacheSync(ctx.Done(), factory.Core().V1().Secrets().Informer().HasSynced))

			// Changes after the first list, in and out of the served namespaces.
			for _, s := range []*corev1.Secret{secret("team-a", "late", mine), secret("team-c", "late", mine)} {
				_, err := kube.CoreV1().Secrets(s.Namespace).Create(ctx, s, metav1.CreateOptions{})
				require.NoError(t, err)
			}
			require.NoError(t, kube.CoreV1().Secrets("team-a").Delete(ctx, "gone", metav1.DeleteOptions{}))

			var got []string
			assert.Eventually(t, func() bool {
				all, err := lister.List(everything)
				require.NoError(t, err)
				got = nil
				for _, s := range all {
					got = append(got, s.Namespace+"/"+s.Name)
				}
				slices.Sort(got)
				return slices.Equal(tc.want, got)
			}, 10*time.Second, 20*time.Millisecond, "cached %v", &got)
			_, err = lister.Secrets("team-c").Get("c")
			assert.Equal(t, tc.served == "", err == nil, "team-c/c is cached only when every namespace is served")
		})
	}
}

func TestParseWatchNamespaces(t *testing.T) {
	for value, want := range map[string]hostcluster.WatchNamespaces{
		"":                  nil,
		"team-b, team-a,,":  {"team-a", "team-b"},
		"team-a,team-a":     {"team-a"},
		" kcp-setups ":      {"kcp-setups"},
		"team-a,team-b,x-y": {"team-a", "team-b", "x-y"},
	} {
		got, err := hostcluster.ParseWatchNamespaces(value)
		require.NoError(t, err, value)
		assert.Equal(t, want, got, value)
		assert.Equal(t, len(want) == 0, got.All(), value)
	}
	_, err := hostcluster.ParseWatchNamespaces("team-a,a/b")
	assert.ErrorContains(t, err, `"a/b" is not a namespace name`)
	served, _ := hostcluster.ParseWatchNamespaces("team-a")
	assert.True(t, served.Serves("team-a"))
	assert.False(t, served.Serves("team-b"))
	assert.True(t, hostcluster.WatchNamespaces(nil).Serves("team-b"))
}

var everything = labels.Everything()
