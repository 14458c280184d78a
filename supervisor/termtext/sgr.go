package termtext

import (
	"strconv"

	"github.com/charmbracelet/x/ansi"
)

// style is a normalized SGR state: what a terminal would draw the next
// character with. It is a small fixed-size value, so carrying it from line to
// line costs the same whatever a child emitted before.
type style struct {
	attrs uint16 // attr* bits
	ul    uint8  // underline style: 0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed
	fg    color
	bg    color
	uc    color // underline colour
}

// color is a packed SGR colour: 0 is the default, the top byte says which
// kind, the low 24 bits hold the value.
type color uint32

const (
	colorBasic   color = 1 << 24 // value 0–15: SGR 30–37 / 90–97
	colorIndexed color = 2 << 24 // value 0–255: SGR 38;5;n
	colorRGB     color = 3 << 24 // value 0xRRGGBB: SGR 38;2;r;g;b
	colorKind    color = 0xff << 24
)

const (
	attrBold uint16 = 1 << iota
	attrFaint
	attrItalic
	attrBlink
	attrRapidBlink
	attrReverse
	attrConceal
	attrStrike
	attrOverline
)

// attrCodes pairs each attribute bit with the SGR parameter that sets it, in
// the order they are rendered; the underline (4) goes between 3 and 5.
var attrCodes = [...]struct {
	bit  uint16
	code byte
}{
	{attrBold, 1}, {attrFaint, 2}, {attrItalic, 3}, {attrBlink, 5},
	{attrRapidBlink, 6}, {attrReverse, 7}, {attrConceal, 8}, {attrStrike, 9},
	{attrOverline, 53},
}

func (s style) isDefault() bool { return s == style{} }

// applySGR updates s with the parameters of one SGR sequence (CSI ... m).
// Unknown parameters are ignored; colon sub-parameters of an unknown
// parameter are skipped with it.
func (s *style) applySGR(params ansi.Params) {
	if len(params) == 0 {
		*s = style{}
		return
	}
	for i := 0; i < len(params); {
		p := params[i].Param(0)
		n := 1
		switch {
		case p == 0:
			*s = style{}
		case p == 1:
			s.attrs |= attrBold
		case p == 2:
			s.attrs |= attrFaint
		case p == 3:
			s.attrs |= attrItalic
		case p == 4:
			s.ul = 1
			if params[i].HasMore() && i+1 < len(params) {
				if u := params[i+1].Param(0); u <= 5 {
					s.ul = uint8(u)
				}
			}
		case p == 5:
			s.attrs |= attrBlink
		case p == 6:
			s.attrs |= attrRapidBlink
		case p == 7:
			s.attrs |= attrReverse
		case p == 8:
			s.attrs |= attrConceal
		case p == 9:
			s.attrs |= attrStrike
		case p == 21:
			s.ul = 2
		case p == 22:
			s.attrs &^= attrBold | attrFaint
		case p == 23:
			s.attrs &^= attrItalic
		case p == 24:
			s.ul = 0
		case p == 25:
			s.attrs &^= attrBlink | attrRapidBlink
		case p == 27:
			s.attrs &^= attrReverse
		case p == 28:
			s.attrs &^= attrConceal
		case p == 29:
			s.attrs &^= attrStrike
		case p >= 30 && p <= 37:
			s.fg = colorBasic | color(p-30)
		case p == 38:
			n = readColor(params[i:], &s.fg)
		case p == 39:
			s.fg = 0
		case p >= 40 && p <= 47:
			s.bg = colorBasic | color(p-40)
		case p == 48:
			n = readColor(params[i:], &s.bg)
		case p == 49:
			s.bg = 0
		case p == 53:
			s.attrs |= attrOverline
		case p == 55:
			s.attrs &^= attrOverline
		case p == 58:
			n = readColor(params[i:], &s.uc)
		case p == 59:
			s.uc = 0
		case p >= 90 && p <= 97:
			s.fg = colorBasic | color(p-90+8)
		case p >= 100 && p <= 107:
			s.bg = colorBasic | color(p-100+8)
		}
		// A parameter's colon sub-parameters belong to it, whatever it is.
		if n == 1 {
			n = subGroupLen(params[i:])
		}
		i += n
	}
}

// subGroupLen returns how many parameters the first one spans with its colon
// sub-parameters (at least 1).
func subGroupLen(params ansi.Params) int {
	n := 1
	for n < len(params) && params[n-1].HasMore() {
		n++
	}
	return n
}

// readColor reads an extended colour (38, 48 or 58 followed by 5;n or
// 2;r;g;b, with semicolons or colons, the colon form optionally carrying a
// colour-space id) into c, and returns how many parameters it used. A colour
// it cannot read leaves c unchanged. It accepts the forms
// [ansi.ReadStyleColor] accepts, without allocating.
func readColor(params ansi.Params, c *color) int {
	if params[0].HasMore() { // colon form: one group
		g := subGroupLen(params)
		if g < 3 {
			return g
		}
		switch params[1].Param(0) {
		case 5:
			setIndexed(c, params[2].Param(0))
		case 2:
			switch {
			case g >= 6: // 38:2:<space>:r:g:b[...]
				setRGB(c, params[3].Param(0), params[4].Param(0), params[5].Param(0))
			case g == 5: // 38:2:r:g:b
				setRGB(c, params[2].Param(0), params[3].Param(0), params[4].Param(0))
			}
		}
		return g
	}
	if len(params) < 2 {
		return len(params)
	}
	switch params[1].Param(0) {
	case 5:
		if len(params) < 3 {
			return len(params)
		}
		setIndexed(c, params[2].Param(0))
		return 3
	case 2:
		if len(params) < 5 {
			return len(params)
		}
		setRGB(c, params[2].Param(0), params[3].Param(0), params[4].Param(0))
		return 5
	}
	return 2
}

func setIndexed(c *color, n int) {
	if n >= 0 && n <= 255 {
		*c = colorIndexed | color(n)
	}
}

func setRGB(c *color, r, g, b int) {
	if r < 0 || r > 255 || g < 0 || g > 255 || b < 0 || b > 255 {
		return
	}
	*c = colorRGB | color(r)<<16 | color(g)<<8 | color(b)
}

// appendSGR appends the one SGR sequence that moves a terminal from the
// style from to the style to: "\x1b[m" for the default style, otherwise the
// full state of to, led by a reset when from was not the default. The result
// is at most about 80 bytes whatever the child sent.
func appendSGR(dst []byte, from, to style) []byte {
	if to.isDefault() {
		return append(dst, "\x1b[m"...)
	}
	dst = append(dst, '\x1b', '[')
	sep := false
	next := func() {
		if sep {
			dst = append(dst, ';')
		}
		sep = true
	}
	if !from.isDefault() {
		dst = append(dst, '0')
		sep = true
	}
	ulDone := to.ul == 0
	for _, a := range attrCodes {
		if !ulDone && a.code > 4 {
			next()
			dst = appendUnderline(dst, to.ul)
			ulDone = true
		}
		if to.attrs&a.bit != 0 {
			next()
			dst = strconv.AppendUint(dst, uint64(a.code), 10)
		}
	}
	if to.fg != 0 {
		next()
		dst = appendColor(dst, to.fg, 30, 90, "38")
	}
	if to.bg != 0 {
		next()
		dst = appendColor(dst, to.bg, 40, 100, "48")
	}
	if to.uc != 0 {
		next()
		dst = appendColor(dst, to.uc, 0, 0, "58")
	}
	return append(dst, 'm')
}

func appendUnderline(dst []byte, ul uint8) []byte {
	if ul == 1 {
		return append(dst, '4')
	}
	return append(dst, '4', ':', '0'+ul)
}

// appendColor appends the SGR parameters for c. Basic colours use the short
// codes base+n (n < 8) or bright+n-8; extended ones use ext;5;n or ext;2;r;g;b.
// The underline colour (bright == 0) always uses the extended colon form,
// which is the one terminals that support it agree on.
func appendColor(dst []byte, c color, base, bright int, ext string) []byte {
	v := int(c &^ colorKind)
	sep := byte(';')
	if bright == 0 {
		sep = ':'
		if c&colorKind == colorBasic {
			c = colorIndexed | c&^colorKind
		}
	}
	switch c & colorKind {
	case colorBasic:
		if v < 8 {
			return strconv.AppendInt(dst, int64(base+v), 10)
		}
		return strconv.AppendInt(dst, int64(bright+v-8), 10)
	case colorIndexed:
		dst = append(dst, ext...)
		dst = append(dst, sep, '5', sep)
		return strconv.AppendInt(dst, int64(v), 10)
	default:
		dst = append(dst, ext...)
		dst = append(dst, sep, '2', sep)
		if sep == ':' {
			dst = append(dst, ':')
		}
		dst = strconv.AppendInt(dst, int64(v>>16), 10)
		dst = append(dst, sep)
		dst = strconv.AppendInt(dst, int64(v>>8&0xff), 10)
		dst = append(dst, sep)
		return strconv.AppendInt(dst, int64(v&0xff), 10)
	}
}

// sgrEntry is one rendered style transition.
type sgrEntry struct {
	from, to style
	n        int
	b        [96]byte
}

// appendSGRCached is appendSGR through a small direct-mapped cache of
// transitions: coloured output switches between a few styles.
func (c *Converter) appendSGRCached(dst []byte, from, to style) []byte {
	h := from.hash()*31 + to.hash()
	e := &c.sgrCache[h%uint32(len(c.sgrCache))]
	if e.n > 0 && e.from == from && e.to == to {
		return append(dst, e.b[:e.n]...)
	}
	start := len(dst)
	dst = appendSGR(dst, from, to)
	if n := len(dst) - start; n <= len(e.b) {
		e.from, e.to, e.n = from, to, n
		copy(e.b[:], dst[start:])
	}
	return dst
}

func (s style) hash() uint32 {
	h := uint32(s.attrs) | uint32(s.ul)<<16
	h = h*16777619 ^ uint32(s.fg)
	h = h*16777619 ^ uint32(s.bg)
	h = h*16777619 ^ uint32(s.uc)
	return h ^ h>>15
}
