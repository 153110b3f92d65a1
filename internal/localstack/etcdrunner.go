package localstack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	kcppki "github.com/kcp-setups/apiserver/pkg/pki"
	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// etcdRunner runs the members of every managed etcd on the stack as etcd processes, since
// kwok's pods run nothing (Options.EtcdMembers): it watches the StatefulSets the server
// realizes for a managed etcd, runs their members once every Secret they mount exists,
// leads their pods' ports to them (ForwardMembers), restarts them one at a time when the pod
// template changes (a renewed certificate changes its Secrets' hash), starts a member that
// ended again (as kubelet restarts a container), and stops them when the StatefulSet goes.
// It runs the backup agents of their Deployments too (etcdagentrunner.go), which a
// restore's init container reads from. What it does is logged to logs/etcd-members.log.
type etcdRunner struct {
	stack       *Stack
	log         *log.Logger
	logFile     *os.File
	lister      appslisters.StatefulSetLister
	deployments appslisters.DeploymentLister
	queue       workqueue.TypedRateLimitingInterface[runnerKey]
	cancel      context.CancelFunc
	workers     sync.WaitGroup

	mu      sync.Mutex
	running map[string]*runningEtcd
	agents  map[string]*runningAgent
	// waiting is what each object last waited for, to log a wait once.
	waiting map[runnerKey]string
}

// runnerKey is what the runner works on: a managed etcd's StatefulSet or a backup agent's
// Deployment, by namespace/name.
type runnerKey struct {
	agent bool
	key   string
}

// runningEtcd is a StatefulSet's members as they run.
type runningEtcd struct {
	uid types.UID
	// template is the hash of the pod template and replicas the members run with.
	template  string
	members   *EtcdMembers
	unforward func(context.Context) error
}

// etcdRunnerWorkers is how many StatefulSets are worked on at once: a start waits for the
// members' readiness.
const etcdRunnerWorkers = 2

// etcdRunnerResync is how often every StatefulSet is looked at again, for a member that ended.
const etcdRunnerResync = 10 * time.Second

// managedEtcdSelector selects the StatefulSets the server realizes for a managed etcd and the
// Deployments of their backup agents (etcd.Cluster.Labels, AgentLabels).
var managedEtcdSelector = kcppki.LabelManagedBy + "=" + kcppki.ManagedBy + "," +
	kcppki.LabelComponent + " in (" + etcd.Component + "," + etcd.AgentRole + ")"

// startEtcdRunner starts the runner; Stop stops it and its members.
func (s *Stack) startEtcdRunner(ctx context.Context) error {
	if err := os.MkdirAll(s.Path("logs"), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(s.Path("logs", "etcd-members.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.Kube, etcdRunnerResync,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = managedEtcdSelector }))
	statefulSets := factory.Apps().V1().StatefulSets()
	deployments := factory.Apps().V1().Deployments()
	r := &etcdRunner{
		stack: s, log: log.New(f, "", log.LstdFlags), logFile: f, lister: statefulSets.Lister(), deployments: deployments.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[runnerKey](time.Second, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[runnerKey]{Name: "etcd-members"}),
		running: map[string]*runningEtcd{}, agents: map[string]*runningAgent{}, waiting: map[runnerKey]string{},
	}
	for _, informer := range []struct {
		agent    bool
		informer cache.SharedIndexInformer
	}{{false, statefulSets.Informer()}, {true, deployments.Informer()}} {
		enqueue := func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				r.queue.Add(runnerKey{agent: informer.agent, key: key})
			}
		}
		if _, err := informer.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
		}); err != nil {
			_ = f.Close()
			return err
		}
	}
	// The runner outlives Start's context: it runs until Stop.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	factory.Start(runCtx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), statefulSets.Informer().HasSynced, deployments.Informer().HasSynced) {
		cancel()
		factory.Shutdown()
		_ = f.Close()
		return errors.New("the StatefulSets' and Deployments' caches did not sync")
	}
	for range etcdRunnerWorkers {
		r.workers.Go(func() {
			for r.next(runCtx) {
			}
		})
	}
	go func() {
		<-runCtx.Done()
		factory.Shutdown()
	}()
	r.log.Printf("watching the StatefulSets of managed etcds and the Deployments of their backup agents (%s)", managedEtcdSelector)
	s.etcdRunner = r
	return nil
}

// stop stops the runner, every agent and every member it runs; their data stays for the
// next run.
func (r *etcdRunner) stop() {
	r.cancel()
	r.queue.ShutDown()
	r.workers.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, cur := range r.agents {
		cur.stop()
		r.log.Printf("%s: stopped its backup agent with the stack", key)
	}
	r.agents = map[string]*runningAgent{}
	for key, cur := range r.running {
		cur.members.Stop()
		cur.members.releasePorts()
		r.log.Printf("%s: stopped its members with the stack", key)
	}
	r.running = map[string]*runningEtcd{}
	_ = r.logFile.Close()
}

func (r *etcdRunner) next(ctx context.Context) bool {
	key, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(key)
	sync := r.sync
	if key.agent {
		sync = r.syncAgent
	}
	after, err := sync(ctx, key.key)
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping.
	case err != nil:
		r.log.Printf("%s: %v", key.key, err)
		r.queue.AddRateLimited(key)
	case after > 0:
		r.queue.Forget(key)
		r.queue.AddAfter(key, after)
	default:
		r.queue.Forget(key)
	}
	return true
}

// sync makes the members of the StatefulSet key run as it says, or stops them when it is
// gone; it returns when to look again while a Secret is missing.
func (r *etcdRunner) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	sts, err := r.lister.StatefulSets(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		sts = nil
	case err != nil:
		return 0, err
	}
	r.mu.Lock()
	cur := r.running[key]
	r.mu.Unlock()
	wanted := sts != nil && sts.DeletionTimestamp == nil && isManagedEtcd(sts)
	if cur != nil && (!wanted || cur.uid != sts.UID) {
		r.stopMembers(ctx, key, cur)
		cur = nil
	}
	if !wanted {
		return 0, nil
	}
	hash, err := templateHash(sts.Spec.Replicas, sts.Spec.Template)
	if err != nil {
		return 0, err
	}
	if cur != nil && cur.template == hash {
		return 0, r.restartEnded(ctx, key, cur)
	}
	secrets, configMaps, err := r.stack.PodSources(ctx, sts.Namespace, &sts.Spec.Template.Spec)
	if r.waitFor(runnerKey{key: key}, err) {
		return 2 * time.Second, nil
	} else if err != nil {
		return 0, err
	}
	// A restore's init container reads from a backup agent the runner runs.
	with := EtcdMembersWith{ConfigMaps: configMaps, Agents: r.runningAgents()}
	if cur == nil {
		return 0, r.run(ctx, key, sts, secrets, with, hash)
	}
	return 0, r.roll(ctx, key, cur, sts, secrets, with, hash)
}

// waitFor says whether err is a Secret or ConfigMap that the pods of key mount and that is
// missing, logging the wait once.
func (r *etcdRunner) waitFor(key runnerKey, err error) bool {
	missing := ""
	var status apierrors.APIStatus
	if apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil {
		d := status.Status().Details
		kind := map[string]string{"secrets": "Secret", "configmaps": "ConfigMap"}[d.Kind]
		missing = fmt.Sprintf("%s %s, which its pods mount", kind, d.Name)
	}
	return r.wait(key, missing)
}

// wait records what key waits for ("" for nothing), logging it once, and says whether it
// waits.
func (r *etcdRunner) wait(key runnerKey, what string) bool {
	r.mu.Lock()
	logWait := what != "" && r.waiting[key] != what
	r.waiting[key] = what
	r.mu.Unlock()
	if logWait {
		r.log.Printf("%s: waiting for %s", key.key, what)
	}
	return what != ""
}

// isManagedEtcd says whether sts is the server's managed etcd: a pod template of the etcd
// component, with its owner's label, and a container named etcd.
func isManagedEtcd(sts *appsv1.StatefulSet) bool {
	return ownedTemplate(sts.Spec.Template.Labels, etcd.Component) && slices.ContainsFunc(sts.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "etcd" })
}

// templateHash is the hash of what a workload runs: its pod template and its replicas.
func templateHash(replicas *int32, template corev1.PodTemplateSpec) (string, error) {
	data, err := json.Marshal(struct {
		Replicas *int32                 `json:"replicas"`
		Template corev1.PodTemplateSpec `json:"template"`
	}{replicas, template})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// env is where the members of sts run: a directory of the StatefulSet's own (by its UID, so
// that a new one of the same name starts without the old one's data), kept with the stack's
// directory, with the ports its members had in the last run when they are free.
func (r *etcdRunner) env(sts *appsv1.StatefulSet, with EtcdMembersWith) etcdMembersEnv {
	env := etcdMembersEnv{
		dir:    r.stack.Path("etcd-members", sts.Namespace+"-"+sts.Name+"-"+string(sts.UID)),
		logDir: r.stack.Path("logs"), bin: r.stack.Bin("etcd"), agentBin: r.stack.Bin(etcd.AgentCommand), prior: map[memberPort]int{},
		with: with,
	}
	for mp, p := range loadPorts(env.dir) {
		if reservePort(p) {
			env.prior[mp] = p
		} else {
			r.log.Printf("%s/%s: member %d's port %d of the last run is taken: it gets another", sts.Namespace, sts.Name, mp.member, mp.port)
		}
	}
	return env
}

// run starts the members of sts and forwards their pods' ports.
func (r *etcdRunner) run(ctx context.Context, key string, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret, with EtcdMembersWith, hash string) error {
	if snapshot, ok := etcd.RestoringSnapshot(sts); ok {
		r.log.Printf("%s: starting its members, which restore snapshot %s first", key, snapshot)
	} else {
		r.log.Printf("%s: starting its members", key)
	}
	env := r.env(sts, with)
	m, err := runEtcdMembers(ctx, env, sts, secrets)
	if err != nil {
		releasePorts(env.prior)
		return fmt.Errorf("running its members: %w", err)
	}
	return r.runs(ctx, key, &runningEtcd{uid: sts.UID, template: hash, members: m})
}

// runs records cur as running once its ports are kept for the next run and its pods' ports
// lead to it.
func (r *etcdRunner) runs(ctx context.Context, key string, cur *runningEtcd) error {
	fail := func(err error) error {
		cur.members.Stop()
		cur.members.releasePorts()
		return err
	}
	if err := savePorts(cur.members.env.dir, cur.members.ports); err != nil {
		return fail(err)
	}
	unforward, err := cur.members.ForwardMembers(ctx, r.stack)
	if err != nil {
		return fail(err)
	}
	cur.unforward = unforward
	r.mu.Lock()
	r.running[key] = cur
	r.mu.Unlock()
	for _, e := range cur.members.Members() {
		r.log.Printf("%s: member %s runs, pod ports %v lead to it on loopback (logs/etcd-%s-%s.log)", key, e.Name, e.Ports, cur.members.Namespace, e.Name)
	}
	r.enqueueAgents(cur.members.Namespace)
	return nil
}

// roll restarts the members one at a time with what sts says now, each once the one before
// is ready again, on the same ports and data. A change of the replicas is not followed: etcd
// adds and removes members through its API, which the server does not do.
func (r *etcdRunner) roll(ctx context.Context, key string, cur *runningEtcd, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret, with EtcdMembersWith, hash string) error {
	if sts.Spec.Replicas != nil && int(*sts.Spec.Replicas) != len(cur.members.members) {
		r.log.Printf("%s: %d replicas asked for, %d members run: a change of the members is not followed", key, *sts.Spec.Replicas, len(cur.members.members))
		cur.template = hash
		return nil
	}
	env := cur.members.env
	env.prior = cur.members.ports
	env.with = with
	next, err := planEtcdMembers(env, sts, secrets, FreePort)
	if err != nil {
		return fmt.Errorf("planning its members anew: %w", err)
	}
	r.log.Printf("%s: its pod template changed: restarting its members one at a time", key)
	for i, mem := range next.members {
		cur.members.stopMember(i)
		err := next.start(ctx, i)
		if err == nil {
			err = next.waitMemberReady(ctx, i)
		}
		if err != nil {
			// What runs is neither the old set nor the new one: the next sync starts over,
			// on the same data.
			r.stopMembers(ctx, key, cur)
			next.Stop()
			next.releasePorts()
			return fmt.Errorf("restarting member %s: %w", mem.name, err)
		}
		r.log.Printf("%s: member %s runs again with the new template", key, mem.name)
	}
	return r.runs(ctx, key, &runningEtcd{uid: cur.uid, template: hash, members: next})
}

// restartEnded starts every member of cur that ended again, on its data, as kubelet restarts
// a container that ended.
func (r *etcdRunner) restartEnded(ctx context.Context, key string, cur *runningEtcd) error {
	for i, e := range cur.members.Members() {
		if e.Running {
			continue
		}
		r.log.Printf("%s: member %s ended: starting it again", key, e.Name)
		if err := cur.members.Start(ctx, i); err != nil {
			return fmt.Errorf("starting member %s again: %w", e.Name, err)
		}
		r.log.Printf("%s: member %s runs again", key, e.Name)
	}
	return nil
}

// stopMembers stops cur's members and ends their forwards; the data of a StatefulSet that is
// gone goes too, as its claims would.
func (r *etcdRunner) stopMembers(ctx context.Context, key string, cur *runningEtcd) {
	cur.members.Stop()
	cur.members.releasePorts()
	if cur.unforward != nil {
		if err := cur.unforward(ctx); err != nil {
			r.log.Printf("%s: ending its pods' forwards: %v", key, err)
		}
	}
	r.mu.Lock()
	delete(r.running, key)
	r.mu.Unlock()
	r.log.Printf("%s: stopped its members", key)
	r.enqueueAgents(cur.members.Namespace)
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	if sts, err := r.lister.StatefulSets(ns).Get(name); err == nil && sts.UID == cur.uid && sts.DeletionTimestamp == nil {
		return
	}
	if err := os.RemoveAll(cur.members.env.dir); err != nil {
		r.log.Printf("%s: removing its members' data: %v", key, err)
	}
}

// savedPort is a member's loopback port, as ports.json keeps it.
type savedPort struct {
	Member int `json:"member"`
	Port   int `json:"port"`
	Local  int `json:"local"`
}

// loadPorts reads the ports a member set had in dir; none when there is no record.
func loadPorts(dir string) map[memberPort]int {
	data, err := os.ReadFile(filepath.Join(dir, "ports.json"))
	if err != nil {
		return nil
	}
	var saved []savedPort
	if json.Unmarshal(data, &saved) != nil {
		return nil
	}
	out := map[memberPort]int{}
	for _, s := range saved {
		out[memberPort{s.Member, s.Port}] = s.Local
	}
	return out
}

// savePorts records ports in dir for the next run of a kept stack.
func savePorts(dir string, ports map[memberPort]int) error {
	var saved []savedPort
	for mp, p := range ports {
		saved = append(saved, savedPort{mp.member, mp.port, p})
	}
	slices.SortFunc(saved, func(a, b savedPort) int { return a.Member*100000 + a.Port - b.Member*100000 - b.Port })
	data, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	return WriteFiles(map[string][]byte{filepath.Join(dir, "ports.json"): data})
}
