package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestEigen: each eigenpair of a symmetric matrix satisfies A·v = λ·v,
// and the eigenvectors are orthonormal.
func TestEigen(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 7
	a := make([][]float64, n)
	orig := make([][]float64, n)
	for i := range a {
		a[i], orig[i] = make([]float64, n), make([]float64, n)
	}
	for i := range n {
		for j := i; j < n; j++ {
			x := rng.NormFloat64()
			a[i][j], a[j][i], orig[i][j], orig[j][i] = x, x, x, x
		}
	}
	vals, vecs := eigen(a)
	for k := range n {
		for i := range n {
			var av float64
			for j := range n {
				av += orig[i][j] * vecs[j][k]
			}
			if math.Abs(av-vals[k]*vecs[i][k]) > 1e-9 {
				t.Fatalf("eigenpair %d: (A·v)[%d] = %g, λ·v = %g", k, i, av, vals[k]*vecs[i][k])
			}
		}
		for l := range n {
			var d float64
			for i := range n {
				d += vecs[i][k] * vecs[i][l]
			}
			want := 0.0
			if k == l {
				want = 1
			}
			if math.Abs(d-want) > 1e-9 {
				t.Fatalf("v%d·v%d = %g, want %g", k, l, d, want)
			}
		}
	}
}

// TestQuantize: the largest component is ±127 and the rest in scale.
func TestQuantize(t *testing.T) {
	got := appendQuantized(nil, []float64{0.5, -1, 0.25, 0})
	want := []int8{64, -127, 32, 0}
	for i, b := range got {
		if int8(b) != want[i] {
			t.Fatalf("quantized %v, want %v", got, want)
		}
	}
	if !lowerAlpha("word") || lowerAlpha("Word") || lowerAlpha("co-op") || lowerAlpha("") {
		t.Error("lowerAlpha")
	}
}
