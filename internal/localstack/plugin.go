package localstack

import (
	"context"
	"os"
	"os/exec"
	"strings"
)

// KubectlPlugin runs `kubectl kcp-setups ARGS` with the stack's kubectl and the given kubeconfig,
// with _output/bin first on the PATH, so kubectl finds the plugin kubectl-kcp_setups there as it
// would on a user's PATH. It returns standard output and standard error apart.
func (s *Stack) KubectlPlugin(ctx context.Context, kubeconfig string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, s.Bin("kubectl"), append([]string{"kcp-setups", "--kubeconfig=" + kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+s.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	s.observeKubectl(append([]string{"kcp-setups"}, args...), out.String(), errOut.String())
	return out.String(), errOut.String(), err
}
