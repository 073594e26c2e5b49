package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"zot.dev/zot/internal/fleet"
	"zot.dev/zot/internal/home"
)

// dial connects to the cluster the flags name.
func (c *cluster) dial(stderr io.Writer) (client.Client, error) {
	opts := client.Options{
		HostPort:  c.hostPort,
		Namespace: c.namespace,
		Logger:    tlog.NewStructuredLogger(logger(stderr)),
	}
	if c.tlsCert != "" || c.tlsCA != "" || c.tlsServer != "" {
		cfg := &tls.Config{ServerName: c.tlsServer, MinVersion: tls.VersionTLS12}
		if c.tlsCert != "" || c.tlsKey != "" {
			if c.tlsCert == "" || c.tlsKey == "" {
				return nil, usageError{"--tls-cert and --tls-key go together"}
			}
			cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("the client certificate: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		if c.tlsCA != "" {
			pem, err := os.ReadFile(c.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("the CA bundle: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, errors.New("the CA bundle holds no certificate")
			}
			cfg.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = cfg
	}
	cl, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s (namespace %s): %w", c.hostPort, c.namespace, err)
	}
	return cl, nil
}

// store returns the blob store the flags name.
func (c *cluster) store() (fleet.Dir, error) {
	dir := c.blobs
	if dir == "" {
		h, err := home.Resolve(home.OS())
		if err != nil {
			return "", err
		}
		dir = filepath.Join(h.Dir, "fleet", "blobs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("the blob store: %w", err)
	}
	return fleet.Dir(dir), nil
}

func (c *cluster) tools() string {
	if c.toolQueue != "" {
		return c.toolQueue
	}
	return c.queue
}

// explain makes the error of a worker that could not start say what to
// do: a namespace the cluster does not have is named, with how to
// create it.
func (c *cluster) explain(err error) error {
	var missing *serviceerror.NamespaceNotFound
	if errors.As(err, &missing) {
		return fmt.Errorf("the cluster at %s has no namespace %q: create it (temporal operator namespace create --namespace %s) or name another with --namespace: %w", c.hostPort, c.namespace, c.namespace, err)
	}
	return err
}
