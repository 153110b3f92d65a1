package localstack

import (
	"context"
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	kcppki "github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// The runner's side of the backup agents (etcdRunner): it runs the agent of every Deployment
// the server realizes for a managed etcd's backup (RunEtcdBackupAgent's mapping), once every
// Secret and ConfigMap its pod mounts exists and the members of its etcd run, leads its
// pod's port to it (Forward) so that the server's dialer reaches it by its Service, starts it
// again when it ended (as kubelet restarts a container), replaces it when its pod template
// changes or its members run elsewhere (a restored etcd's new members), and stops it when
// the Deployment goes. While its members do not run (their StatefulSet is gone, or created
// again to restore a snapshot), an agent that runs keeps running: it serves its store to the
// restore's init container. An agent of an etcd that restores is started without members,
// its --endpoints leading to a port nothing listens on, until they run.

// runningAgent is a Deployment's agent as it runs.
type runningAgent struct {
	uid types.UID
	// template is the hash of the pod template the agent runs with.
	template string
	// members are the client URLs of the members its --endpoints lead to, empty when it was
	// started without members.
	members string
	agent   *EtcdAgent
	// pods are the Deployment's pods its port is led from, and unforward ends that.
	pods      []string
	unforward func(context.Context) error
	// nowhere is the port the members' addresses lead to when it was started without them.
	nowhere int
}

// isBackupAgent says whether dep is the server's backup agent of a managed etcd: a pod
// template of the agent's component with its owner's label, running the server's binary.
func isBackupAgent(dep *appsv1.Deployment) bool {
	spec := &dep.Spec.Template.Spec
	return ownedTemplate(dep.Spec.Template.Labels, etcd.AgentRole) && len(spec.Containers) == 1 &&
		len(spec.Containers[0].Command) == 1 && path.Base(spec.Containers[0].Command[0]) == etcd.AgentCommand
}

// ownedTemplate says whether the labels of a pod template are component's of an owner: the
// component's and the instance's label, and an owner's label (operator.kcp.io/<kind>) that
// names the instance.
func ownedTemplate(l map[string]string, component string) bool {
	return l[kcppki.LabelComponent] == component && l[kcppki.LabelInstance] != "" && ownerLabel(l) != ""
}

// ownerLabel is the owner's label (operator.kcp.io/<kind>) that names the instance, or "".
func ownerLabel(l map[string]string) string {
	for k, v := range l {
		if strings.HasPrefix(k, kcppki.AnnotationPrefix) && v == l[kcppki.LabelInstance] && v != "" {
			return k
		}
	}
	return ""
}

// etcdOf is the StatefulSet of the managed etcd whose agent dep is: the one of the same
// namespace and owner (its pod template's instance and owner labels), nil when there is none.
func etcdOf(dep *appsv1.Deployment, statefulSets []*appsv1.StatefulSet) *appsv1.StatefulSet {
	l := dep.Spec.Template.Labels
	owner := ownerLabel(l)
	for _, sts := range statefulSets {
		t := sts.Spec.Template.Labels
		if sts.Namespace == dep.Namespace && sts.DeletionTimestamp == nil && isManagedEtcd(sts) &&
			t[kcppki.LabelInstance] == l[kcppki.LabelInstance] && t[owner] == l[owner] {
			return sts
		}
	}
	return nil
}

// syncAgent makes the agent of the Deployment key run as it says, or stops it when it is
// gone; it returns when to look again while it waits.
func (r *etcdRunner) syncAgent(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	dep, err := r.deployments.Deployments(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		dep = nil
	case err != nil:
		return 0, err
	}
	r.mu.Lock()
	cur := r.agents[key]
	r.mu.Unlock()
	wanted := dep != nil && dep.DeletionTimestamp == nil && isBackupAgent(dep)
	if cur != nil && (!wanted || cur.uid != dep.UID) {
		r.stopAgent(ctx, key, cur)
		cur = nil
	}
	if !wanted {
		return 0, nil
	}
	hash, err := templateHash(dep.Spec.Replicas, dep.Spec.Template)
	if err != nil {
		return 0, err
	}
	statefulSets, err := r.lister.StatefulSets(ns).List(labels.Everything())
	if err != nil {
		return 0, err
	}
	sts := etcdOf(dep, statefulSets)
	members := r.runningMembers(sts)
	membersKey := ""
	if members != nil {
		membersKey = strings.Join(members.ClientURLs(), ",")
	}
	if cur != nil && cur.template == hash && (cur.members == membersKey || membersKey == "") {
		return r.keepAgent(ctx, key, cur)
	}
	if _, restoring := etcd.RestoringSnapshot(sts); members == nil && cur == nil && !restoring {
		what := "its etcd's StatefulSet"
		if sts != nil {
			what = "the members of StatefulSet " + sts.Name
		}
		r.wait(runnerKey{agent: true, key: key}, what+" to run")
		return 2 * time.Second, nil
	}
	secrets, configMaps, err := r.stack.PodSources(ctx, ns, &dep.Spec.Template.Spec)
	if r.waitFor(runnerKey{agent: true, key: key}, err) {
		return 2 * time.Second, nil
	} else if err != nil {
		return 0, err
	}
	if cur != nil {
		// Replaced, as the Deployment's strategy (Recreate) replaces its pod.
		r.log.Printf("%s: its pod template changed or its members run elsewhere: replacing its backup agent", key)
		r.stopAgent(ctx, key, cur)
	}
	return r.runAgent(ctx, key, dep, secrets, configMaps, members, hash)
}

// runningMembers are the members the runner runs for sts, nil when none run.
func (r *etcdRunner) runningMembers(sts *appsv1.StatefulSet) *EtcdMembers {
	if sts == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.running[sts.Namespace+"/"+sts.Name]; cur != nil && cur.uid == sts.UID {
		return cur.members
	}
	return nil
}

// runningAgents are the agents the runner runs, for a restore's init container.
func (r *etcdRunner) runningAgents() []*EtcdAgent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*EtcdAgent
	for _, cur := range r.agents {
		out = append(out, cur.agent)
	}
	return out
}

// runAgent starts the agent of dep against members (none: their addresses lead to a port
// nothing listens on), records it, and leads its pod's port to it once the pod exists.
func (r *etcdRunner) runAgent(ctx context.Context, key string, dep *appsv1.Deployment, secrets map[string]*corev1.Secret,
	configMaps map[string]*corev1.ConfigMap, members *EtcdMembers, hash string,
) (time.Duration, error) {
	cur := &runningAgent{uid: dep.UID, template: hash}
	member := func(flagName, host string, port int) (string, error) {
		return net.JoinHostPort("localhost", strconv.Itoa(cur.nowhere)), nil
	}
	if members != nil {
		cur.members = strings.Join(members.ClientURLs(), ",")
		member = members.memberAddress
		r.log.Printf("%s: starting its backup agent against the members of %s/%s", key, members.Namespace, members.StatefulSet)
	} else {
		p, err := FreePort()
		if err != nil {
			return 0, err
		}
		cur.nowhere = p
		r.log.Printf("%s: starting its backup agent without members, for the restore of its etcd: its --endpoints lead nowhere until they run", key)
	}
	env := etcdAgentEnv{
		dir: r.stack.Path("etcd-agents", dep.Namespace+"-"+dep.Name), claimsDir: r.stack.Path("claims", dep.Namespace),
		logDir: r.stack.Path("logs"), bin: r.stack.Bin(etcd.AgentCommand),
	}
	a, err := runEtcdAgent(ctx, env, dep, secrets, configMaps, member)
	if err != nil {
		cur.releaseNowhere()
		return 0, fmt.Errorf("running its backup agent: %w", err)
	}
	cur.agent = a
	r.mu.Lock()
	r.agents[key] = cur
	r.mu.Unlock()
	r.log.Printf("%s: its backup agent runs on %s, its claims' directories %v (logs/etcd-agent-%s-%s.log)", key, a.URL, a.Claims, dep.Namespace, dep.Name)
	// A member that waits to restore from it starts now.
	r.enqueueStatefulSets()
	return r.keepAgent(ctx, key, cur)
}

// keepAgent starts cur's agent again when it ended, and leads the Deployment's pods' port to
// it when they changed; it looks again soon while the Deployment has no pod.
func (r *etcdRunner) keepAgent(ctx context.Context, key string, cur *runningAgent) (time.Duration, error) {
	if done, _ := cur.agent.proc.Exited(); done {
		r.log.Printf("%s: its backup agent ended: starting it again", key)
		p, err := cur.agent.proc.Rerun()
		if err != nil {
			return 0, fmt.Errorf("starting its backup agent again: %w", err)
		}
		cur.agent.proc = p
		if err := cur.agent.waitAccepting(ctx); err != nil {
			return 0, err
		}
		r.log.Printf("%s: its backup agent runs again", key)
	}
	pods, err := cur.agent.pods(ctx, r.stack)
	if err != nil {
		return 0, err
	}
	if !slices.Equal(pods, cur.pods) {
		if err := cur.endForward(ctx); err != nil {
			return 0, err
		}
		if len(pods) > 0 {
			if cur.unforward, err = cur.agent.forwardPods(ctx, r.stack, pods); err != nil {
				return 0, err
			}
			r.log.Printf("%s: its pods %v lead to its backup agent", key, pods)
		}
		cur.pods = pods
	}
	if len(pods) == 0 {
		return 2 * time.Second, nil
	}
	return 0, nil
}

// stopAgent stops cur's agent and ends its forwards; its claims' directories stay, as the
// claims do.
func (r *etcdRunner) stopAgent(ctx context.Context, key string, cur *runningAgent) {
	if err := cur.endForward(ctx); err != nil {
		r.log.Printf("%s: ending its pods' forwards: %v", key, err)
	}
	cur.stop()
	r.mu.Lock()
	delete(r.agents, key)
	r.mu.Unlock()
	r.log.Printf("%s: stopped its backup agent", key)
}

func (cur *runningAgent) endForward(ctx context.Context) error {
	if cur.unforward == nil {
		return nil
	}
	err := cur.unforward(ctx)
	cur.unforward, cur.pods = nil, nil
	return err
}

func (cur *runningAgent) stop() {
	cur.agent.Stop()
	cur.releaseNowhere()
}

func (cur *runningAgent) releaseNowhere() {
	if cur.nowhere != 0 {
		releasePorts(map[memberPort]int{{0, 0}: cur.nowhere})
		cur.nowhere = 0
	}
}

// enqueueAgents looks again at the agents' Deployments of namespace: their members changed.
func (r *etcdRunner) enqueueAgents(namespace string) {
	deps, err := r.deployments.Deployments(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, dep := range deps {
		r.queue.Add(runnerKey{agent: true, key: dep.Namespace + "/" + dep.Name})
	}
}

// enqueueStatefulSets looks again at every StatefulSet: an agent a restore reads from runs.
func (r *etcdRunner) enqueueStatefulSets() {
	all, err := r.lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, sts := range all {
		r.queue.Add(runnerKey{key: sts.Namespace + "/" + sts.Name})
	}
}
