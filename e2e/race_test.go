//go:build race

package e2e

// raceBuild: this test binary has the race detector on (-race), and so has
// the subdash binary it builds for the tests (main_test.go).
const raceBuild = true
