package daemon

import "net"

// PeerUID returns the uid of the process at the other end of c: for a
// client, the user the daemon runs as. It is -1 where the platform does
// not say (there the socket's 0600 mode in its 0700 directory keeps other
// users out).
func PeerUID(c *net.UnixConn) (int, error) {
	uid, _, err := peerCred(c)
	return uid, err
}
