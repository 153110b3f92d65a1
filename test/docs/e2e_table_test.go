package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// behaviourSection is the heading of docs/TESTING.md's table from behaviour to end-to-end test.
const behaviourSection = "## Where each behaviour is tested end to end"

// behaviourRow is a row of the table: a behaviour, the file that tests it (relative to the
// repository's root) and the tests in it that do.
type behaviourRow struct {
	line      int
	behaviour string
	file      string
	tests     []string
}

var (
	// rowLink is the file column's link, [name](../path).
	rowLink = regexp.MustCompile(`^\[[^\]]+\]\(([^)\s]+)\)$`)
	// rowTest is a test in the test column, `TestName`.
	rowTest = regexp.MustCompile("`(Test[A-Za-z0-9_]*)`")
)

// behaviourRows reads the rows of the table under behaviourSection in a Markdown file of
// docs/, up to the next section; file links are resolved against docs/. It returns false when
// the section is missing.
func behaviourRows(markdown string) ([]behaviourRow, []string, bool) {
	var rows []behaviourRow
	var bad []string
	in, found := false, false
	for n, line := range strings.Split(markdown, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == behaviourSection
			found = found || in
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) != 3 {
			bad = append(bad, line)
			continue
		}
		if cells[0] == "behaviour" || cells[0] != "" && strings.Trim(cells[0], "-:") == "" {
			continue // the header and its separator
		}
		link := rowLink.FindStringSubmatch(cells[1])
		var tests []string
		for _, m := range rowTest.FindAllStringSubmatch(cells[2], -1) {
			tests = append(tests, m[1])
		}
		if cells[0] == "" || link == nil || len(tests) == 0 {
			bad = append(bad, line)
			continue
		}
		rows = append(rows, behaviourRow{line: n + 1, behaviour: cells[0],
			file: filepath.ToSlash(filepath.Clean(filepath.Join("docs", link[1]))), tests: tests})
	}
	return rows, bad, found
}

func TestBehaviourRows(t *testing.T) {
	for _, tc := range []struct {
		name     string
		markdown string
		rows     []behaviourRow
		bad      int
		found    bool
	}{
		{name: "no section", markdown: "# T\n\n| behaviour | file | test |\n|---|---|---|\n| a | [f](../f.go) | `TestA` |\n"},
		{
			name: "rows of the section only, the header skipped",
			markdown: "# T\n" + behaviourSection + "\n\n| behaviour | file | test |\n|---|---|---|\n" +
				"| a | [a_test.go](../test/e2e/a_test.go) | `TestA` |\n| b | [b_test.go](../test/e2e/b_test.go) | `TestB`, `TestC` |\n" +
				"## Next\n| c | [c](../c.go) | `TestC` |\n",
			rows: []behaviourRow{
				{line: 6, behaviour: "a", file: "test/e2e/a_test.go", tests: []string{"TestA"}},
				{line: 7, behaviour: "b", file: "test/e2e/b_test.go", tests: []string{"TestB", "TestC"}},
			},
			found: true,
		},
		{
			name: "a row without a link, a test or a behaviour, or with a cell too many, is bad",
			markdown: behaviourSection + "\n| a | a_test.go | `TestA` |\n| a | [a](../a_test.go) | TestA |\n" +
				"|  | [a](../a_test.go) | `TestA` |\n| a | [a](../a_test.go) | `TestA` | x |\n",
			bad:   4,
			found: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, bad, found := behaviourRows(tc.markdown)
			assert.Equal(t, tc.rows, rows)
			assert.Len(t, bad, tc.bad)
			assert.Equal(t, tc.found, found)
		})
	}
}

// testFuncs returns the test functions a Go file declares (Test... with one parameter),
// TestMain left out.
func testFuncs(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" &&
			fn.Type.Params.NumFields() == 1 {
			names = append(names, fn.Name.Name)
		}
	}
	return names
}

// TestEveryE2ETestIsInTheBehaviourTable holds docs/TESTING.md's table from behaviour to test
// to test/e2e: every test function of test/e2e has a row, and every row names a file that
// exists and declares the tests it names.
func TestEveryE2ETestIsInTheBehaviourTable(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "TESTING.md"))
	require.NoError(t, err)
	rows, bad, found := behaviourRows(string(data))
	require.True(t, found, "docs/TESTING.md has the section %q", behaviourSection)
	assert.Empty(t, bad, "rows of docs/TESTING.md's behaviour table that are not | behaviour | [file](link) | `TestName` |")

	listed := map[string]string{} // test → file
	for _, r := range rows {
		declared := map[string]bool{}
		if _, err := os.Stat(filepath.Join(root, r.file)); err != nil {
			t.Errorf("docs/TESTING.md:%d names %s, which does not exist", r.line, r.file)
		} else {
			for _, name := range testFuncs(t, filepath.Join(root, r.file)) {
				declared[name] = true
			}
		}
		for _, name := range r.tests {
			if _, ok := declared[name]; !ok {
				t.Errorf("docs/TESTING.md:%d names %s in %s, which does not declare it", r.line, name, r.file)
			}
			if file, ok := listed[name]; ok {
				t.Errorf("docs/TESTING.md:%d names %s again (already with %s)", r.line, name, file)
			}
			listed[name] = r.file
		}
	}

	files, err := filepath.Glob(filepath.Join(root, "test", "e2e", "*_test.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var missing []string
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		for _, name := range testFuncs(t, f) {
			if listed[name] != filepath.ToSlash(rel) {
				missing = append(missing, name+" ("+filepath.ToSlash(rel)+")")
			}
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "end-to-end tests that docs/TESTING.md's behaviour table does not list with their file")
}
