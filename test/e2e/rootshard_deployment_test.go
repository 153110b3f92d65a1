package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRootShardDeploymentFollowsTheSpec(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "workloads")
	givenRootShard(t, ns)

	kubectl(t, "patch", "rootshard", "root", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":3,"extraArgs":["--v=3"]}}`)
	require.Eventually(t, func() bool {
		out, _ := stack.Kubectl(t.Context(), "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].args[-1]}")
		return out == "3 --v=3"
	}, time.Minute, time.Second, "the Deployment follows spec.replicas and spec.extraArgs")
	waitFor(t, ns, "rootshard/root", "Available")

	// Renewing a certificate (as `cmctl renew` does, here by deleting its Secret) changes the
	// Secret, and the Deployment rolls.
	before := kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.template.metadata.annotations.operator\\.kcp\\.io/secrets-hash}")
	require.NotEmpty(t, before)
	kubectl(t, "delete", "secret", "root-server", "-n", ns)
	require.Eventually(t, func() bool {
		after, _ := stack.Kubectl(t.Context(), "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.template.metadata.annotations.operator\\.kcp\\.io/secrets-hash}")
		return after != "" && after != before
	}, 2*time.Minute, time.Second, "the pod template changes when a mounted Secret changes")
	kubectl(t, "rollout", "status", "deployment/root-kcp", "-n", ns, "--timeout=2m")
	waitFor(t, ns, "rootshard/root", "Available")
}

// TestUsersSecretRollsThePods rotates a Secret the user names (the etcd client TLS): the
// Deployment that mounts it rolls, though the Secret carries no label of ours.
func TestUsersSecretRollsThePods(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "users-secret")
	kubectl(t, "create", "secret", "generic", "etcd-client", "-n", ns,
		"--from-literal=tls.crt=cert", "--from-literal=tls.key=key", "--from-literal=ca.crt=ca")
	givenRootShard(t, ns, withSpec(`    tlsConfig:
      secretRef:
        name: etcd-client
`))
	hash := func() string {
		return kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", "jsonpath={.spec.template.metadata.annotations.operator\\.kcp\\.io/secrets-hash}")
	}
	before := hash()
	require.NotEmpty(t, before)
	kubectl(t, "patch", "secret", "etcd-client", "-n", ns, "-p", `{"stringData":{"tls.crt":"rotated"}}`)
	require.Eventually(t, func() bool { return hash() != before }, time.Minute, time.Second, "the pods roll")
	waitFor(t, ns, "rootshard/root", "Available")
}

// TestEditsOfTheDeploymentAreUndone edits what the controller owns in a Deployment, as
// someone with kubectl edit would: the controller puts it back.
func TestEditsOfTheDeploymentAreUndone(t *testing.T) {
	parallel(t, alone)
	ns := namespace(t, "drift")
	givenRootShard(t, ns)
	args := func() string {
		return kubectl(t, "get", "deployment", "root-kcp", "-n", ns, "-o", `jsonpath={.spec.template.spec.containers[0].args}`)
	}
	before := args()
	kubectl(t, "patch", "deployment", "root-kcp", "-n", ns, "--type=json",
		"-p", `[{"op":"add","path":"/spec/template/spec/containers/0/args/-","value":"--v=9"}]`)
	require.Eventually(t, func() bool { return args() == before }, time.Minute, time.Second, "the edit is undone")
	waitFor(t, ns, "rootshard/root", "Available")
}
