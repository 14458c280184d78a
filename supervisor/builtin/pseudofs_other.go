//go:build !linux

package builtin

// pseudoFilesystem returns "": the pseudo file systems that walks skip
// (see pseudofs_linux.go) are Linux's.
func pseudoFilesystem(abs string) string { return "" }
