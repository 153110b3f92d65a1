package e2e

import (
	"strings"
	"testing"

	"github.com/kcp-setups/apiserver/test/framework"
)

// The givens: the objects a test starts from, applied with kubectl as a user would and waited
// for until they are ready, so that a test writes only what it is about. Each applies one
// object (with the further documents withObjects adds, in the same `kubectl apply`) to the
// namespace ns and waits for its Available condition, or for the conditions until names.
//
//	givenRootShard(t, ns)                                    // RootShard root, Available
//	givenRootShard(t, ns, until("CertificatesReady"))        // ... its certificates issued
//	givenRootShard(t, ns, withSpec("  cache: {ref: {name: cache}}\n"), until()) // applied only
//	givenShard(t, ns)                                        // Shard shard-1 of root, Available
//	givenFrontProxy(t, ns, named("app"))                     // FrontProxy app of root, Available
//	givenCacheServer(t, ns)                                  // CacheServer cache, Available

// given is what a given applies and waits for; the options change it.
type given struct {
	name       string
	spec       string   // lines added at the end of the object's spec
	objects    []string // further documents applied in the same kubectl apply
	conditions []string // the object's conditions waited for, in order
}

// givenOption changes what a given applies or waits for.
type givenOption func(*given)

// named names the object (root, shard-1, edge and cache when not named).
func named(name string) givenOption { return func(g *given) { g.name = name } }

// withSpec adds lines at the end of the object's spec: fields indented by two spaces, or
// by four to continue its last field (etcd, for a RootShard or a Shard).
func withSpec(lines string) givenOption { return func(g *given) { g.spec += lines } }

// withObjects applies further documents together with the object, in one kubectl apply.
func withObjects(docs ...string) givenOption {
	return func(g *given) { g.objects = append(g.objects, docs...) }
}

// until waits for the object's conditions, in order, instead of Available; until() applies
// the object and waits for nothing.
func until(conditions ...string) givenOption {
	return func(g *given) { g.conditions = conditions }
}

// apply applies manifest with the options' spec lines and objects to ns, and waits for the
// options' conditions of kind/name.
func (g given) apply(t *testing.T, ns, kind, manifest string) {
	t.Helper()
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, strings.Join(append([]string{manifest + g.spec}, g.objects...), "---\n")))
	for _, condition := range g.conditions {
		waitFor(t, ns, kind+"/"+g.name, condition)
	}
}

func newGiven(name string, opts []givenOption) given {
	g := given{name: name, conditions: []string{"Available"}}
	for _, opt := range opts {
		opt(&g)
	}
	return g
}

// givenRootShard is a RootShard root of kcp.example.com:6443 on the etcd at
// etcd.example.com:2379 (rootShardManifest), applied to ns, and Available.
func givenRootShard(t *testing.T, ns string, opts ...givenOption) {
	t.Helper()
	g := newGiven("root", opts)
	g.apply(t, ns, "rootshard", framework.RootShardManifest(g.name, "kcp.example.com", 6443))
}

// givenShard is the Shard shard-1 of the RootShard root (shardManifest), applied to ns, and
// Available.
func givenShard(t *testing.T, ns string, opts ...givenOption) {
	t.Helper()
	g := newGiven("shard-1", opts)
	g.apply(t, ns, "shard", strings.ReplaceAll(shardManifest, "name: shard-1", "name: "+g.name))
}

// givenFrontProxy is a FrontProxy edge of the RootShard root at edge.example.com:443 (at
// <name>.example.com when named), applied to ns, and Available.
func givenFrontProxy(t *testing.T, ns string, opts ...givenOption) {
	t.Helper()
	g := newGiven("edge", opts)
	g.apply(t, ns, "frontproxy", frontProxyManifest(g.name))
}

// givenCacheServer is a CacheServer cache with nothing set (cacheServerManifest), applied to
// ns, and Available.
func givenCacheServer(t *testing.T, ns string, opts ...givenOption) {
	t.Helper()
	g := newGiven("cache", opts)
	g.apply(t, ns, "cacheserver", cacheServerManifest(g.name)+specOf(g.spec))
}

// specOf is the spec: line that spec lines need when the manifest has no spec of its own.
func specOf(lines string) string {
	if lines == "" {
		return ""
	}
	return "spec:\n"
}

// shardManifest is a minimal Shard shard-1 of the RootShard root as YAML.
const shardManifest = `apiVersion: operator.kcp.io/v1alpha1
kind: Shard
metadata:
  name: shard-1
spec:
  rootShard: {ref: {name: root}}
  etcd: {endpoints: ["https://etcd-shard:2379"]}
`

// frontProxyManifest is a FrontProxy of the RootShard root at <name>.example.com:443 as YAML.
func frontProxyManifest(name string) string {
	return strings.ReplaceAll(`apiVersion: operator.kcp.io/v1alpha1
kind: FrontProxy
metadata:
  name: NAME
spec:
  rootShard: {ref: {name: root}}
  external: {hostname: NAME.example.com, port: 443}
`, "NAME", name)
}

// cacheServerManifest is a CacheServer with nothing set as YAML.
func cacheServerManifest(name string) string {
	return "apiVersion: operator.kcp.io/v1alpha1\nkind: CacheServer\nmetadata:\n  name: " + name + "\n"
}
