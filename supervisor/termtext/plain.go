package termtext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Plain converts a whole byte stream to plain text: the display lines
// without any escape sequence (SGR removed too), each followed by "\n"
// except a last line that had no line end. Lines wider than DefaultMaxWidth
// cells are cut with a marker, as in the dashboard. Used for last_output and
// `logs`.
func Plain(p []byte) string {
	var sb strings.Builder
	sb.Grow(len(p))
	c := newConverter(DefaultMaxWidth, true)
	c.Feed(p, func(text []byte, _ int) {
		sb.Write(text)
		sb.WriteByte('\n')
	})
	c.Flush(func(text []byte, _ int) { sb.Write(text) })
	return sb.String()
}

// WritePlain is the streaming form of Plain for large log files: it reads r
// to EOF and writes the plain text to w, holding one line (at most
// DefaultMaxWidth cells) and a 32 KiB read buffer in memory. It returns the
// first read error other than io.EOF or the first write error.
func WritePlain(w io.Writer, r io.Reader) error { return WriteLines(w, r, false) }

// WriteLines is WritePlain that keeps SGR (colours and attributes, reset at
// the end of each line) when keepSGR is set: the display lines as the
// dashboard shows them, safe to send to a terminal or a pager such as
// less -R. Every other escape sequence and control character is removed.
func WriteLines(w io.Writer, r io.Reader, keepSGR bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var werr error
	line := func(text []byte, _ int) {
		if werr != nil {
			return
		}
		if _, err := bw.Write(text); err != nil {
			werr = err
			return
		}
		werr = bw.WriteByte('\n')
	}
	c := newConverter(DefaultMaxWidth, !keepSGR)
	buf := make([]byte, 32<<10)
	for werr == nil {
		n, err := r.Read(buf)
		c.Feed(buf[:n], line)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("termtext: reading the log: %w", err)
		}
	}
	c.Flush(func(text []byte, _ int) {
		if werr == nil {
			_, werr = bw.Write(text)
		}
	})
	if werr == nil {
		werr = bw.Flush()
	}
	if werr != nil {
		return fmt.Errorf("termtext: writing plain text: %w", werr)
	}
	return nil
}
