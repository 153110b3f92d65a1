package localstack

import (
	"context"
	"os"
	"os/exec"
)

// Helm runs the stack's helm (built by hack/tools) as the admin and returns its combined
// output. Helm's configuration, cache and data live in the stack's directory, so nothing of
// the user's home is read or written.
func (s *Stack) Helm(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, s.Bin("helm"), append([]string{"--kubeconfig=" + s.AdminKubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+s.Path("helm", "config"),
		"HELM_CACHE_HOME="+s.Path("helm", "cache"),
		"HELM_DATA_HOME="+s.Path("helm", "data"),
	)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
