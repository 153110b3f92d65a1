package framework

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// Helm runs the stack's helm (built by hack/tools) as the admin and returns its combined
// output. Helm's configuration, cache and data live in the stack's directory, so nothing of
// the user's home is read or written.
func (s *Stack) Helm(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.bin("helm"), append([]string{"--kubeconfig=" + s.AdminKubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+s.path("helm", "config"),
		"HELM_CACHE_HOME="+s.path("helm", "cache"),
		"HELM_DATA_HOME="+s.path("helm", "data"),
	)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// KubectlPlugin runs `kubectl kcp ARGS` with the stack's kubectl and the given kubeconfig,
// with _output/bin first on the PATH, so kubectl finds the plugin kubectl-kcp there as it
// would on a user's PATH. It returns standard output and standard error apart.
func (s *Stack) KubectlPlugin(ctx context.Context, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, s.bin("kubectl"), append([]string{"kcp", "--kubeconfig=" + kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+s.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	s.Recorder.kubectl(append([]string{"kcp"}, args...), out.String(), errOut.String())
	return out.String(), errOut.String(), err
}
