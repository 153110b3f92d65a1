package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcp-setups/apiserver/pkg/apis/operator"
)

func TestTableConvertor(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c := tableConvertor[*operator.CacheServer]{
		now: func() time.Time { return now },
		table: Table[*operator.CacheServer]{
			Columns: []Column[*operator.CacheServer]{PhaseColumn(func(o *operator.CacheServer) string { return string(o.Status.Phase) })},
			Wide: []Column[*operator.CacheServer]{StringColumn("Ready", "", func(o *operator.CacheServer) string {
				return ConditionStatus(o.Status.Conditions, "Available")
			})},
		},
	}
	older := operator.CacheServer{
		ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute))},
		Status: operator.CacheServerStatus{Phase: operator.PhaseRunning,
			Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}}},
	}
	newer := operator.CacheServer{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: metav1.NewTime(now.Add(-30 * time.Second))}}

	t.Run("list", func(t *testing.T) {
		list := &operator.CacheServerList{ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "next"}, Items: []operator.CacheServer{older, newer}}
		table, err := c.ConvertToTable(t.Context(), list, nil)
		require.NoError(t, err)
		var cols []string
		for _, d := range table.ColumnDefinitions {
			cols = append(cols, d.Name)
		}
		assert.Equal(t, []string{"Name", "Phase", "Age", "Ready"}, cols)
		assert.Equal(t, int32(1), table.ColumnDefinitions[3].Priority, "wide columns have priority 1")
		assert.Equal(t, int32(0), table.ColumnDefinitions[1].Priority)
		require.Len(t, table.Rows, 2)
		assert.Equal(t, []any{"a", "Running", "90m", "True"}, table.Rows[0].Cells)
		assert.Equal(t, []any{"b", "", "30s", "Unknown"}, table.Rows[1].Cells)
		assert.Equal(t, "9", table.ResourceVersion)
		assert.Equal(t, "next", table.Continue)
	})

	t.Run("single object without headers", func(t *testing.T) {
		table, err := c.ConvertToTable(t.Context(), &older, &metav1.TableOptions{NoHeaders: true})
		require.NoError(t, err)
		assert.Empty(t, table.ColumnDefinitions)
		require.Len(t, table.Rows, 1)
		assert.Equal(t, "a", table.Rows[0].Cells[0])
		assert.Equal(t, "7", table.ResourceVersion)
	})

	t.Run("wrong kind", func(t *testing.T) {
		_, err := c.ConvertToTable(t.Context(), &operator.Shard{}, nil)
		assert.Error(t, err)
	})

	t.Run("unknown age", func(t *testing.T) {
		table, err := c.ConvertToTable(t.Context(), &operator.CacheServer{}, nil)
		require.NoError(t, err)
		assert.Equal(t, "<unknown>", table.Rows[0].Cells[2])
	})
}

// TestRootShardColumn: a joined Shard or FrontProxy names the copy of the join Secret it
// joins through, rather than an empty cell.
func TestRootShardColumn(t *testing.T) {
	assert.Equal(t, "root", RootShardColumn(operator.RootShardConfig{Reference: &corev1.LocalObjectReference{Name: "root"}}))
	assert.Equal(t, "Secret/root-shard-join", RootShardColumn(operator.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "root-shard-join"}}))
	assert.Equal(t, "Link/eu-1-link-bootstrap", RootShardColumn(operator.RootShardConfig{
		Link: &operator.RootShardLink{SecretRef: corev1.LocalObjectReference{Name: "eu-1-link-bootstrap"}}}))
	assert.Empty(t, RootShardName(operator.RootShardConfig{SecretRef: &corev1.LocalObjectReference{Name: "root-shard-join"}}),
		"the field selector spec.rootShard.ref.name selects by reference only")
}
