package kubeconfigrequest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/install"
)

// cachedGetter is a store with a watch cache: a Get with resourceVersion "0" reads cached,
// any other reads storage. reads records where each Get went.
type cachedGetter struct {
	cached, stored map[string]runtime.Object
	reads          []string
}

func (g *cachedGetter) Get(_ context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error) {
	from, objects := "storage", g.stored
	if opts.ResourceVersion == "0" {
		from, objects = "cache", g.cached
	}
	g.reads = append(g.reads, from)
	if obj, ok := objects[name]; ok {
		return obj, nil
	}
	return nil, apierrors.NewNotFound(operator.Resource("rootshards"), name)
}

// TestResolveReadsTheCacheFirst checks that a target is read from the watch cache, and from
// storage only when the cache does not hold it yet, as just after its creation.
func TestResolveReadsTheCacheFirst(t *testing.T) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	rs := func(hostname string) *operator.RootShard {
		return &operator.RootShard{ObjectMeta: metav1.ObjectMeta{Name: "root", Namespace: "team-a"},
			Spec: operator.RootShardSpec{External: operator.ExternalConfig{Hostname: hostname, Port: 443}}}
	}
	for _, tc := range []struct {
		name           string
		cached, stored map[string]runtime.Object
		wantReads      []string
		wantHostname   string
		wantNotFound   bool
	}{
		{name: "cached", cached: map[string]runtime.Object{"root": rs("cached.example.com")}, stored: map[string]runtime.Object{"root": rs("stored.example.com")},
			wantReads: []string{"cache"}, wantHostname: "cached.example.com"},
		{name: "created a moment ago", stored: map[string]runtime.Object{"root": rs("stored.example.com")},
			wantReads: []string{"cache", "storage"}, wantHostname: "stored.example.com"},
		{name: "missing", wantReads: []string{"cache", "storage"}, wantNotFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &cachedGetter{cached: tc.cached, stored: tc.stored}
			target, err := Resolvers{Scheme: scheme, RootShards: g}.RootShard(t.Context(), "team-a", "root")
			assert.Equal(t, tc.wantReads, g.reads)
			if tc.wantNotFound {
				assert.True(t, apierrors.IsNotFound(err), "got %v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantHostname, target.RootShard.Spec.External.Hostname)
		})
	}
}
