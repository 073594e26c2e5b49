package home

import "runtime"

// goos is the operating system zot runs on.
const goos = runtime.GOOS
