package termtext

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// printableLen returns the length of the leading run of printable ASCII
// (0x20–0x7e) in p. It tests eight bytes at a time: the lowest flagged byte
// of special is always the first byte outside the range (a false flag needs
// a borrow or carry from a lower byte that is itself outside it).
func printableLen(p []byte) int {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		x := binary.LittleEndian.Uint64(p[i:])
		if m := ((x-0x20*lo8)&^x | (x + lo8) | x) & hi8; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(p); i++ {
		if b := p[i]; b < 0x20 || b >= 0x7f {
			return i
		}
	}
	return i
}

// bytesToString views b as a string for read-only measuring, without
// copying. The string must not outlive the call it is passed to.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
