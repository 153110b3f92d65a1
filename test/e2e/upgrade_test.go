package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	operatorv1alpha1 "github.com/kcp-setups/apiserver/pkg/apis/operator/v1alpha1"
	"github.com/kcp-setups/apiserver/pkg/controller/kinds"
	"github.com/kcp-setups/apiserver/pkg/kcpversion"
	"github.com/kcp-setups/apiserver/pkg/upgrade"
	"github.com/kcp-setups/apiserver/test/framework"
)

const (
	upgradeFrom = "v0.31.6"
	upgradeTo   = "v0.32.3"
)

// upgradeSetup is a RootShard root on release version with the further spec lines spec, and
// the members of its setup that groups lists of: CacheServer cache (named by spec.cache.ref),
// Shards s1 and s2, the kcp VirtualWorkspace root-vw that serves the root shard, and the
// FrontProxy edge.
func upgradeSetup(version, spec string, groups ...operatorv1alpha1.UpgradeGroup) string {
	docs := []string{framework.RootShardManifest("root", "kcp.example.com", 6443) + "  version: " + version + "\n" + spec}
	for _, g := range groups {
		switch g {
		case operatorv1alpha1.UpgradeGroupCacheServer:
			docs[0] += "  cache: {ref: {name: cache}}\n"
			docs = append(docs, cacheServerManifest("cache"))
		case operatorv1alpha1.UpgradeGroupShard:
			docs = append(docs, strings.ReplaceAll(shardManifest, "name: shard-1", "name: s1"), strings.ReplaceAll(shardManifest, "name: shard-1", "name: s2"))
		case operatorv1alpha1.UpgradeGroupVirtualWorkspace:
			docs = append(docs, `apiVersion: operator.kcp.io/v1alpha1
kind: VirtualWorkspace
metadata:
  name: root-vw
spec:
  target: {rootShardRef: {name: root}}
  external: {hostname: vw.example.com, port: 8443}
`)
		case operatorv1alpha1.UpgradeGroupFrontProxy:
			docs = append(docs, frontProxyManifest("edge"))
		}
	}
	return strings.Join(docs, "---\n")
}

// upgradeGroupOf is the group of each Deployment of upgradeSetup.
var upgradeGroupOf = map[string]operatorv1alpha1.UpgradeGroup{
	"cache-cache-server":        operatorv1alpha1.UpgradeGroupCacheServer,
	"root-kcp":                  operatorv1alpha1.UpgradeGroupRootShard,
	"root-proxy":                operatorv1alpha1.UpgradeGroupRootShard,
	"s1-shard-kcp":              operatorv1alpha1.UpgradeGroupShard,
	"s2-shard-kcp":              operatorv1alpha1.UpgradeGroupShard,
	"root-vw-virtual-workspace": operatorv1alpha1.UpgradeGroupVirtualWorkspace,
	"edge-front-proxy":          operatorv1alpha1.UpgradeGroupFrontProxy,
}

// deploymentLog records, from a watch on a namespace's Deployments, in the order of the
// watch's events: when each Deployment's pod template first ran the target release, when it
// was first rolled out and Available at it, and every moment two of them ran releases two
// minors apart.
type deploymentLog struct {
	mu      sync.Mutex
	target  string
	seq     int
	tags    map[string]string
	changed map[string]int
	ready   map[string]int
	skew    []string
}

// watchDeployments watches the Deployments of ns until the test ends.
func watchDeployments(t *testing.T, ns, target string) *deploymentLog {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", stack.AdminKubeconfig)
	require.NoError(t, err)
	kube, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	l := &deploymentLog{target: target, tags: map[string]string{}, changed: map[string]int{}, ready: map[string]int{}}
	factory := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithNamespace(ns))
	informer := factory.Apps().V1().Deployments().Informer()
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { l.record(obj) },
		UpdateFunc: func(_, obj any) { l.record(obj) },
	})
	require.NoError(t, err)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	factory.Start(stop)
	require.True(t, cache.WaitForCacheSync(stop, informer.HasSynced))
	return l
}

func (l *deploymentLog) record(obj any) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok || len(d.Spec.Template.Spec.Containers) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	tag := kinds.ImageTag(d.Spec.Template.Spec.Containers[0].Image)
	l.tags[d.Name] = tag
	if _, seen := l.changed[d.Name]; !seen && tag == l.target {
		l.changed[d.Name] = l.seq
	}
	if _, seen := l.ready[d.Name]; !seen && tag == l.target && rolledOutAndAvailable(d) {
		l.ready[d.Name] = l.seq
	}
	lowest, highest := -1, -1
	for _, tag := range l.tags {
		m := kcpversion.FromTag(tag).Minor()
		if lowest < 0 || m < lowest {
			lowest = m
		}
		highest = max(highest, m)
	}
	if highest-lowest > 1 {
		l.skew = append(l.skew, fmt.Sprintf("event %d: %v", l.seq, l.tags))
	}
}

// rolledOutAndAvailable reports whether every replica of d runs its template and is
// available, and its Available condition is True.
func rolledOutAndAvailable(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration < d.Generation || s.Replicas != want || s.UpdatedReplicas != want || s.AvailableReplicas != want || s.ReadyReplicas != want {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == "True"
		}
	}
	return false
}

// snapshot is a copy of what the log holds.
func (l *deploymentLog) snapshot() (changed, ready map[string]int, tags map[string]string, skew []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	copyOf := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	tags = map[string]string{}
	for k, v := range l.tags {
		tags[k] = v
	}
	return copyOf(l.changed), copyOf(l.ready), tags, append([]string(nil), l.skew...)
}

// upgrading is the status and reason of the RootShard root's Upgrading condition, and its
// message.
func upgrading(t *testing.T, ns string) (string, string) {
	out, _ := stack.Kubectl(t.Context(), "get", "rootshard", "root", "-n", ns, "-o",
		`jsonpath={.status.conditions[?(@.type=="Upgrading")].status}/{.status.conditions[?(@.type=="Upgrading")].reason}|{.status.conditions[?(@.type=="Upgrading")].message}`)
	state, message, _ := strings.Cut(out, "|")
	return state, message
}

// waitForUpgrading waits until the RootShard root's Upgrading condition is status/reason.
func waitForUpgrading(t *testing.T, ns, state string, within time.Duration) string {
	t.Helper()
	var got, message string
	require.Eventually(t, func() bool {
		got, message = upgrading(t, ns)
		return got == state
	}, within, time.Second, "Upgrading is %s (%s), not %s", got, message, state)
	return message
}

// waitForHaltAt waits until the roll of the RootShard root halts at group: on a busy machine
// an earlier group may outlast the short deadline the test sets and halt first, which
// resumes by itself once that group is done (a halt is only the condition).
func waitForHaltAt(t *testing.T, ns string, group operatorv1alpha1.UpgradeGroup, within time.Duration) string {
	t.Helper()
	var got, message string
	require.Eventually(t, func() bool {
		got, message = upgrading(t, ns)
		return got == "False/Halted" && strings.HasPrefix(message, "group "+string(group)+" (")
	}, within, time.Second, "Upgrading is %s (%s), not halted at group %s", got, message, group)
	return message
}

// deploymentTag is the image tag of the first container of the Deployment name of ns.
func deploymentTag(t *testing.T, ns, name string) string {
	return kinds.ImageTag(kubectl(t, "get", "deployment", name, "-n", ns, "-o", "jsonpath={.spec.template.spec.containers[0].image}"))
}

// TestUpgradeInOrder: a setup on v0.31.6 (a RootShard, two Shards, the CacheServer its
// spec.cache.ref names, a kcp VirtualWorkspace of the root shard and a FrontProxy) is moved to
// v0.32.3 by its spec.version alone. A watch on the namespace's Deployments shows every
// group's first image change only after every Deployment of the group before was rolled out
// and Available at v0.32.3, and no two components two minors apart; afterwards every
// Deployment has the arguments of the same setup made at v0.32.3.
func TestUpgradeInOrder(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "upgrade-order")
	all := []operatorv1alpha1.UpgradeGroup{"CacheServer", "Shard", "VirtualWorkspace", "FrontProxy"}
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, upgradeSetup(upgradeFrom, "", all...)))
	for _, o := range []string{"rootshard/root", "cacheserver/cache", "shard/s1", "shard/s2", "virtualworkspace/root-vw", "frontproxy/edge"} {
		waitFor(t, ns, o, "Available")
	}
	waitForUpgrading(t, ns, "False/UpToDate", 3*time.Minute)
	for name := range upgradeGroupOf {
		require.Equal(t, upgradeFrom, deploymentTag(t, ns, name), name)
	}
	// Beside it, the same setup made at v0.32.3 from the start: what the builders make of the
	// same spec at v0.32.3, with everything the controllers add from the host (the cache's
	// kubeconfig, the virtual workspace's address, the shards' service-account issuers),
	// which a build in the test would have to make up.
	fresh := namespace(t, "upgrade-order-fresh")
	kubectl(t, "apply", "-n", fresh, "-f", writeManifest(t, upgradeSetup(upgradeTo, "", all...)))

	log := watchDeployments(t, ns, upgradeTo)
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"version":"`+upgradeTo+`"}}`)
	waitForUpgrading(t, ns, "False/UpToDate", 6*time.Minute)
	require.Eventually(t, func() bool {
		_, ready, _, _ := log.snapshot()
		return len(ready) == len(upgradeGroupOf)
	}, time.Minute, time.Second, "every Deployment rolled out at %s", upgradeTo)
	assert.Equal(t, upgradeTo, kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.version.current}"))

	changed, ready, _, skew := log.snapshot()
	assert.Empty(t, skew, "two components two minors apart")
	var before operatorv1alpha1.UpgradeGroup
	for _, g := range upgrade.Order {
		first := -1
		for name, group := range upgradeGroupOf {
			if group == g && (first < 0 || changed[name] < first) {
				first = changed[name]
			}
		}
		if before != "" {
			for name, group := range upgradeGroupOf {
				if group == before {
					assert.Less(t, ready[name], first, "group %s started (event %d) before %s was rolled out and Available at %s (event %d)",
						g, first, name, upgradeTo, ready[name])
				}
			}
		}
		before = g
	}
	t.Logf("image changes %v, rolled out %v", changed, ready)

	for _, o := range []string{"rootshard/root", "cacheserver/cache", "shard/s1", "shard/s2", "virtualworkspace/root-vw", "frontproxy/edge"} {
		waitFor(t, fresh, o, "Available")
	}
	for name := range upgradeGroupOf {
		want := strings.Join(deploymentArgs(t, fresh, name), "\n")
		assert.Equal(t, strings.ReplaceAll(want, fresh, ns), strings.Join(deploymentArgs(t, ns, name), "\n"), "the arguments of %s", name)
		assert.Equal(t, upgradeTo, deploymentTag(t, ns, name), name)
	}
}

// TestUpgradeHaltsAndResumes: a paused roll starts no group; a Shard that cannot become
// Available halts the roll at the Shard group once its deadline passed: the condition names
// it, an Event UpgradeHalted says so once, and the VirtualWorkspace and the FrontProxy are
// not changed. Fixing the Shard resumes the roll to its end. Paused during a roll, the
// rolling group finishes and the next does not start until it is unpaused.
func TestUpgradeHaltsAndResumes(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "upgrade-halt")
	kubectl(t, "apply", "-n", ns, "-f", writeManifest(t, upgradeSetup(upgradeFrom, "  upgrade: {progressDeadlineSeconds: 20}\n",
		operatorv1alpha1.UpgradeGroupShard, operatorv1alpha1.UpgradeGroupVirtualWorkspace, operatorv1alpha1.UpgradeGroupFrontProxy)))
	for _, o := range []string{"rootshard/root", "shard/s1", "shard/s2", "virtualworkspace/root-vw", "frontproxy/edge"} {
		waitFor(t, ns, o, "Available")
	}
	waitForUpgrading(t, ns, "False/UpToDate", 3*time.Minute)

	// Paused, the new release starts no group.
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"version":"`+upgradeTo+`","upgrade":{"paused":true}}}`)
	message := waitForUpgrading(t, ns, "False/Paused", time.Minute)
	assert.Equal(t, "paused before group RootShard to "+upgradeTo, message)
	time.Sleep(5 * time.Second)
	assert.Equal(t, upgradeFrom, deploymentTag(t, ns, "root-kcp"), "a paused roll changes nothing")

	// s1's pods find no node.
	kubectl(t, "patch", "shard", "s1", "-n", ns, "--type=merge", "-p",
		`{"spec":{"deploymentTemplate":{"spec":{"template":{"spec":{"nodeSelector":{"example.com/nowhere":"true"}}}}}}}`)
	kubectl(t, "wait", "-n", ns, "shard/s1", "--for=condition=Available=False", "--timeout=3m")

	// Unpaused, the root shard rolls, then the roll halts at the Shard group.
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"upgrade":{"paused":false}}}`)
	message = waitForHaltAt(t, ns, operatorv1alpha1.UpgradeGroupShard, 3*time.Minute)
	assert.Contains(t, message, "group Shard (3 of 5) to "+upgradeTo+" did not finish within 20s: Shard/s1: ")
	assert.Equal(t, upgradeTo, deploymentTag(t, ns, "root-kcp"))
	assert.Equal(t, upgradeTo, deploymentTag(t, ns, "root-proxy"))
	assert.Equal(t, "Shard", kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.version.group}"))
	time.Sleep(5 * time.Second)
	for _, later := range []string{"root-vw-virtual-workspace", "edge-front-proxy"} {
		assert.Equal(t, upgradeFrom, deploymentTag(t, ns, later), "%s does not change while the roll is halted", later)
	}
	// One Event for the halt at the Shard group (an earlier group that outlasted the short
	// deadline on a busy machine has one of its own).
	var atShards []string
	for _, line := range nonEmptyLines(kubectl(t, "get", "events", "-n", ns, "--field-selector", "reason=UpgradeHalted,involvedObject.name=root",
		"-o", `jsonpath={range .items[*]}{.count} {.message}{"\n"}{end}`)) {
		if strings.Contains(line, "group Shard (3 of 5)") {
			atShards = append(atShards, line)
		}
	}
	if assert.Len(t, atShards, 1, "one Event for the halt at the Shard group") {
		assert.True(t, strings.HasPrefix(atShards[0], "1 "), "recorded once: %s", atShards[0])
	}

	// Fixed, s1 rolls out, and the roll goes on to its end.
	kubectl(t, "patch", "shard", "s1", "-n", ns, "--type=merge", "-p", `{"spec":{"deploymentTemplate":null}}`)
	waitForUpgrading(t, ns, "False/UpToDate", 3*time.Minute)
	for name, g := range upgradeGroupOf {
		if g != operatorv1alpha1.UpgradeGroupCacheServer {
			assert.Equal(t, upgradeTo, deploymentTag(t, ns, name), name)
		}
	}
	assert.Equal(t, upgradeTo, kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.version.current}"))
	assert.Equal(t, upgradeTo, kubectl(t, "get", "rootshard", "root", "-n", ns, "-o", "jsonpath={.status.version.target}"))
	assert.Contains(t, kubectl(t, "get", "rootshard", "root", "-n", ns), upgradeTo, "the Version column")

	// Paused during a roll: the rolling group finishes, the next one does not start. A patch
	// back (v0.32.3 to v0.32.2) halts at s1 again, and is paused there.
	const patch = "v0.32.2"
	kubectl(t, "patch", "shard", "s1", "-n", ns, "--type=merge", "-p",
		`{"spec":{"deploymentTemplate":{"spec":{"template":{"spec":{"nodeSelector":{"example.com/nowhere":"true"}}}}}}}`)
	kubectl(t, "wait", "-n", ns, "shard/s1", "--for=condition=Available=False", "--timeout=3m")
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"version":"`+patch+`"}}`)
	waitForHaltAt(t, ns, operatorv1alpha1.UpgradeGroupShard, 3*time.Minute)
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"upgrade":{"paused":true}}}`)
	kubectl(t, "patch", "shard", "s1", "-n", ns, "--type=merge", "-p", `{"spec":{"deploymentTemplate":null}}`)
	message = waitForUpgrading(t, ns, "False/Paused", 3*time.Minute)
	require.Eventually(t, func() bool {
		_, message = upgrading(t, ns)
		return strings.HasSuffix(message, "is done; paused before the next group")
	}, 3*time.Minute, time.Second, "the Shard group finishes while paused: %s", message)
	assert.Equal(t, "group Shard (3 of 5) to "+patch+" is done; paused before the next group", message)
	assert.Equal(t, patch, deploymentTag(t, ns, "s1-shard-kcp"))
	time.Sleep(5 * time.Second)
	for _, later := range []string{"root-vw-virtual-workspace", "edge-front-proxy"} {
		assert.Equal(t, upgradeTo, deploymentTag(t, ns, later), "%s does not change while the roll is paused", later)
	}
	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"upgrade":{"paused":false}}}`)
	waitForUpgrading(t, ns, "False/UpToDate", 3*time.Minute)
	for _, later := range []string{"root-vw-virtual-workspace", "edge-front-proxy"} {
		assert.Equal(t, patch, deploymentTag(t, ns, later), "%s rolls once the roll is unpaused", later)
	}
}
