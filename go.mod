module zot.dev/zot

go 1.25.0
