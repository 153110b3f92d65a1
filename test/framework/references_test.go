package framework

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The docs' copy step (docs/references.md) is found where CopyReferenceSecret looks for it, in
// the shape it rewrites: a get of root-shard-join in a, piped into an apply in b.
func TestReadmeCopyLine(t *testing.T) {
	line, err := readmeCopyLine()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(line, "kubectl get secret root-shard-join -n a -o go-template='"), line)
	assert.True(t, strings.HasSuffix(line, "' | kubectl apply --server-side -n b -f -"), line, "a client-side apply keeps the data in an annotation")
	for _, kept := range []string{"{{.type}}", "{{.metadata.name}}", `{{index .metadata.labels "operator.kcp.io/reference"}}`, "{{range $k, $v := .data}}"} {
		assert.Contains(t, line, kept)
	}
	for _, dropped := range []string{"namespace", "annotations", "managed-by", "resourceVersion", "uid"} {
		assert.NotContains(t, line, dropped)
	}
}
