package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// median returns the median of xs, or NaN when there are none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted, by the
// nearest-rank method.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(k, len(sorted)-1))]
}

// sortDurations sorts ds in place and returns it.
func sortDurations(ds []time.Duration) []time.Duration {
	slices.Sort(ds)
	return ds
}

// micros formats d in microseconds.
func micros(d float64) string { return fmt.Sprintf("%.0f", d/1e3) }

// table collects rows and prints them with aligned columns.
type table struct {
	header []string
	rows   [][]string
	align  []bool // true: right-aligned
}

func newTable(header ...string) *table {
	t := &table{header: header, align: make([]bool, len(header))}
	for i := range header {
		t.align[i] = i > 0
	}
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	width := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	line := func(r []string) {
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-len(c))
			if t.align[i] {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		b.WriteString("\n")
	}
	line(t.header)
	sep := make([]string, len(t.header))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}

// figure is one name=value line, with its goal.
type figure struct {
	name  string
	value float64
	unit  string // printed in the table only
	goal  string // "<= 1.05", ">= 2.5", ...; "" when none
	note  string
}

// met reports whether f meets its goal ("" when it has none).
func (f figure) met() string {
	var op string
	var want float64
	if _, err := fmt.Sscanf(f.goal, "%s %g", &op, &want); err != nil || math.IsNaN(f.value) {
		return ""
	}
	ok := map[string]bool{"<=": f.value <= want, "<": f.value < want, ">=": f.value >= want, ">": f.value > want}[op]
	if ok {
		return "yes"
	}
	return "NO"
}

// formatValue prints v with a precision suited to its size.
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "NaN"
	case a >= 1000 || a == math.Trunc(a):
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 0.1:
		return fmt.Sprintf("%.3f", v)
	default:
		return fmt.Sprintf("%.4f", v)
	}
}

func sortFigures(fs []figure, order []string) {
	slices.SortStableFunc(fs, func(a, b figure) int {
		return cmp.Compare(slices.Index(order, a.name), slices.Index(order, b.name))
	})
}
