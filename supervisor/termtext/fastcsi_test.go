package termtext

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestFastCSIMatchesParser checks that fastCSI collects the same command and
// parameters as ansi.Parser for random sequences of the shape it accepts,
// including more than 32 parameters and overflowing numbers.
func TestFastCSIMatchesParser(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("0123456789;:;:")
	for range 20000 {
		seq := []byte("\x1b[")
		if r.IntN(4) == 0 {
			seq = append(seq, "<=>?"[r.IntN(4)])
		}
		for range r.IntN(fastCSILen - 4) {
			seq = append(seq, alphabet[r.IntN(len(alphabet))])
		}
		seq = append(seq, "mKHJ@~"[r.IntN(6)])
		if len(seq) > fastCSILen {
			continue
		}

		var wantCmd ansi.Cmd
		var wantParams []ansi.Param
		var p ansi.Parser
		p.SetParamsSize(32)
		p.SetHandler(ansi.Handler{HandleCsi: func(cmd ansi.Cmd, params ansi.Params) {
			wantCmd, wantParams = cmd, slices.Clone(params)
		}})
		for _, b := range seq {
			p.Advance(b)
		}

		var params [32]ansi.Param
		gotCmd, n, consumed := collectCSI(seq, &params)
		if consumed != len(seq) {
			t.Fatalf("%q: collectCSI took %d bytes", seq, consumed)
		}
		if gotParams := params[:n]; gotCmd != wantCmd || !slices.Equal(gotParams, wantParams) {
			t.Fatalf("%q: fastCSI %v %v, parser %v %v", seq, gotCmd, gotParams, wantCmd, wantParams)
		}
	}
}
