//go:build !zotlean

package main

// leanBuild reports whether this is the lean build (full.go).
const leanBuild = false
