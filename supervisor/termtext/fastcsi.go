package termtext

import (
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// fastCSILen is the longest sequence fastCSI takes; longer ones go through
// the parser (and its cap).
const fastCSILen = 64

// fastCSI handles a complete CSI sequence of the common shape
// ESC [ [<=>?] [0-9;:]* final lying wholly in p from the ESC at p[i],
// without the byte-at-a-time parser, and returns the bytes consumed; 0 when
// the sequence has another shape or is not complete in p.
func (c *Converter) fastCSI(p []byte, i int) int {
	cmd, n, consumed := collectCSI(p[i:min(len(p), i+fastCSILen)], &c.csiParams)
	if consumed == 0 {
		return 0
	}
	if c.cut {
		c.dropped += int64(consumed)
	}
	c.handleCsi(cmd, c.csiParams[:n])
	return consumed
}

// collectCSI reads a sequence of fastCSI's shape at the start of p into
// params with the same arithmetic as ansi.Parser (its 32-parameter limit,
// its wrap-around, its count of the last parameter), so the result is the
// same as when the sequence arrives in pieces and goes through the parser.
// It returns the command, the number of parameters and the bytes consumed
// (0 when p does not start with such a sequence).
func collectCSI(p []byte, params *[parser.MaxParamsSize]ansi.Param) (cmd ansi.Cmd, n, consumed int) {
	if len(p) < 3 || p[0] != ansi.ESC || p[1] != '[' {
		return 0, 0, 0
	}
	params[0] = parser.MissingParam
	prefix := 0
	j := 2
	if b := p[j]; b >= '<' && b <= '?' {
		prefix = int(b)
		j++
	}
	for ; j < len(p); j++ {
		b := p[j]
		switch {
		case b >= '0' && b <= '9':
			if n < len(params) {
				if params[n] == parser.MissingParam {
					params[n] = 0
				}
				params[n] = params[n]*10 + ansi.Param(b-'0')
			}
		case b == ';' || b == ':':
			if n < len(params) {
				if b == ':' {
					params[n] |= parser.HasMoreFlag
				}
				n++
				if n < len(params) {
					params[n] = parser.MissingParam
				}
			}
		case b >= 0x40 && b <= 0x7e:
			if n > 0 && n < len(params)-1 || n == 0 && params[0] != parser.MissingParam {
				n++
			}
			return ansi.Cmd(int(b) | prefix<<parser.PrefixShift), n, j + 1
		default:
			return 0, 0, 0
		}
	}
	return 0, 0, 0
}
