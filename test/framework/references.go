package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kcp-setups/apiserver/internal/localstack"
)

// The docs' one-liner copies this Secret from namespace a into namespace b; CopyReferenceSecret
// runs it with the Secret, namespaces and clusters of the test put in their place.
const (
	docsFile       = "docs/references.md"
	readmeSection  = "## Copying a reference Secret"
	readmeSecret   = "root-shard-join"
	readmeFrom     = " -n a "
	readmeTo       = " -n b "
	readmeKubectl  = "kubectl "
	readmeGet      = readmeKubectl + "get secret " + readmeSecret + readmeFrom
	readmePipeline = " | " + readmeKubectl
)

// CopyReferenceSecret copies the reference Secret name from namespace fromNS of the stack
// src into namespace toNS of the stack dst (src itself for a copy across namespaces), with
// the one-liner of docs/references.md ("Copying a reference Secret") run as it is written: its
// kubectl on each side is the stack's, as `--context` would choose a cluster. So a test that
// uses it proves the docs' copy step. It returns what the pipeline printed.
func CopyReferenceSecret(ctx context.Context, src *Stack, fromNS, name string, dst *Stack, toNS string) (string, error) {
	line, err := readmeCopyLine()
	if err != nil {
		return "", err
	}
	get, apply, _ := strings.Cut(line, readmePipeline)
	get = strings.Replace(strings.Replace(get, readmeSecret, name, 1), readmeFrom, " -n "+fromNS+" ", 1)
	apply = strings.Replace(apply, readmeTo, " -n "+toNS+" ", 1)
	script := src.kubectlShell() + " " + strings.TrimPrefix(get, readmeKubectl) + " | " + dst.kubectlShell() + " " + apply
	out, err := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", script).CombinedOutput()
	// The pipeline's Secret passes between the two kubectls; the recorder sees what apply said.
	dst.Recorder.Kubectl([]string{"get", "secret", name, "-n", fromNS, "|", "apply", "-n", toNS, "-f", "-"}, string(out))
	if err != nil {
		return string(out), fmt.Errorf("copying Secret %s/%s to %s: %w: %s", fromNS, name, toNS, err, out)
	}
	return string(out), nil
}

// readmeCopyLine is the copy one-liner of docs/references.md's section "Copying a reference
// Secret": the line that gets the Secret root-shard-join of namespace a and applies it in b.
// It fails when the page no longer has it in that shape, so that the test and the docs change
// together.
func readmeCopyLine() (string, error) {
	root, err := localstack.RepoRoot()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(docsFile)))
	if err != nil {
		return "", err
	}
	_, section, found := bytes.Cut(data, []byte("\n"+readmeSection+"\n"))
	if !found {
		return "", fmt.Errorf("%s has no section %q", docsFile, readmeSection)
	}
	sc := bufio.NewScanner(bytes.NewReader(section))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, readmeGet) {
			continue
		}
		get, apply, ok := strings.Cut(line, readmePipeline)
		if !ok || strings.Contains(apply, readmePipeline) || strings.Count(get, readmeSecret) != 1 ||
			strings.Count(apply, readmeTo) != 1 || !strings.HasPrefix(apply, "apply ") {
			return "", fmt.Errorf("%s's copy one-liner is not `%s... | kubectl apply ...%s-f -` any more: %s", docsFile, readmeGet, readmeTo, line)
		}
		return line, nil
	}
	return "", fmt.Errorf("%s's section %q has no line starting with %q", docsFile, readmeSection, readmeGet)
}

// kubectlShell is the stack's kubectl as the admin, quoted for a shell.
func (s *Stack) kubectlShell() string {
	words := []string{shellQuote(s.Bin("kubectl"))}
	for _, f := range s.KubectlFlags(s.AdminKubeconfig) {
		words = append(words, shellQuote(f))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
