package exthost

import "path/filepath"

// LogFile is the file in logDir that gets the log of the extension
// named name: its stderr and the host's notes about it. The name is made
// safe for a file name as the host makes it.
func LogFile(logDir, name string) string {
	return filepath.Join(logDir, "ext-"+sanitize(name)+".log")
}

// SafeName reports whether name can be an extension's folder and log
// name as it is: letters, digits, '.', '_' and '-', not starting with a
// dot, at most 64 bytes.
func SafeName(name string) bool { return name != "" && sanitize(name) == name }
