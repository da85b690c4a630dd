package embed

import (
	"encoding/binary"
	"errors"
	"math"
)

// Quantize encodes a vector as stored: a little-endian float32 scale, then
// one int8 per component (v[i] ≈ scale × int8), a quarter of the float32
// size at a cosine error well under a percent.
func Quantize(v []float32) []byte {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	out := make([]byte, 4+len(v))
	scale := m / 127
	binary.LittleEndian.PutUint32(out, math.Float32bits(scale))
	if scale == 0 {
		return out
	}
	for i, x := range v {
		out[4+i] = byte(int8(math.Round(float64(x / scale))))
	}
	return out
}

// ErrQuantized is a stored vector of the wrong length.
var ErrQuantized = errors.New("embed: stored vector has the wrong length")

// DotQuantized is the dot product of q and a stored vector b.
func DotQuantized(q []float32, b []byte) (float32, error) {
	if len(b) != 4+len(q) {
		return 0, ErrQuantized
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	b = b[4:]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(int8(b[i]))
		s1 += q[i+1] * float32(int8(b[i+1]))
		s2 += q[i+2] * float32(int8(b[i+2]))
		s3 += q[i+3] * float32(int8(b[i+3]))
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(int8(b[i]))
	}
	return (s0 + s1 + s2 + s3) * scale, nil
}
