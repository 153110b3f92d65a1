package validation_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
	"github.com/kcp-setups/apiserver/pkg/apis/operator/validation"
	"github.com/kcp-setups/apiserver/pkg/apiserver/apiservertest"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/cacheserver"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/frontproxy"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/kubeconfig"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/link"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/rootshard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/shard"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/store"
	"github.com/kcp-setups/apiserver/pkg/registry/operator/virtualworkspace"
)

// kindUnderTest is the validation of one kind as its registry wires it, on untyped objects.
type kindUnderTest struct {
	kind string
	// create and update are the kind's validation; update is nil for the request body,
	// which is never stored.
	create func(runtime.Object) field.ErrorList
	update func(newObj, oldObj runtime.Object) field.ErrorList
	// dropStatus does what PrepareForCreate does to a status a client sent.
	dropStatus func(runtime.Object)
	// copySpec puts the spec of src into dst.
	copySpec func(dst, src runtime.Object)
}

func registered[T store.Object, Spec, Status any](kind string, k *store.Kind[T, Spec, Status]) kindUnderTest {
	return kindUnderTest{
		kind:       kind,
		create:     func(o runtime.Object) field.ErrorList { return k.Validate(o.(T)) },
		update:     func(n, o runtime.Object) field.ErrorList { return k.ValidateUpdate(n.(T), o.(T)) },
		dropStatus: func(o runtime.Object) { *k.Status(o.(T)) = *new(Status) },
		copySpec:   func(dst, src runtime.Object) { *k.Spec(dst.(T)) = *k.Spec(src.(T)) },
	}
}

var kindsUnderTest = []kindUnderTest{
	registered("RootShard", &rootshard.Kind),
	registered("Shard", &shard.Kind),
	registered("FrontProxy", &frontproxy.Kind),
	registered("CacheServer", &cacheserver.Kind),
	registered("Kubeconfig", &kubeconfig.Kind),
	registered("VirtualWorkspace", &virtualworkspace.Kind),
	registered("Link", &link.Kind),
	{
		kind: "KubeconfigRequest",
		create: func(o runtime.Object) field.ErrorList {
			return validation.ValidateKubeconfigRequest(o.(*operator.KubeconfigRequest))
		},
		dropStatus: func(o runtime.Object) { o.(*operator.KubeconfigRequest).Status = operator.KubeconfigRequestStatus{} },
	},
}

// thirdPartyVirtualWorkspace seeds what the example, kcp's own server, leaves out: a
// third-party virtual workspace server with an init container, shaped like kcp-operator's
// sample.
const thirdPartyVirtualWorkspace = `apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata: {name: access, namespace: team-a}
spec:
  target: {shardRef: {name: shard-a}}
  external: {hostname: vw.example.com, privateHostname: vw.internal, privatePort: 8443}
  image: {repository: ghcr.io/kcp-dev/contrib-access-virtual-workspace, tag: latest}
  command: [/access-vw]
  kubeconfigSecretRef: {name: access-vw-server-kubeconfig}
  certificateTemplates:
    server: {spec: {dnsNames: [vw.example.com]}}
  initContainers:
    - name: init
      kubeconfigSecretRef: {name: access-vw-bootstrap-kubeconfig}
      command: [/access-vw-init]
      args: [--kubeconfig=/etc/kcp/init-kubeconfig/kubeconfig]
      volumes: [{name: scratch, emptyDir: {}}]
      volumeMounts: [{name: scratch, mountPath: /var/scratch}]
  extraArgs: [--apiexport-endpointslice=access.contrib.kcp.io]
  extraVolumes: [{name: scratch, emptyDir: {}}]
  extraVolumeMounts: [{name: scratch, mountPath: /var/scratch}]
`

// prepareForCreate does to metadata what the generic registry's BeforeCreate does before
// validation: the namespace comes from the URL, deletion fields are dropped, and the system
// fields are set.
func prepareForCreate(t *testing.T, k kindUnderTest, obj runtime.Object) {
	m, err := meta.Accessor(obj)
	require.NoError(t, err)
	if m.GetNamespace() == "" {
		m.SetNamespace("team-a")
	}
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetGeneration(1)
	m.SetCreationTimestamp(metav1.Unix(1_700_000_000, 0))
	m.SetUID("2f1d3c4e-0000-4000-8000-000000000001")
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + "x7k2p")
	}
	k.dropStatus(obj)
}

// setStored gives objects the resourceVersion of a stored object, as an update has.
func setStored(t *testing.T, objs ...runtime.Object) {
	for _, o := range objs {
		m, err := meta.Accessor(o)
		require.NoError(t, err)
		m.SetResourceVersion("42")
	}
}

// requireFieldErrors checks what the API makes of a rejection: every error names a field,
// and the status the handler sends is a 422 whose causes name them too.
func requireFieldErrors(t *testing.T, kind string, obj runtime.Object, errs field.ErrorList) {
	for _, e := range errs {
		require.NotEmpty(t, e.Field, "an error without a field path: %v", e)
	}
	m, err := meta.Accessor(obj)
	require.NoError(t, err)
	status := apierrors.NewInvalid(operator.Kind(kind), m.GetName(), errs).Status()
	require.EqualValues(t, http.StatusUnprocessableEntity, status.Code)
	require.NotNil(t, status.Details)
	for _, c := range status.Details.Causes {
		require.NotEmpty(t, c.Field, "a cause without a field: %v", c)
	}
}

// versionedRootShard seeds what the examples leave out: a setup's release, its upgrade
// strategy and its maintenance window.
const versionedRootShard = `apiVersion: operator.kcp.io/v1alpha1
kind: RootShard
metadata: {name: root, namespace: team-a}
spec:
  external: {hostname: kcp.example.com}
  etcd: {endpoints: [https://etcd.kcp-system.svc.cluster.local:2379]}
  version: v0.31.4
  upgrade: {paused: true, progressDeadlineSeconds: 900}
  maintenance:
    window: {days: [Saturday, Sunday], start: "23:00", duration: 3h, timeZone: Europe/Berlin}
    autoUpdate: Patch`

// FuzzValidate posts arbitrary bytes as the body of every kind: decoded, defaulted and
// converted by the server's decoder, then validated for creation, and for an update of the
// kind's valid example. A rejection names its fields; what creation accepts survives the
// server's encoding unchanged, and is accepted again, also as an update of itself.
func FuzzValidate(f *testing.F) {
	examples := apiservertest.Examples(f, "../../../../artifacts/examples")
	for _, e := range examples {
		f.Add(e.JSON)
		f.Add(e.YAML)
	}
	json, err := yaml.YAMLToJSON([]byte(thirdPartyVirtualWorkspace))
	require.NoError(f, err)
	f.Add(json)
	f.Add([]byte(thirdPartyVirtualWorkspace))
	for _, seed := range []string{versionedRootShard} {
		json, err := yaml.YAMLToJSON([]byte(seed))
		require.NoError(f, err)
		f.Add(json)
		obj, _, err := apiservertest.Decode(runtime.ContentTypeYAML, "RootShard", []byte(seed))
		require.NoError(f, err)
		require.Empty(f, validation.ValidateRootShard(obj.(*operator.RootShard)), "the versioned RootShard is rejected")
	}
	third, _, err := apiservertest.Decode(runtime.ContentTypeYAML, "VirtualWorkspace", []byte(thirdPartyVirtualWorkspace))
	require.NoError(f, err)
	// The seed must reach the round trip below, which only an accepted object does.
	require.Empty(f, validation.ValidateVirtualWorkspace(third.(*operator.VirtualWorkspace)), "the third-party VirtualWorkspace is rejected")

	olds := map[string]runtime.Object{}
	for _, k := range kindsUnderTest {
		if k.update == nil {
			continue
		}
		old, _, err := apiservertest.Decode(runtime.ContentTypeYAML, k.kind, apiservertest.ExampleOf(f, examples, k.kind).YAML)
		require.NoError(f, err)
		olds[k.kind] = old
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		for _, k := range kindsUnderTest {
			obj, _, err := apiservertest.Decode(runtime.ContentTypeJSON, k.kind, body)
			if err != nil {
				continue
			}
			prepareForCreate(t, k, obj)
			errs := k.create(obj)
			requireFieldErrors(t, k.kind, obj, errs)

			if k.update != nil {
				// The old object is the example's spec under the new object's metadata, so
				// that the update is about the spec; both carry the stored resourceVersion.
				old, updated := obj.DeepCopyObject(), obj.DeepCopyObject()
				k.copySpec(old, olds[k.kind])
				setStored(t, old, updated)
				requireFieldErrors(t, k.kind, updated, k.update(updated, old))
			}
			if len(errs) > 0 {
				continue
			}

			answer, err := apiservertest.Encode(runtime.ContentTypeJSON, obj)
			require.NoError(t, err)
			again, _, err := apiservertest.Decode(runtime.ContentTypeJSON, k.kind, answer)
			require.NoError(t, err, "an accepted %s does not decode from the server's answer %s", k.kind, answer)
			require.True(t, apiequality.Semantic.DeepEqual(obj, again), "an accepted %s changed in a round trip:\n%#v\n%#v", k.kind, obj, again)
			require.Empty(t, k.create(again), "an accepted %s is rejected after a round trip", k.kind)
			if k.update != nil {
				setStored(t, obj, again)
				require.Empty(t, k.update(again, obj), "an accepted %s is rejected as an update of itself", k.kind)
			}
		}
	})
}
