package kube

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type errorString string

func (e errorString) Error() string { return string(e) }

func itoa(n int) string { return strconv.Itoa(n) }

func selfPID() int { return os.Getpid() }

// allowUnlessExec answers a SelfSubjectAccessReview: allowed, except for
// pods/exec.
func allowUnlessExec(obj runtime.Object) runtime.Object {
	rev := obj.(*authv1.SelfSubjectAccessReview)
	rev.Status.Allowed = rev.Spec.ResourceAttributes.Subresource != "exec"
	return rev
}

// TestMarkerFilter feeds stderr with the wrapper's end marker cut at every
// place, between output that looks like its start: every other byte comes
// through unchanged and in order, the marker never does, and it is
// reported once with its status and count.
func TestMarkerFilter(t *testing.T) {
	prefix := []byte("\x1esubdash:0123abcd:exit:")
	before := []byte("warn: \x1esubdash:0123 not it\n\x1esubdash:0123abcd:ex")
	marker := append(append([]byte(nil), prefix...), []byte("3:2\x1e")...)
	after := []byte("late line from a leftover\n")
	stream := append(append(append([]byte(nil), before...), marker...), after...)
	want := append(append([]byte(nil), before...), after...)
	for cut1 := 0; cut1 <= len(stream); cut1++ {
		for _, cut2 := range []int{cut1, min(cut1+1, len(stream)), min(cut1+7, len(stream)), len(stream)} {
			var got bytes.Buffer
			ends := 0
			var status, left int
			f := newMarkerFilter(prefix, func(b []byte) { got.Write(b) }, func(s, l int) { ends++; status, left = s, l })
			_, _ = f.Write(stream[:cut1])
			_, _ = f.Write(stream[cut1:cut2])
			_, _ = f.Write(stream[cut2:])
			f.flush()
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("cuts %d,%d: got %q, want %q", cut1, cut2, got.Bytes(), want)
			}
			if ends != 1 || status != 3 || left != 2 {
				t.Fatalf("cuts %d,%d: marker reported %d times, status %d, left %d", cut1, cut2, ends, status, left)
			}
		}
	}
}

// TestMarkerFilterWithoutMarker: a stream that ends without the marker (the
// wrapper was killed) keeps every byte, also a held-back partial prefix.
func TestMarkerFilterWithoutMarker(t *testing.T) {
	prefix := []byte("\x1esubdash:0123abcd:exit:")
	stream := []byte("output\n\x1esubdash:0123")
	var got bytes.Buffer
	f := newMarkerFilter(prefix, func(b []byte) { got.Write(b) }, func(int, int) { t.Error("marker reported") })
	_, _ = f.Write(stream)
	f.flush()
	if !bytes.Equal(got.Bytes(), stream) {
		t.Fatalf("got %q, want %q", got.Bytes(), stream)
	}
}

func TestExitMapping(t *testing.T) {
	if e := exitOf(3); e.Code == nil || *e.Code != 3 || e.Signal != "" {
		t.Errorf("3: %+v", e)
	}
	if e := exitOf(137); e.Code != nil || e.Signal != "SIGKILL" {
		t.Errorf("137: %+v", e)
	}
	if e := exitOf(143); e.Signal != "SIGTERM" {
		t.Errorf("143: %+v", e)
	}
	if s, note := wholeSeconds(1500 * time.Millisecond); s != 2 || note == "" {
		t.Errorf("1.5s: %d %q", s, note)
	}
	if s, note := wholeSeconds(3 * time.Second); s != 3 || note != "" {
		t.Errorf("3s: %d %q", s, note)
	}
}
