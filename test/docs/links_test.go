// Package docs holds the checks that keep the repository's documentation whole: every
// relative link of every Markdown file reaches a file of the repository (and a heading of it,
// when it names one), no file points outside the repository, the code cites docs that exist,
// the README stays the short page a newcomer reads first, and docs/TESTING.md's table from
// behaviour to end-to-end test lists every test of test/e2e (e2e_table_test.go).
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxReadmeLines is the README's budget: what it is, the two commands, a walk-through, the
// layout and links; everything else lives in docs/ by topic.
const maxReadmeLines = 250

// repoRoot is the repository's top directory, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository's root has the go.mod")
	return root
}

// repoFiles lists the repository's files whose names end in one of suffixes, relative to
// root, leaving out build output, VCS data and hidden directories.
func repoFiles(t *testing.T, root string, suffixes ...string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "_output" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(d.Name(), s) {
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				files = append(files, rel)
				break
			}
		}
		return nil
	}))
	return files
}

// inlineLink is a Markdown inline link or image, [text](target) or ![alt](target), with an
// optional title after the target.
var inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// refDefinition is a reference-style link definition: [label]: target.
var refDefinition = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)

// link is a link target found in a Markdown file, with where it is.
type link struct {
	where  string
	target string
}

// markdownLinks returns the link targets of a Markdown file outside fenced code blocks and
// inline code spans, where a bracket is text, not a link.
func markdownLinks(file string, data []byte) []link {
	var links []link
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = withoutCodeSpans(line)
		where := fmt.Sprintf("%s:%d", file, n)
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			links = append(links, link{where: where, target: m[1]})
		}
		if m := refDefinition.FindStringSubmatch(line); m != nil {
			links = append(links, link{where: where, target: m[1]})
		}
	}
	return links
}

// withoutCodeSpans blanks the inline code spans of a line (`...`), whose brackets and
// parentheses are code.
func withoutCodeSpans(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			b.WriteRune(' ')
			continue
		}
		if in {
			b.WriteRune(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown file.
func headingAnchors(data []byte) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if text == "" || !strings.HasPrefix(line, strings.Repeat("#", len(line)-len(strings.TrimLeft(line, "#")))+" ") {
			continue
		}
		slug := slugify(text)
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// slugify is GitHub's anchor for a heading's text: lower case, letters, digits, spaces
// turned into hyphens, hyphens and underscores kept, everything else dropped.
func slugify(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// checkLinks returns a problem for every relative link of the Markdown file rel (relative
// to root) that leaves the repository, reaches no file, or names a heading its Markdown
// target does not have.
func checkLinks(root, rel string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, l := range markdownLinks(rel, data) {
		u, err := url.Parse(l.target)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: link %q does not parse: %v", l.where, l.target, err))
			continue
		}
		if u.Scheme != "" || u.Host != "" {
			continue // a web address, not a file of the repository
		}
		target := rel
		if u.Path != "" {
			if strings.HasPrefix(u.Path, "/") {
				problems = append(problems, fmt.Sprintf("%s: link %q is absolute: write it relative to the file", l.where, l.target))
				continue
			}
			target = filepath.Join(filepath.Dir(rel), filepath.FromSlash(u.Path))
			if target == ".." || strings.HasPrefix(target, ".."+string(filepath.Separator)) {
				problems = append(problems, fmt.Sprintf("%s: link %q leaves the repository: a clone has only the repository", l.where, l.target))
				continue
			}
			if _, err := os.Stat(filepath.Join(root, target)); err != nil {
				problems = append(problems, fmt.Sprintf("%s: link %q reaches no file (%s)", l.where, l.target, filepath.ToSlash(target)))
				continue
			}
		}
		if u.Fragment == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		targetData, err := os.ReadFile(filepath.Join(root, target))
		if err != nil {
			return nil, err
		}
		if !headingAnchors(targetData)[u.Fragment] {
			problems = append(problems, fmt.Sprintf("%s: link %q names no heading of %s", l.where, l.target, filepath.ToSlash(target)))
		}
	}
	return problems, nil
}

// TestMarkdownLinksStayInTheRepository: every relative link of every Markdown file of the
// repository (the README, docs/, the chart's, the test data's) reaches a file of the
// repository, and a heading of it where the link names one.
func TestMarkdownLinksStayInTheRepository(t *testing.T) {
	root := repoRoot(t)
	files := repoFiles(t, root, ".md")
	require.Contains(t, files, "README.md")
	require.Contains(t, files, filepath.Join("docs", "API.md"))
	var problems []string
	for _, f := range files {
		p, err := checkLinks(root, f)
		require.NoError(t, err)
		problems = append(problems, p...)
	}
	assert.Empty(t, problems, "broken or outward links:\n%s", strings.Join(problems, "\n"))
}

// TestNothingPointsOutsideTheRepository: no document, comment, script or manifest names
// the design folder beside the repository, which a user's clone does not have.
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	root := repoRoot(t)
	// Built from parts, so that this file does not name what it looks for.
	outside := []string{".." + "/shared", "shared" + "/docs"}
	var problems []string
	for _, f := range repoFiles(t, root, ".md", ".go", ".sh", ".yaml", ".yml", ".json", ".tpl", ".txt", "Makefile", "run") {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for n, line := range strings.Split(string(data), "\n") {
			for _, o := range outside {
				if strings.Contains(line, o) {
					problems = append(problems, fmt.Sprintf("%s:%d: names %s", f, n+1, o))
				}
			}
		}
	}
	assert.Empty(t, problems, "files that point outside the repository:\n%s", strings.Join(problems, "\n"))
}

// docCitation is a doc of the repository that a comment names: docs/WORKLOADS.md, docs/etcd.md.
var docCitation = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:docs/)?[A-Za-z0-9_-]+(?:/[A-Za-z0-9_-]+)*\.md)\b`)

// TestCodeCitesDocsThatExist: a Go file that names a Markdown file names it by its path from
// the repository's root (docs/WORKLOADS.md, not WORKLOADS.md), and that file exists; a
// README.md is the one name a comment may use alone (a directory's own README).
func TestCodeCitesDocsThatExist(t *testing.T) {
	root := repoRoot(t)
	var problems []string
	for _, f := range repoFiles(t, root, ".go") {
		if strings.Contains(f, "zz_generated") || strings.HasPrefix(f, filepath.Join("pkg", "generated")) {
			continue // generated from upstream types, whose comments name upstream docs
		}
		if filepath.Dir(f) == filepath.Join("test", "docs") {
			continue // this package's own cases name files that do not exist on purpose
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		for n, line := range strings.Split(string(data), "\n") {
			for _, m := range docCitation.FindAllStringSubmatch(line, -1) {
				cited := m[1]
				switch {
				case cited == "README.md" || strings.HasSuffix(cited, "/README.md") || cited == "doc.md":
					continue // a directory's README, or a test's own scratch file
				case !strings.HasPrefix(cited, "docs/"):
					problems = append(problems, fmt.Sprintf("%s:%d: cites %s: name it by its path from the repository's root (docs/…)", f, n+1, cited))
				default:
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(cited))); err != nil {
						problems = append(problems, fmt.Sprintf("%s:%d: cites %s, which does not exist", f, n+1, cited))
					}
				}
			}
		}
	}
	assert.Empty(t, problems, "citations of docs:\n%s", strings.Join(problems, "\n"))
}

// TestReadmeIsShort: the README is what a newcomer reads first, at most maxReadmeLines lines,
// and it keeps the two commands of a fresh machine.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	lines := strings.Count(string(data), "\n")
	if !bytes.HasSuffix(data, []byte("\n")) {
		lines++
	}
	assert.LessOrEqual(t, lines, maxReadmeLines, "README.md has %d lines: move detail into docs/ by topic", lines)
	for _, command := range []string{"make run", "make test"} {
		assert.Contains(t, string(data), command, "the README names the set-up command")
	}
}

// The checks themselves, on files made for them: each kind of fault is found, and good
// links pass.
func TestCheckLinksFindsEachFault(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(content), 0o600))
	}
	write("docs/topic.md", "# Topic\n\n## Taking over a running setup\n\n## Taking over a running setup\n")
	write("docs/chart.svg", "<svg/>")
	write("README.md", strings.Join([]string{
		"# Title",
		"[ok](docs/topic.md) [ok](docs/topic.md#taking-over-a-running-setup) [ok](docs/topic.md#taking-over-a-running-setup-1)",
		"![ok](docs/chart.svg) [ok](#title) [web](https://kcp.io/docs) [mail](mailto:a@b.c)",
		"[missing](docs/nothing.md)",
		"[outside](../" + "shared" + "/docs/API.md)",
		"[absolute](/etc/passwd)",
		"[no heading](docs/topic.md#differences)",
		"[no local heading](#nowhere)",
		"`[code](docs/nothing.md)` is code, not a link",
		"```",
		"[fenced](docs/nothing.md)",
		"```",
		"[ref]: docs/gone.md",
	}, "\n")+"\n")
	problems, err := checkLinks(root, "README.md")
	require.NoError(t, err)
	want := []string{
		`README.md:4: link "docs/nothing.md" reaches no file`,
		`README.md:5: link "../` + `shared` + `/docs/API.md" leaves the repository`,
		`README.md:6: link "/etc/passwd" is absolute`,
		`README.md:7: link "docs/topic.md#differences" names no heading`,
		`README.md:8: link "#nowhere" names no heading`,
		`README.md:13: link "docs/gone.md" reaches no file`,
	}
	require.Len(t, problems, len(want), "%s", strings.Join(problems, "\n"))
	for i, w := range want {
		assert.Contains(t, problems[i], w)
	}
}

func TestSlugifyIsGitHubs(t *testing.T) {
	for heading, anchor := range map[string]string{
		"Taking over a running kcp-operator setup":               "taking-over-a-running-kcp-operator-setup",
		"Credentials on demand: the `kubeconfig` subresource":    "credentials-on-demand-the-kubeconfig-subresource",
		"VirtualWorkspace: standalone virtual workspace servers": "virtualworkspace-standalone-virtual-workspace-servers",
		"Mapping to kcp-operator's chart":                        "mapping-to-kcp-operators-chart",
		"The kubectl plugin: `kubectl kcp-setups`":               "the-kubectl-plugin-kubectl-kcp-setups",
		"1.1 Summary of the version gates (v0.30.0 → v0.32.3)":   "11-summary-of-the-version-gates-v0300--v0323",
		"snake_case and CamelCase":                               "snake_case-and-camelcase",
	} {
		assert.Equal(t, anchor, slugify(heading), heading)
	}
}
