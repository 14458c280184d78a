package sshlink

import (
	"github.com/subdash/subdash/supervisor/proto"
)

// BridgeVersion is the version of what `subdash bridge --print-socket`
// prints (Hello, then Found): a local subdash reads a bridge of its own
// version only, and says which version each side has otherwise.
const BridgeVersion = 1

// Hello is the first line the bridge prints, before it looks for
// anything, so that a subdash of another version is told apart before
// the rest is read: one JSON object on one line.
type Hello struct {
	// Bridge is BridgeVersion of the subdash there (0: not a bridge).
	Bridge int `json:"subdash_bridge"`
	// Protocol is the control socket protocol it speaks (wire.Protocol).
	Protocol int `json:"protocol"`
	// Version is its module version, "devel …" for a local build
	// (wire.Version).
	Version string `json:"version"`
	// Host is the remote machine's name (os.Hostname), for messages.
	Host string `json:"host,omitempty"`
}

// Found is the second line the bridge prints: the socket of the host
// serving the folder and what that host said of itself (GET /v1/info), or
// why there is none (Error, with Code).
type Found struct {
	Socket string      `json:"socket,omitempty"` // the host's control socket there
	Info   *proto.Info `json:"info,omitempty"`   // that host's GET /v1/info
	// Error is the bridge's message when no host was found; Code one of
	// the Find codes.
	Error string `json:"error,omitempty"`
	Code  string `json:"code,omitempty"`
	// Looked are the sockets tried, in order.
	Looked []string `json:"looked,omitempty"`
}

// The codes of Found.Code, and the bridge's exit statuses for them.
const (
	CodeNoHost   = "no_host"   // exit 1: nothing serves the folder there
	CodeNoFolder = "no_folder" // exit 3: the folder does not exist there
	CodeUsage    = "usage"     // exit 2: the bridge's command line was wrong
	CodeHung     = "hung"      // exit 4: a host serves the folder but does not answer
)
