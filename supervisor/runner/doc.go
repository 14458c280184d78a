// Package runner is the seam between the engine and where submissions run
// (SPEC §13): the Runner and Process interfaces, how a main process ended
// (Exit, ExitOf), what a runner is created with (Settings, Factory) and the
// registry of --runner names (Register, Lookup).
//
// It holds values and interfaces only and imports no subdash package, so
// that a runner never imports the engine. The engine (package supervisor)
// imports it and starts every submission through a Runner; the runners live
// beside it: runner/local (process groups on this machine, the default) and
// runner/kube (pods; linked only into binaries built with -tags kube).
package runner
