package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kcp-setups/apiserver/test/framework"
)

// docBlock is a shell block of the docs: a ```sh (or bash) block, run as a script, or a
// ```console block, whose "$ " lines are run and whose other lines are their output.
type docBlock struct {
	// where is file:line of the opening fence.
	where string
	lang  string
	// run is whether the marker before the fence says to run it; skip is the reason it
	// says not to.
	run  bool
	skip string
	body []string
}

// docMarker is the comment on the line before a fence that says what the docs test does with
// the block: <!-- docs-test: run --> or <!-- docs-test: skip: <why it cannot run locally> -->.
var docMarker = regexp.MustCompile(`^<!-- docs-test: (run|skip: (.+)) -->$`)

// docBlocks reads the shell blocks of a Markdown file; a shell block without a marker is an
// error, so that no new command goes untested unnoticed.
func docBlocks(root, file string) ([]docBlock, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	var blocks []docBlock
	var marker string
	var open *docBlock
	lines := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		switch {
		case open != nil && line == "```":
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			open.body = append(open.body, line)
		case line == "```sh" || line == "```bash" || line == "```console":
			b := docBlock{where: fmt.Sprintf("%s:%d", file, n), lang: strings.TrimPrefix(line, "```")}
			m := docMarker.FindStringSubmatch(marker)
			if m == nil {
				return nil, fmt.Errorf("%s: a shell block without a marker on the line before it (<!-- docs-test: run --> or <!-- docs-test: skip: why -->)", b.where)
			}
			b.run, b.skip = m[1] == "run", m[2]
			open = &b
		case strings.TrimSpace(line) != "":
			marker = strings.TrimSpace(line)
		}
	}
	if open != nil {
		return nil, fmt.Errorf("%s: the block is never closed", open.where)
	}
	return blocks, lines.Err()
}

// TestDocsRunAsWritten is the docs tested like code: it starts a stack as `make run` does,
// and runs every shell block of the README and of docs/ marked to run, in order, as a user
// pasting them into one terminal would (what a block exports, the next one has), from a
// directory laid out as the repository after `make run`. A block fails the test when a
// command in it fails; a console block's commands must print what the block shows. Blocks
// that cannot run locally say why in their marker, and are counted.
func TestDocsRunAsWritten(t *testing.T) {
	parallel(t, alone)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	files := []string{"README.md"}
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, rel)
		}
		return err
	}))
	var blocks []docBlock
	for _, f := range files {
		b, err := docBlocks(root, f)
		require.NoError(t, err)
		blocks = append(blocks, b...)
	}
	var run, skipped []string
	for _, b := range blocks {
		if b.run {
			run = append(run, b.where)
		} else {
			skipped = append(skipped, b.where+" ("+b.skip+")")
		}
	}
	t.Logf("%d shell blocks in %d files: %d run, %d cannot run locally:\n  %s", len(blocks), len(files), len(run), len(skipped), strings.Join(skipped, "\n  "))
	require.NotEmpty(t, run)

	// The working directory is the repository as `make run` leaves it: its files, the tools
	// in _output/bin and the stack's state in _output/run.
	work := t.TempDir()
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "_output" && !strings.HasPrefix(e.Name(), ".") {
			require.NoError(t, os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())))
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(work, "_output"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(root, "_output", "bin"), filepath.Join(work, "_output", "bin")))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	s, err := framework.Start(ctx, framework.LocalUp(filepath.Join(work, "_output", "run")))
	cancel()
	require.NoError(t, err)
	t.Cleanup(s.Stop)

	// A terminal of a user with nothing set up: no KUBECONFIG, no kubeconfig at home, the
	// system's PATH without the project's tools.
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + withoutDir(os.Getenv("PATH"), filepath.Join(root, "_output", "bin")), "LANG=C.UTF-8"}
	for _, b := range blocks {
		if !b.run {
			continue
		}
		if !t.Run(b.where, func(t *testing.T) {
			switch b.lang {
			case "console":
				runConsoleBlock(t, work, env, b)
			default:
				env = runShellBlock(t, work, env, b)
			}
		}) {
			t.Fatalf("stopped at %s: the blocks after it build on it", b.where)
		}
	}
}

// runShellBlock runs b as one bash script in dir with env, failing on its first failing
// command, and returns the environment it leaves, as the terminal would keep it.
func runShellBlock(t *testing.T, dir string, env []string, b docBlock) []string {
	t.Helper()
	envFile := filepath.Join(t.TempDir(), "env")
	script := "set -o errexit -o nounset -o pipefail\n" + strings.Join(b.body, "\n") + "\nenv -0 > " + envFile + "\n"
	out, err := runBash(t, dir, env, script)
	require.NoError(t, err, "%s failed:\n%s\n--- output:\n%s", b.where, strings.Join(b.body, "\n"), out)
	t.Logf("%s:\n%s", b.where, out)
	data, err := os.ReadFile(envFile)
	require.NoError(t, err)
	var next []string
	for _, kv := range strings.Split(string(data), "\x00") {
		if kv != "" && !strings.HasPrefix(kv, "_=") && !strings.HasPrefix(kv, "SHLVL=") {
			next = append(next, kv)
		}
	}
	return next
}

// runConsoleBlock runs each "$ " command of b in dir with env and checks that it prints the
// lines the block shows after it; the exit status is not checked: a console block shows
// refusals too.
func runConsoleBlock(t *testing.T, dir string, env []string, b docBlock) {
	t.Helper()
	var command string
	var want []string
	check := func() {
		if command == "" {
			return
		}
		out, _ := runBash(t, dir, env, command)
		assert.Equal(t, strings.TrimSpace(strings.Join(want, "\n")), strings.TrimSpace(out), "%s: what `%s` prints", b.where, command)
	}
	for _, line := range b.body {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			check()
			command, want = cmd, nil
			continue
		}
		want = append(want, line)
	}
	require.NotEmpty(t, command, "%s: a console block without a $ command", b.where)
	check()
}

// runBash runs script with bash in dir, with exactly env, for at most five minutes, and
// returns what it printed on both streams.
func runBash(t *testing.T, dir string, env []string, script string) (string, error) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// withoutDir is the PATH list path without dir.
func withoutDir(path, dir string) string {
	return strings.Join(slices.DeleteFunc(filepath.SplitList(path), func(p string) bool { return filepath.Clean(p) == dir }), string(filepath.ListSeparator))
}

// TestDocBlocksNeedAMarker: a shell block without a marker is refused, naming where it is;
// a marked one is read with its reason.
func TestDocBlocksNeedAMarker(t *testing.T) {
	parallel(t, alone)
	dir := t.TempDir()
	write := func(content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "doc.md"), []byte(content), 0o600))
	}
	write("# Title\n\n```sh\nkubectl get kcp\n```\n")
	_, err := docBlocks(dir, "doc.md")
	assert.ErrorContains(t, err, "doc.md:3: a shell block without a marker")

	write("<!-- docs-test: skip: needs a cluster -->\n```sh\nkubectl get kcp\n```\n\n<!-- docs-test: run -->\n```console\n$ true\n```\n```yaml\na: b\n```\n")
	blocks, err := docBlocks(dir, "doc.md")
	require.NoError(t, err)
	assert.Equal(t, []docBlock{
		{where: "doc.md:2", lang: "sh", skip: "needs a cluster", body: []string{"kubectl get kcp"}},
		{where: "doc.md:7", lang: "console", run: true, body: []string{"$ true"}},
	}, blocks, "a yaml block is no shell block")
}
