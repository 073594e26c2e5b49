//go:build !unix

package store

import "errors"

func mkfifo(path string) error { return errors.New("not on this system") }
