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

	"github.com/kcp-setups/apiserver/pkg/resources/etcd"
)

// agentFlagKind says how the harness maps a flag of `kcp-setups-apiserver etcd-agent`.
type agentFlagKind int

const (
	// agentValue is kept as it is: a name, a number, a bucket, a region.
	agentValue agentFlagKind = iota
	// agentPath is a path of the container, under one of its mounts.
	agentPath
	// agentMembers are members' URLs ([name=]URL, comma-separated): each host a member's, led
	// to that member's loopback port.
	agentMembers
	// agentListen is where the agent listens: a free loopback port.
	agentListen
	// agentSource is a backup agent's URL by its Service's name: an agent run as a process.
	agentSource
	// agentExternal is a URL outside the cluster (an S3 endpoint): kept, a cluster name refused.
	agentExternal
)

// agentStoreFlags are the flags both commands name a store with.
var agentStoreFlags = map[string]agentFlagKind{
	"snapshot-dir": agentPath, "s3-endpoint": agentExternal, "s3-bucket": agentValue, "s3-prefix": agentValue,
	"s3-region": agentValue, "s3-credentials-dir": agentPath, "s3-ca-file": agentPath,
	"cert-file": agentPath, "key-file": agentPath, "trusted-ca-file": agentPath,
}

// agentFlagKinds are the flags of each command of `etcd-agent` (cmd/apiserver/app), and how
// each is mapped; a flag that is not here is refused (TestAgentFlagKindsAreTheCommands holds
// the table to the commands).
var agentFlagKinds = map[string]map[string]agentFlagKind{
	"serve": withStoreFlags(map[string]agentFlagKind{
		"endpoints": agentMembers, "listen-address": agentListen, "base": agentValue, "retention": agentValue,
	}),
	"restore": withStoreFlags(map[string]agentFlagKind{
		"source": agentSource, "snapshot": agentValue, "data-dir": agentPath, "name": agentValue,
		"initial-advertise-peer-urls": agentMembers, "initial-cluster": agentMembers, "initial-cluster-token": agentValue,
	}),
}

func withStoreFlags(flags map[string]agentFlagKind) map[string]agentFlagKind {
	for name, kind := range agentStoreFlags {
		flags[name] = kind
	}
	return flags
}

// parseAgentArgs parses `etcd-agent <command> --flag=value…` (or --flag value) as cobra
// would, and answers the command and its flags in order. It refuses another command, a
// flag the table does not know, a shorthand and a positional argument.
func parseAgentArgs(args []string) (string, []etcdFlag, error) {
	if len(args) < 2 || args[0] != "etcd-agent" || agentFlagKinds[args[1]] == nil {
		return "", nil, fmt.Errorf("%q is no etcd-agent command the harness runs", args)
	}
	command, known := args[1], agentFlagKinds[args[1]]
	var out []etcdFlag
	for k := 2; k < len(args); k++ {
		a := args[k]
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			return "", nil, fmt.Errorf("etcd-agent %s would refuse %q: not a flag", command, a)
		}
		name, value, hasValue := strings.Cut(name, "=")
		if _, ok := known[name]; !ok {
			return "", nil, fmt.Errorf("etcd-agent %s: unknown flag --%s", command, name)
		}
		if !hasValue {
			if k+1 == len(args) {
				return "", nil, fmt.Errorf("etcd-agent %s: --%s needs a value", command, name)
			}
			k++
			value = args[k]
		}
		out = append(out, etcdFlag{name: name, value: value})
	}
	return command, out, nil
}

// agentAddresses are where the addresses of an agent's flags lead; nil refuses that kind.
type agentAddresses struct {
	// member maps a member's host and port to its loopback address.
	member func(flagName, host string, port int) (string, error)
	// listen maps the address the container listens on.
	listen func(flagName, host string, port int) (string, error)
	// agents are the backup agents run as processes, which agentSource names.
	agents []*EtcdAgent
}

// mapAgentArgs maps the parsed flags of an etcd-agent command: paths under mounts, and
// addresses as addrs says.
func mapAgentArgs(command string, flags []etcdFlag, mounts map[string]string, addrs agentAddresses) ([]string, error) {
	args := []string{"etcd-agent", command}
	for _, f := range flags {
		kind := agentFlagKinds[command][f.name]
		var mapAddress func(flagName, host string, port int, listen bool) (string, error)
		switch kind {
		case agentValue:
			args = append(args, "--"+f.name+"="+f.value)
			continue
		case agentPath:
			if f.value != "" && !strings.HasPrefix(f.value, "/") {
				return nil, fmt.Errorf("--%s=%s is a relative path, which the harness does not map", f.name, f.value)
			}
		case agentMembers:
			mapAddress = func(flagName, host string, port int, _ bool) (string, error) {
				if addrs.member == nil {
					return "", fmt.Errorf("--%s names %s, and no members are given", flagName, host)
				}
				return addrs.member(flagName, host, port)
			}
		case agentListen:
			mapAddress = func(flagName, host string, port int, _ bool) (string, error) {
				return addrs.listen(flagName, host, port)
			}
		case agentSource:
			mapAddress = func(flagName, host string, port int, _ bool) (string, error) {
				return agentAddress(addrs.agents, flagName, host, port)
			}
		case agentExternal:
			mapAddress = func(flagName, host string, port int, _ bool) (string, error) {
				if clusterHost(host) {
					return "", fmt.Errorf("--%s names %s, a name in the cluster that the harness does not map", flagName, host)
				}
				return net.JoinHostPort(host, strconv.Itoa(port)), nil
			}
		}
		if mapAddress == nil {
			mapAddress = func(flagName, host string, port int, _ bool) (string, error) {
				return "", fmt.Errorf("--%s names an address, where a path is due", flagName)
			}
		}
		switch {
		case kind == agentListen && !hostPort.MatchString(f.value),
			(kind == agentMembers || kind == agentSource || kind == agentExternal) && !strings.Contains(f.value, "://"):
			return nil, fmt.Errorf("--%s=%s is not the address the harness maps for it", f.name, f.value)
		}
		value, err := mapEtcdValue(f, mounts, mapAddress)
		if err != nil {
			return nil, err
		}
		args = append(args, "--"+f.name+"="+value)
	}
	return args, nil
}

// clusterHost says whether host is a name that only the cluster's DNS answers: a Service's
// (…svc, …svc.<domain>) or a name of one label.
func clusterHost(host string) bool {
	if net.ParseIP(host) != nil || isLoopbackHost(host) {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return !strings.Contains(host, ".") || strings.HasSuffix(host, ".svc") || strings.Contains(host, ".svc.")
}

// agentAddress is the loopback address of the agent whose Service host names, at port.
func agentAddress(agents []*EtcdAgent, flagName, host string, port int) (string, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range agents {
		if !slices.Contains(serviceNames(a.Service, a.Namespace), host) && !isServiceFQDN(host, a.Service, a.Namespace) {
			continue
		}
		local, ok := a.Ports[port]
		if !ok {
			return "", fmt.Errorf("--%s names port %d of %s, where the agent does not listen", flagName, port, host)
		}
		return net.JoinHostPort("localhost", strconv.Itoa(local)), nil
	}
	return "", fmt.Errorf("--%s names %s, which is no backup agent the harness runs", flagName, net.JoinHostPort(host, strconv.Itoa(port)))
}

// serviceNames are the names a Service answers to in its namespace and from others, but for
// the cluster domain's (isServiceFQDN).
func serviceNames(service, namespace string) []string {
	return []string{service, service + "." + namespace, service + "." + namespace + ".svc"}
}

func isServiceFQDN(host, service, namespace string) bool {
	prefix, domain, found := strings.Cut(host, ".svc.")
	return found && domain != "" && prefix == service+"."+namespace
}

// initRun maps a member's init container: only the restore (`kcp-setups-apiserver etcd-agent
// restore`) is run, with its mounts (the member's claim directory among them) written as the
// member's and its members' addresses mapped as the member's; any other is refused.
func (m *EtcdMembers) initRun(dir string, sts *appsv1.StatefulSet, c *corev1.Container, secrets map[string]*corev1.Secret, pod string,
	member func(flagName, host string, port int) (string, error),
) (containerRun, error) {
	if len(c.Command) != 1 || path.Base(c.Command[0]) != etcd.AgentCommand {
		return containerRun{}, fmt.Errorf("the command %q is not %s, which the harness runs alone", c.Command, etcd.AgentCommand)
	}
	vars, env, err := containerEnv(c, sts.Namespace, pod, secrets, m.env.with.ConfigMaps)
	if err != nil {
		return containerRun{}, err
	}
	raw, err := expandAll(c.Args, vars)
	if err != nil {
		return containerRun{}, err
	}
	command, flags, err := parseAgentArgs(raw)
	if err != nil {
		return containerRun{}, err
	}
	if command != "restore" {
		return containerRun{}, fmt.Errorf("etcd-agent %s is not the restore, which the harness runs before a member", command)
	}
	mounts, err := writeMemberVolumes(dir, sts, c, secrets, m.env.with.ConfigMaps)
	if err != nil {
		return containerRun{}, err
	}
	args, err := mapAgentArgs(command, flags, mounts, agentAddresses{member: member, agents: m.env.with.Agents})
	if err != nil {
		return containerRun{}, err
	}
	return containerRun{name: c.Name, bin: m.env.agentBin, args: args, env: env}, nil
}

// expandAll expands $(VAR) in every arg (expandVars).
func expandAll(args []string, vars map[string]string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		expanded, err := expandVars(a, vars)
		if err != nil {
			return nil, err
		}
		out = append(out, expanded)
	}
	return out, nil
}

// initTimeout is how long an init container may run: a restore reads a whole snapshot.
const initTimeout = 5 * time.Minute

// runInit runs mem's init container to completion, and fails with the end of its output
// when it fails; its log stays (logs/etcd-<namespace>-<pod>-<container>.log) and the stack
// shows it with its other components'.
func (m *EtcdMembers) runInit(ctx context.Context, mem *etcdMember, run containerRun) error {
	p, err := StartProcessWithEnv(m.env.logDir, "etcd-"+m.Namespace+"-"+mem.name+"-"+run.name, run.bin, run.env, run.args...)
	if err != nil {
		return err
	}
	if m.env.track != nil {
		m.env.track(nil, p)
	}
	ctx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	select {
	case <-p.done:
	case <-ctx.Done():
		p.Kill()
		return fmt.Errorf("init container %s of %s did not complete: %w", run.name, mem.name, ctx.Err())
	}
	if p.err != nil {
		_, err := p.Exited()
		return fmt.Errorf("init container %s of %s failed: %w", run.name, mem.name, err)
	}
	return nil
}
