package localstack

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// EtcdMembers are the members of an etcd StatefulSet run as local processes, since kwok only
// pretends to run its pods: each member's container command and args as kubelet would expand
// them, with the Secrets the container mounts written to a directory of the member's, the
// claim of its data volume a directory of its own, and every address the args name (the
// members' stable DNS names, the listen addresses) mapped to a port on loopback of the
// member and container port. Nothing else is changed: a flag the harness does not know how
// to map (a path outside every mount, a host that is not a member, a config file, discovery)
// fails RunEtcdMembers, so that a change of the StatefulSet cannot silently run something
// else than what the pods would.
type EtcdMembers struct {
	// Namespace and StatefulSet name the StatefulSet the members are of.
	Namespace, StatefulSet string

	env     etcdMembersEnv
	members []*etcdMember
	// ports are the loopback ports by member and container port.
	ports map[memberPort]int
	// hosts are the names each member answers to in the cluster, by ordinal (memberHosts).
	hosts map[string]int

	mu sync.Mutex
}

// EtcdMember is one member, as it runs on loopback.
type EtcdMember struct {
	// Name is the member's pod name, and its etcd name when the args say so.
	Name string
	// ClientURL, PeerURL and MetricsURL are where the member's ports 2379, 2380 and 2381
	// lead on loopback; empty when the member does not listen on that port.
	ClientURL, PeerURL, MetricsURL string
	// Ports maps each container port the member listens on to its loopback port.
	Ports map[int]int
	// Args are the args the member runs with, after the mapping.
	Args []string
	// Running says whether the member's process runs.
	Running bool
}

type etcdMember struct {
	name string
	args []string
	proc *Process
	// inits are the pod's init containers, run to completion before each start of the pod
	// (not after a crash of the member alone, as kubelet restarts a container).
	inits []containerRun
}

// containerRun is a container of a pod as the harness runs it: the binary, its args and its
// environment after the mapping.
type containerRun struct {
	name, bin string
	args, env []string
}

type memberPort struct {
	member, port int
}

// The ports of the design (docs/etcd.md, "The member").
const (
	etcdClientPort  = 2379
	etcdPeerPort    = 2380
	etcdMetricsPort = 2381
)

// etcdMembersEnv is where members run: their files, their logs, the binary, and how their
// processes are kept track of.
type etcdMembersEnv struct {
	dir, logDir, bin string
	// track is told of every process a member starts, with the one it replaces (nil at
	// first), so that the stack stops them all and shows their logs.
	track func(old, p *Process)
	// prior are ports to keep, by member and container port: a member's ports when it runs
	// again, so that the addresses the other members and its data know stay true.
	prior map[memberPort]int
	// agentBin is the server's binary, which runs the members' restore init container.
	agentBin string
	// with is what the members reach beyond their StatefulSet.
	with EtcdMembersWith
}

// EtcdMembersWith is what a StatefulSet's pods reach beyond the Secrets they mount: the
// ConfigMaps they mount (an S3 store's CA bundle, for a restore) and the backup agents run as
// processes (RunEtcdBackupAgent), which a restore init container reads its snapshot from by
// the agent's Service name.
type EtcdMembersWith struct {
	ConfigMaps map[string]*corev1.ConfigMap
	Agents     []*EtcdAgent
}

// RunEtcdMembers runs every member of sts (Secrets by name, as the cluster holds them) with
// the stack's etcd binary, and returns once every member is ready (etcd's /readyz on its
// metrics port, or its client port when there is none). The stack stops them, and dumps
// their logs (logs/etcd-<namespace>-<pod>.log), with its other components; Stop stops them
// earlier.
func (s *Stack) RunEtcdMembers(ctx context.Context, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret) (*EtcdMembers, error) {
	return s.RunEtcdMembersWith(ctx, sts, secrets, EtcdMembersWith{})
}

// RunEtcdMembersWith is RunEtcdMembers for pods that reach more than their Secrets: the
// ConfigMaps they mount and the backup agents their restore init container reads from. The
// pod template's init containers (the restore, `kcp-setups-apiserver etcd-agent restore`)
// run to completion before each member starts, their args mapped as the member's, their
// output in logs/etcd-<namespace>-<pod>-<container>.log; one that fails fails the start.
func (s *Stack) RunEtcdMembersWith(ctx context.Context, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret, with EtcdMembersWith) (*EtcdMembers, error) {
	return runEtcdMembers(ctx, etcdMembersEnv{
		dir: s.Path("etcd-members", sts.Namespace+"-"+sts.Name), logDir: s.Path("logs"), bin: s.Bin("etcd"),
		agentBin: s.Bin(etcd.AgentCommand), track: s.Track, with: with,
	}, sts, secrets)
}

func runEtcdMembers(ctx context.Context, env etcdMembersEnv, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret) (*EtcdMembers, error) {
	m, err := planEtcdMembers(env, sts, secrets, FreePort)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(env.logDir, 0o700); err != nil {
		return nil, err
	}
	for i := range m.members {
		if err := m.start(ctx, i); err != nil {
			m.Stop()
			return nil, err
		}
	}
	if err := m.WaitReady(ctx); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

// planEtcdMembers writes every member's files and works out its args, with ports from
// allocate.
func planEtcdMembers(env etcdMembersEnv, sts *appsv1.StatefulSet, secrets map[string]*corev1.Secret, allocate func() (int, error)) (*EtcdMembers, error) {
	replicas := int32(1)
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	if replicas < 1 {
		return nil, fmt.Errorf("StatefulSet %s/%s has no replicas to run", sts.Namespace, sts.Name)
	}
	container, err := etcdContainer(sts)
	if err != nil {
		return nil, err
	}
	m := &EtcdMembers{Namespace: sts.Namespace, StatefulSet: sts.Name, env: env, ports: map[memberPort]int{}}
	hosts := memberHosts(sts, int(replicas))
	m.hosts = hosts
	listened := map[memberPort]bool{}
	named := map[memberPort]string{}
	for i := range int(replicas) {
		pod := fmt.Sprintf("%s-%d", sts.Name, i)
		args, inits, err := m.memberArgs(sts, container, secrets, i, pod, hosts, allocate, listened, named)
		if err != nil {
			return nil, fmt.Errorf("member %s: %w", pod, err)
		}
		m.members = append(m.members, &etcdMember{name: pod, args: args, inits: inits})
	}
	// A member's address that no member listens on would lead nowhere in the cluster too;
	// say so rather than let etcd time out.
	for _, mp := range sortedMemberPorts(named) {
		if !listened[mp] {
			return nil, fmt.Errorf("%s names port %d of %s-%d, where that member does not listen", named[mp], mp.port, sts.Name, mp.member)
		}
	}
	return m, nil
}

// etcdContainer finds the container named etcd, and refuses what the harness does not run
// as the pod would.
func etcdContainer(sts *appsv1.StatefulSet) (*corev1.Container, error) {
	spec := &sts.Spec.Template.Spec
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "etcd" })
	if i < 0 {
		return nil, fmt.Errorf("StatefulSet %s/%s has no container named etcd", sts.Namespace, sts.Name)
	}
	c := &spec.Containers[i]
	if len(c.Command) == 0 || path.Base(c.Command[0]) != "etcd" {
		return nil, fmt.Errorf("the etcd container's command %q does not run etcd itself", c.Command)
	}
	if len(c.EnvFrom) > 0 {
		return nil, errors.New("the etcd container takes environment from envFrom, which the harness does not map")
	}
	for _, e := range c.Env {
		// etcd reads its flags from ETCD_<FLAG> too, past the mapping of the args.
		if strings.HasPrefix(e.Name, "ETCD_") {
			return nil, fmt.Errorf("the etcd container sets %s, a flag the harness would not map", e.Name)
		}
	}
	return c, nil
}

// memberHosts maps every name a member's pod answers to in the cluster (the stable DNS name
// <pod>.<headless>.<namespace>.svc.<domain> and its shorter forms) to its ordinal; a name
// with any cluster domain is accepted in memberOrdinal.
func memberHosts(sts *appsv1.StatefulSet, replicas int) map[string]int {
	hosts := map[string]int{}
	for i := range replicas {
		pod := fmt.Sprintf("%s-%d", sts.Name, i)
		if sts.Spec.ServiceName == "" {
			continue
		}
		base := pod + "." + sts.Spec.ServiceName
		for _, h := range []string{base, base + "." + sts.Namespace, base + "." + sts.Namespace + ".svc"} {
			hosts[h] = i
		}
	}
	return hosts
}

// memberOrdinal is the ordinal of the member host names, or -1.
func memberOrdinal(hosts map[string]int, sts *appsv1.StatefulSet, host string) int {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if i, ok := hosts[host]; ok {
		return i
	}
	// <pod>.<headless>.<ns>.svc.<cluster domain>
	prefix, domain, found := strings.Cut(host, ".svc.")
	if found && domain != "" {
		if i, ok := hosts[prefix+".svc"]; ok {
			return i
		}
	}
	return -1
}

// memberArgs expands, parses and maps the args of member i and of its init containers,
// writing its volumes.
func (m *EtcdMembers) memberArgs(sts *appsv1.StatefulSet, c *corev1.Container, secrets map[string]*corev1.Secret, i int, pod string,
	hosts map[string]int, allocate func() (int, error), listened map[memberPort]bool, named map[memberPort]string,
) ([]string, []containerRun, error) {
	dir := filepath.Join(m.env.dir, pod)
	mounts, err := writeMemberVolumes(dir, sts, c, secrets, m.env.with.ConfigMaps)
	if err != nil {
		return nil, nil, err
	}
	vars, err := containerVars(c, sts.Namespace, pod)
	if err != nil {
		return nil, nil, err
	}
	var raw []string
	for _, a := range append(slices.Clone(c.Command[1:]), c.Args...) {
		expanded, err := expandVars(a, vars)
		if err != nil {
			return nil, nil, err
		}
		raw = append(raw, expanded)
	}
	parsed, err := parseEtcdArgs(raw)
	if err != nil {
		return nil, nil, err
	}
	portFor := func(mp memberPort) (int, error) {
		if p, ok := m.ports[mp]; ok {
			return p, nil
		}
		if p, ok := m.env.prior[mp]; ok {
			m.ports[mp] = p
			return p, nil
		}
		p, err := allocate()
		if err != nil {
			return 0, err
		}
		m.ports[mp] = p
		return p, nil
	}
	mapAddress := func(flagName, host string, port int, listen bool) (string, error) {
		switch {
		case isWildcardHost(host) || isLoopbackHost(host):
			if !listen && isWildcardHost(host) {
				return "", fmt.Errorf("--%s names %s, an address to listen on, where one to reach is due", flagName, net.JoinHostPort(host, strconv.Itoa(port)))
			}
			p, err := portFor(memberPort{i, port})
			if err != nil {
				return "", err
			}
			if listen {
				listened[memberPort{i, port}] = true
			}
			return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
		case memberOrdinal(hosts, sts, host) >= 0:
			j := memberOrdinal(hosts, sts, host)
			if listen {
				// A pod can only listen on its own name's address.
				if j != i {
					return "", fmt.Errorf("--%s listens on %s, the address of another member", flagName, host)
				}
				listened[memberPort{i, port}] = true
			} else if _, ok := named[memberPort{j, port}]; !ok {
				named[memberPort{j, port}] = "--" + flagName
			}
			p, err := portFor(memberPort{j, port})
			if err != nil {
				return "", err
			}
			return net.JoinHostPort("localhost", strconv.Itoa(p)), nil
		default:
			return "", fmt.Errorf("--%s names %s, which is no member of %s and not mapped to loopback", flagName, net.JoinHostPort(host, strconv.Itoa(port)), sts.Name)
		}
	}
	var args []string
	for _, f := range parsed {
		value, err := mapEtcdValue(f, mounts, mapAddress)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--"+f.name+"="+value)
	}
	var inits []containerRun
	for k := range sts.Spec.Template.Spec.InitContainers {
		init := &sts.Spec.Template.Spec.InitContainers[k]
		run, err := m.initRun(dir, sts, init, secrets, pod, func(flagName, host string, port int) (string, error) {
			return mapAddress(flagName, host, port, false)
		})
		if err != nil {
			return nil, nil, fmt.Errorf("init container %s: %w", init.Name, err)
		}
		inits = append(inits, run)
	}
	return args, inits, nil
}

// etcdFlag is one flag of etcd's command line.
type etcdFlag struct {
	name, value string
}

// etcdFlagSet is etcd's own flag set, as its main builds it (server/v3/etcdmain), for what
// the harness parses to follow etcd's rules: which flags exist, which are booleans.
func etcdFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	embed.NewConfig().AddFlags(fs)
	// The flags etcdmain adds to embed's.
	fs.String("config-file", "", "")
	fs.String("discovery-fallback", "", "")
	fs.String("initial-cluster-state", "", "")
	fs.String("v2-deprecation", "", "")
	fs.Bool("version", false, "")
	return fs
}

type boolFlag interface{ IsBoolFlag() bool }

// parseEtcdArgs parses args as etcd's flag set does (Go's flag package: -flag or --flag,
// =value or the next arg as the value unless the flag is a boolean), and returns them in
// order. It refuses what etcd would refuse: an unknown flag, a bad value, a positional arg.
func parseEtcdArgs(args []string) ([]etcdFlag, error) {
	fs := etcdFlagSet()
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("etcd would refuse its args: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("etcd would refuse its args: %q is not a valid flag", fs.Arg(0))
	}
	var out []etcdFlag
	for k := 0; k < len(args); k++ {
		a := args[k]
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		f := fs.Lookup(name)
		if f == nil {
			return nil, fmt.Errorf("unknown flag %q", a) // fs.Parse would have said so
		}
		if !hasValue {
			if b, ok := f.Value.(boolFlag); ok && b.IsBoolFlag() {
				value = "true"
			} else {
				k++
				value = args[k]
			}
		}
		out = append(out, etcdFlag{name: name, value: value})
	}
	return out, nil
}

// refusedEtcdFlags are flags that would configure etcd past the mapping of the args.
var refusedEtcdFlags = []string{"config-file", "discovery", "discovery-srv", "discovery-srv-name", "discovery-endpoints", "discovery-proxy", "discovery-token"}

// hostPort matches a bare host:port, [v6]:port included.
var hostPort = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9.-]*):([0-9]+)$`)

// mapEtcdValue rewrites the paths and addresses of a flag's value.
func mapEtcdValue(f etcdFlag, mounts map[string]string, mapAddress func(flagName, host string, port int, listen bool) (string, error)) (string, error) {
	if slices.Contains(refusedEtcdFlags, f.name) {
		return "", fmt.Errorf("--%s would configure etcd past what the harness maps", f.name)
	}
	listen := strings.HasPrefix(f.name, "listen-")
	v := f.value
	switch {
	case strings.HasPrefix(v, "/"):
		return mapPath(f.name, v, mounts)
	case strings.HasSuffix(f.name, "-file") || strings.HasSuffix(f.name, "-dir") || strings.HasSuffix(f.name, "-path"):
		if v == "" {
			return v, nil
		}
		return "", fmt.Errorf("--%s=%s is a relative path, which the harness does not map", f.name, v)
	case strings.Contains(v, "://"):
		var out []string
		for _, item := range strings.Split(v, ",") {
			// name=URL, as in --initial-cluster.
			prefix := ""
			if eq := strings.Index(item, "="); eq >= 0 && eq < strings.Index(item, "://") {
				prefix, item = item[:eq+1], item[eq+1:]
			}
			u, err := url.Parse(item)
			if err != nil {
				return "", fmt.Errorf("--%s: %w", f.name, err)
			}
			if u.Port() == "" {
				return "", fmt.Errorf("--%s names %s without a port, which the harness does not map", f.name, item)
			}
			port, err := strconv.Atoi(u.Port())
			if err != nil {
				return "", fmt.Errorf("--%s: %w", f.name, err)
			}
			if u.Host, err = mapAddress(f.name, u.Hostname(), port, listen); err != nil {
				return "", err
			}
			out = append(out, prefix+u.String())
		}
		return strings.Join(out, ","), nil
	default:
		var out []string
		for _, item := range strings.Split(v, ",") {
			match := hostPort.FindStringSubmatch(item)
			if match == nil {
				// Not an address: a name, a number, a duration, a mode.
				return v, nil
			}
			port, err := strconv.Atoi(match[2])
			if err != nil {
				return "", err
			}
			mapped, err := mapAddress(f.name, strings.Trim(match[1], "[]"), port, listen)
			if err != nil {
				return "", err
			}
			out = append(out, mapped)
		}
		return strings.Join(out, ","), nil
	}
}

// mapPath rewrites an absolute path of the container under the mount that holds it, the
// deepest first.
func mapPath(flagName, p string, mounts map[string]string) (string, error) {
	p = path.Clean(p)
	var best string
	for mp := range mounts {
		if (p == mp || strings.HasPrefix(p, strings.TrimSuffix(mp, "/")+"/")) && len(mp) > len(best) {
			best = mp
		}
	}
	if best == "" {
		return "", fmt.Errorf("--%s=%s is outside every volume the container mounts", flagName, p)
	}
	return filepath.Join(mounts[best], strings.TrimPrefix(p, best)), nil
}

func isWildcardHost(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }

func isLoopbackHost(h string) bool { return h == "localhost" || h == "127.0.0.1" || h == "::1" }

// writeMemberVolumes writes what each of the container's mounts would show into dir (a
// claim template's volume a directory of the member's own), and returns the local directory
// of each mount path (writeVolumes).
func writeMemberVolumes(dir string, sts *appsv1.StatefulSet, c *corev1.Container, secrets map[string]*corev1.Secret, configMaps map[string]*corev1.ConfigMap) (map[string]string, error) {
	templates := map[string]bool{}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		templates[t.Name] = true
	}
	return writeVolumes(dir, podVolumes{volumes: sts.Spec.Template.Spec.Volumes, secrets: secrets, configMaps: configMaps, templates: templates}, c)
}

// containerVars are the variables kubelet expands in command and args: the container's env
// in order, each expanded with those before it; a fieldRef to the pod's name or namespace.
func containerVars(c *corev1.Container, namespace, pod string) (map[string]string, error) {
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			v, err := expandVars(e.Value, vars)
			if err != nil {
				return nil, err
			}
			vars[e.Name] = v
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			vars[e.Name] = pod
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = namespace
		default:
			// Unknown here; an arg that refers to it fails in expandVars.
		}
	}
	return vars, nil
}

// expandVars expands $(VAR) as kubelet does: $$ is a $, and a variable the harness does not
// know fails (kubelet would leave it as it is, which the pod would not mean either).
func expandVars(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for k := 0; k < len(s); k++ {
		if s[k] != '$' || k+1 == len(s) {
			b.WriteByte(s[k])
			continue
		}
		switch s[k+1] {
		case '$':
			b.WriteByte('$')
			k++
		case '(':
			end := strings.IndexByte(s[k:], ')')
			if end < 0 {
				b.WriteString(s[k:])
				return b.String(), nil
			}
			name := s[k+2 : k+end]
			v, ok := vars[name]
			if !ok {
				return "", fmt.Errorf("%q refers to $(%s), which the harness cannot expand", s, name)
			}
			b.WriteString(v)
			k += end
		default:
			b.WriteByte('$')
		}
	}
	return b.String(), nil
}

func sortedMemberPorts(m map[memberPort]string) []memberPort {
	out := make([]memberPort, 0, len(m))
	for mp := range m {
		out = append(out, mp)
	}
	sort.Slice(out, func(a, b int) bool {
		return out[a].member < out[b].member || out[a].member == out[b].member && out[a].port < out[b].port
	})
	return out
}

// start starts member i's process, the same args again when it ran before; before its
// first start, as before a new pod's, its init containers run to completion.
func (m *EtcdMembers) start(ctx context.Context, i int) error {
	mem := m.members[i]
	var (
		p   *Process
		err error
	)
	if mem.proc == nil {
		for _, init := range mem.inits {
			if err := m.runInit(ctx, mem, init); err != nil {
				return err
			}
		}
		p, err = StartProcess(m.env.logDir, "etcd-"+m.Namespace+"-"+mem.name, m.env.bin, mem.args...)
	} else {
		p, err = mem.proc.Rerun()
	}
	if err != nil {
		return err
	}
	if m.env.track != nil {
		m.env.track(mem.proc, p)
	}
	mem.proc = p
	return nil
}

// Members describes every member, in order.
func (m *EtcdMembers) Members() []EtcdMember {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []EtcdMember
	for i, mem := range m.members {
		e := EtcdMember{Name: mem.name, Args: slices.Clone(mem.args), Ports: map[int]int{}}
		for mp, p := range m.ports {
			if mp.member == i {
				e.Ports[mp.port] = p
			}
		}
		if p, ok := e.Ports[etcdClientPort]; ok {
			e.ClientURL = "https://localhost:" + strconv.Itoa(p)
		}
		if p, ok := e.Ports[etcdPeerPort]; ok {
			e.PeerURL = "https://localhost:" + strconv.Itoa(p)
		}
		if p, ok := e.Ports[etcdMetricsPort]; ok {
			e.MetricsURL = "http://127.0.0.1:" + strconv.Itoa(p)
		}
		if mem.proc != nil {
			done, _ := mem.proc.Exited()
			e.Running = !done
		}
		out = append(out, e)
	}
	return out
}

// ClientURLs are the members' client URLs on loopback, in order; the name in them is
// localhost, which the server certificate names.
func (m *EtcdMembers) ClientURLs() []string {
	var out []string
	for _, e := range m.Members() {
		out = append(out, e.ClientURL)
	}
	return out
}

// Kill ends member i at once, as a crashed or evicted pod.
func (m *EtcdMembers) Kill(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.members[i].proc; p != nil {
		p.Kill()
	}
}

// Start starts member i again with its data, after Kill, and returns once it is ready; it
// does nothing while the member runs.
func (m *EtcdMembers) Start(ctx context.Context, i int) error {
	m.mu.Lock()
	if done, _ := m.members[i].proc.Exited(); done {
		if err := m.start(ctx, i); err != nil {
			m.mu.Unlock()
			return err
		}
	}
	m.mu.Unlock()
	return m.waitMemberReady(ctx, i)
}

// stopMember stops member i, when it runs.
func (m *EtcdMembers) stopMember(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.members[i].proc; p != nil {
		p.Stop()
	}
}

// releasePorts lets the members' ports be handed out again, once they stopped.
func (m *EtcdMembers) releasePorts() { releasePorts(m.ports) }

// Stop stops every member; the stack's Stop would too.
func (m *EtcdMembers) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	var wg sync.WaitGroup
	for _, mem := range m.members {
		if mem.proc != nil {
			wg.Go(mem.proc.Stop)
		}
	}
	wg.Wait()
}

// WaitReady waits until every member is ready.
func (m *EtcdMembers) WaitReady(ctx context.Context) error {
	for i := range m.members {
		if err := m.waitMemberReady(ctx, i); err != nil {
			return err
		}
	}
	return nil
}

// waitMemberReady waits until member i answers /readyz on its metrics port (plain HTTP in
// the design), which etcd answers once the member has joined a cluster with a leader.
func (m *EtcdMembers) waitMemberReady(ctx context.Context, i int) error {
	e := m.Members()[i]
	m.mu.Lock()
	p := m.members[i].proc
	m.mu.Unlock()
	if e.MetricsURL == "" {
		return fmt.Errorf("member %s listens on no metrics port (%d) to tell its readiness", e.Name, etcdMetricsPort)
	}
	return Poll(ctx, "etcd member "+e.Name+" to be ready", 2*time.Minute, []*Process{p}, func(ctx context.Context) (bool, error) {
		return HTTPOK(ctx, http.DefaultClient, e.MetricsURL+"/readyz")
	})
}

// ClusterPortForwardResource is kwok's ClusterPortForward: which port of which pods leads to
// which local address.
var ClusterPortForwardResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterportforwards"}

// OnStack is a stack: *Stack, or a type that embeds it (test/framework's).
type OnStack interface{ LocalStack() *Stack }

// LocalStack is s itself.
func (s *Stack) LocalStack() *Stack { return s }

// ForwardMembers makes each port of each member's pod (<statefulset>-<i> in the namespace)
// lead to that member's loopback port through kwok, one ClusterPortForward per pod, so that a
// port-forward through kube-apiserver to the pod (the server's port-forward dialer) reaches
// the member that runs for it. The returned function undoes it.
func (m *EtcdMembers) ForwardMembers(ctx context.Context, s OnStack) (func(context.Context) error, error) {
	var pods []podForward
	for _, e := range m.Members() {
		pods = append(pods, podForward{name: "etcd-" + m.Namespace + "-" + e.Name, pod: e.Name, ports: e.Ports})
	}
	return forwardPods(ctx, s, m.Namespace, "to its member", pods)
}

// podForward is a ClusterPortForward of one pod: each container port to its loopback port.
type podForward struct {
	name, pod string
	ports     map[int]int
}

// forwardPods applies a ClusterPortForward per pod of namespace (kwok selects pods by name),
// and returns the function that deletes them.
func forwardPods(ctx context.Context, s OnStack, namespace, what string, pods []podForward) (func(context.Context) error, error) {
	client := s.LocalStack().Dynamic.Resource(ClusterPortForwardResource)
	var names []string
	undo := func(ctx context.Context) error {
		var errs []error
		for _, name := range names {
			if err := client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, p := range pods {
		var forwards []any
		ports := make([]int, 0, len(p.ports))
		for port := range p.ports {
			ports = append(ports, port)
		}
		sort.Ints(ports)
		for _, port := range ports {
			forwards = append(forwards, map[string]any{
				"ports":  []any{int64(port)},
				"target": map[string]any{"address": "127.0.0.1", "port": int64(p.ports[port])},
			})
		}
		forward := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterPortForward",
			"metadata": map[string]any{"name": p.name},
			"spec": map[string]any{
				"selector": map[string]any{"matchNamespaces": []any{namespace}, "matchNames": []any{p.pod}},
				"forwards": forwards,
			},
		}}
		if _, err := client.Apply(ctx, p.name, forward, ApplyOptions); err != nil {
			return nil, errors.Join(fmt.Errorf("forwarding pod %s/%s %s: %w", namespace, p.pod, what, err), undo(ctx))
		}
		names = append(names, p.name)
	}
	return undo, nil
}
