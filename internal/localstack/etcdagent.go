package localstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// EtcdAgent is a managed etcd's backup agent (the Deployment `<base>-etcd-backup`) run as a
// local process, since kwok only pretends to run its pod: its container's args as kubelet
// would expand them, with the Secrets and ConfigMaps it mounts written to files, the claim of
// its snapshot volume a directory of the claim's own (which outlives the agent, as the claim
// does), the members it names (--endpoints) led to the running members' loopback client
// ports, and its listen address a free loopback port. What the harness cannot map as the pod
// would run it (another command, a flag it does not know, a path outside the mounts, a host
// that is no member) fails RunEtcdBackupAgent.
type EtcdAgent struct {
	// Namespace and Deployment name the Deployment the agent is of; Service is the Service a
	// restore reaches it by, named as the Deployment (etcd.Cluster.AgentName).
	Namespace, Deployment, Service string
	// URL is the agent's address on loopback, https://localhost:<port>, a name its
	// certificate carries.
	URL string
	// Ports maps each container port the agent listens on to its loopback port.
	Ports map[int]int
	// Args are the args it runs with, after the mapping.
	Args []string
	// Claims are the directories of the claims its pod mounts, by claim name: the volume
	// store's snapshots are files there.
	Claims map[string]string

	selector map[string]string
	proc     *Process
}

// etcdAgentEnv is where an agent runs: its files, the claims' directories, its log, the
// binary, and how its process is kept track of.
type etcdAgentEnv struct {
	dir, claimsDir, logDir, bin string
	track                       func(old, p *Process)
}

// RunEtcdBackupAgent runs the backup agent of dep (Secrets and ConfigMaps by name, as the
// cluster holds them) with the stack's kcp-setups-apiserver, against members (the etcd its
// --endpoints name), and returns once it accepts connections (its pod's readiness probe). The
// stack stops it with its other components and shows its log
// (logs/etcd-agent-<namespace>-<deployment>.log); Stop stops it earlier.
func (s *Stack) RunEtcdBackupAgent(ctx context.Context, dep *appsv1.Deployment, secrets map[string]*corev1.Secret,
	configMaps map[string]*corev1.ConfigMap, members *EtcdMembers,
) (*EtcdAgent, error) {
	var member func(flagName, host string, port int) (string, error)
	if members != nil {
		member = members.memberAddress
	}
	return runEtcdAgent(ctx, etcdAgentEnv{
		dir: s.Path("etcd-agents", dep.Namespace+"-"+dep.Name), claimsDir: s.Path("claims", dep.Namespace),
		logDir: s.Path("logs"), bin: s.Bin(etcd.AgentCommand), track: s.Track,
	}, dep, secrets, configMaps, member)
}

// runEtcdAgent runs the agent of dep in env, its members' addresses led where member says,
// and returns once it accepts connections.
func runEtcdAgent(ctx context.Context, env etcdAgentEnv, dep *appsv1.Deployment, secrets map[string]*corev1.Secret,
	configMaps map[string]*corev1.ConfigMap, member func(flagName, host string, port int) (string, error),
) (*EtcdAgent, error) {
	a, run, err := planEtcdAgent(env, dep, secrets, configMaps, member, FreePort)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(env.logDir, 0o700); err != nil {
		a.releasePorts()
		return nil, err
	}
	if a.proc, err = StartProcessWithEnv(env.logDir, "etcd-agent-"+dep.Namespace+"-"+dep.Name, run.bin, run.env, run.args...); err != nil {
		a.releasePorts()
		return nil, err
	}
	if env.track != nil {
		env.track(nil, a.proc)
	}
	if err := a.waitAccepting(ctx); err != nil {
		a.Stop()
		return nil, err
	}
	return a, nil
}

// waitAccepting waits until the agent accepts connections (its pod's readiness probe).
func (a *EtcdAgent) waitAccepting(ctx context.Context) error {
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Ports[etcd.AgentPort]))
	return Poll(ctx, "the backup agent "+a.Namespace+"/"+a.Deployment+" to accept connections", time.Minute, []*Process{a.proc},
		func(ctx context.Context) (bool, error) {
			conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", listen)
			if err != nil {
				return false, nil
			}
			_ = conn.Close()
			return true, nil
		})
}

// planEtcdAgent writes the agent's files and maps its args, with ports from allocate and
// the members' addresses led where member says (nil refuses them).
func planEtcdAgent(env etcdAgentEnv, dep *appsv1.Deployment, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap,
	member func(flagName, host string, port int) (string, error), allocate func() (int, error),
) (*EtcdAgent, containerRun, error) {
	spec := &dep.Spec.Template.Spec
	fail := func(err error) (*EtcdAgent, containerRun, error) {
		return nil, containerRun{}, fmt.Errorf("backup agent %s/%s: %w", dep.Namespace, dep.Name, err)
	}
	if len(spec.Containers) != 1 || len(spec.InitContainers) > 0 {
		return fail(errors.New("its pod runs other containers than the agent, which the harness does not run"))
	}
	c := &spec.Containers[0]
	if len(c.Command) != 1 || path.Base(c.Command[0]) != etcd.AgentCommand {
		return fail(fmt.Errorf("the command %q is not %s", c.Command, etcd.AgentCommand))
	}
	a := &EtcdAgent{Namespace: dep.Namespace, Deployment: dep.Name, Service: dep.Name, Ports: map[int]int{}, Claims: map[string]string{}}
	if dep.Spec.Selector != nil {
		a.selector = dep.Spec.Selector.MatchLabels
	}
	// The pod's name, for a fieldRef: the harness runs one pod of the Deployment's.
	vars, envVars, err := containerEnv(c, dep.Namespace, dep.Name, secrets, configMaps)
	if err != nil {
		return fail(err)
	}
	raw, err := expandAll(c.Args, vars)
	if err != nil {
		return fail(err)
	}
	command, flags, err := parseAgentArgs(raw)
	if err != nil {
		return fail(err)
	}
	if command != "serve" {
		return fail(fmt.Errorf("etcd-agent %s is not the agent's serve", command))
	}
	if !slices.ContainsFunc(flags, func(f etcdFlag) bool { return f.name == "listen-address" }) {
		return fail(errors.New("it listens on its default address (no --listen-address), which the harness does not map"))
	}
	mounts, err := writeVolumes(env.dir, podVolumes{volumes: spec.Volumes, secrets: secrets, configMaps: configMaps,
		claimDir: func(claim string) (string, error) {
			d := filepath.Join(env.claimsDir, claim)
			a.Claims[claim] = d
			return d, nil
		}}, c)
	if err != nil {
		return fail(err)
	}
	listen := func(flagName, host string, port int) (string, error) {
		if !isWildcardHost(host) && !isLoopbackHost(host) {
			return "", fmt.Errorf("--%s listens on %s, which is not the pod's own address", flagName, host)
		}
		p, err := allocate()
		if err != nil {
			return "", err
		}
		a.Ports[port] = p
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
	}
	args, err := mapAgentArgs(command, flags, mounts, agentAddresses{member: member, listen: listen})
	if err != nil {
		a.releasePorts()
		return fail(err)
	}
	if _, ok := a.Ports[etcd.AgentPort]; !ok {
		a.releasePorts()
		return fail(fmt.Errorf("it does not listen on port %d, which its Service leads to", etcd.AgentPort))
	}
	a.Args = args
	a.URL = "https://localhost:" + strconv.Itoa(a.Ports[etcd.AgentPort])
	return a, containerRun{name: c.Name, bin: env.bin, args: args, env: envVars}, nil
}

// memberAddress is the loopback address of the member that host names, at its container
// port: what the member's own args lead that port to.
func (m *EtcdMembers) memberAddress(flagName, host string, port int) (string, error) {
	i := memberOrdinal(m.hosts, nil, host)
	if i < 0 {
		return "", fmt.Errorf("--%s names %s, which is no member of %s/%s", flagName, net.JoinHostPort(host, strconv.Itoa(port)), m.Namespace, m.StatefulSet)
	}
	m.mu.Lock()
	p, ok := m.ports[memberPort{i, port}]
	m.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("--%s names port %d of %s-%d, where that member does not listen", flagName, port, m.StatefulSet, i)
	}
	return net.JoinHostPort("localhost", strconv.Itoa(p)), nil
}

func (a *EtcdAgent) releasePorts() {
	ports := map[memberPort]int{}
	for port, p := range a.Ports {
		ports[memberPort{0, port}] = p
	}
	releasePorts(ports)
}

// Stop stops the agent; the stack's Stop would too. Its claims' directories stay.
func (a *EtcdAgent) Stop() {
	if a.proc != nil {
		a.proc.Stop()
	}
	a.releasePorts()
}

// Log is the end of the agent's output.
func (a *EtcdAgent) Log() string {
	if a.proc == nil {
		return ""
	}
	return a.proc.Tail(40)
}

// Forward makes the agent's ports on the Deployment's pods lead to the agent through kwok, a
// ClusterPortForward per pod (kwok selects pods by name), so that a port-forward to the pod
// (the server's dialer toward the agent's Service) reaches it, as ForwardMembers does for
// members. It waits until the Deployment has a pod; a pod made later (the Deployment rolled)
// needs Forward again. The returned function undoes it.
func (a *EtcdAgent) Forward(ctx context.Context, s OnStack) (func(context.Context) error, error) {
	var pods []string
	if err := Poll(ctx, "a pod of the Deployment "+a.Namespace+"/"+a.Deployment, 2*time.Minute, []*Process{a.proc},
		func(ctx context.Context) (bool, error) {
			var err error
			pods, err = a.pods(ctx, s)
			return len(pods) > 0, err
		}); err != nil {
		return nil, err
	}
	return a.forwardPods(ctx, s, pods)
}

// pods are the names of the Deployment's pods that are not being deleted, sorted.
func (a *EtcdAgent) pods(ctx context.Context, s OnStack) ([]string, error) {
	if len(a.selector) == 0 {
		return nil, fmt.Errorf("the Deployment %s/%s selects its pods by no labels", a.Namespace, a.Deployment)
	}
	selector := metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: a.selector})
	list, err := s.LocalStack().Kube.CoreV1().Pods(a.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var pods []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p.Name)
		}
	}
	sort.Strings(pods)
	return pods, nil
}

// forwardPods leads the agent's ports on each of pods to it.
func (a *EtcdAgent) forwardPods(ctx context.Context, s OnStack, pods []string) (func(context.Context) error, error) {
	var forwards []podForward
	for _, pod := range pods {
		forwards = append(forwards, podForward{name: "etcd-agent-" + a.Namespace + "-" + pod, pod: pod, ports: a.Ports})
	}
	return forwardPods(ctx, s, a.Namespace, "to the backup agent", forwards)
}
