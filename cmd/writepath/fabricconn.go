package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/writepath/writepath/auth"
	"github.com/writepath/writepath/client"
	"github.com/writepath/writepath/transport"
)

// connFlags are how a command reaches a coordinator: its address and the
// credentials. Every command that dials (worker, run, runs, workers,
// cancel, campaign ...) embeds one, so they all take the same flags.
type connFlags struct {
	coordinator string
	tls         auth.TLSFiles
	serverName  string
	tokenFile   string
	insecure    bool
}

// AddFlags registers --coordinator and the credential flags on cmd.
func (o *connFlags) AddFlags(cmd *cobra.Command, usage string) {
	o.addFlagSet(cmd.Flags(), usage)
}

// addFlagSet is AddFlags for a bare flag set (run parses its own).
func (o *connFlags) addFlagSet(f *pflag.FlagSet, usage string) {
	f.StringVar(&o.coordinator, "coordinator", "", usage)
	o.addCredentialFlags(f)
}

// addCredentialFlags registers --tls-* and --token-file alone.
func (o *connFlags) addCredentialFlags(f *pflag.FlagSet) {
	f.StringVar(&o.tls.Cert, "tls-cert", "", "certificate presented to the coordinator (mutual TLS; with --tls-key and --tls-ca)")
	f.StringVar(&o.tls.Key, "tls-key", "", "private key of --tls-cert")
	f.StringVar(&o.tls.CA, "tls-ca", "", "CA that signed the coordinator's certificate")
	f.StringVar(&o.serverName, "tls-server-name", "", "name expected in the coordinator's certificate (default: the host of --coordinator)")
	f.StringVar(&o.tokenFile, "token-file", "", "file whose first line is the fabric's shared bearer token")
	f.BoolVar(&o.insecure, "insecure", false, "dial a coordinator on another host in plaintext (default: plaintext only to this host; use --tls-*)")
}

// dialOptions are the options for dialling a coordinator
// (transport.Client): mutual TLS when --tls-* are given (the coordinator
// is verified against --tls-ca, so a worker runs only what an
// authenticated coordinator sends), else plaintext, which reaches only
// this host unless --insecure; the token with every call when
// --token-file is given.
func (o *connFlags) dialOptions() ([]grpc.DialOption, error) {
	if err := o.tls.Validate(); err != nil {
		return nil, err
	}
	token, err := readTokenFlag(o.tokenFile)
	if err != nil {
		return nil, err
	}
	c := transport.Client{Token: token}
	if !o.tls.Enabled() {
		if err := transport.CheckPlaintext(context.Background(), o.coordinator, o.insecure); err != nil {
			return nil, err
		}
		return c.DialOptions(), nil
	}
	if o.insecure {
		return nil, fmt.Errorf("--insecure with --tls-*: TLS is never plaintext; drop --insecure")
	}
	if c.TLS, err = auth.ClientConfig(o.tls, o.tlsServerName()); err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key/--tls-ca: %w", err)
	}
	return c.DialOptions(), nil
}

// dial connects to --coordinator with dialOptions. missing is the error
// when no coordinator was given (each command says what to do instead).
func (o *connFlags) dial(missing string) (*client.Client, error) {
	if o.coordinator == "" {
		return nil, errors.New(missing)
	}
	opts, err := o.dialOptions()
	if err != nil {
		return nil, err
	}
	return client.Dial(o.coordinator, opts...)
}

// tlsServerName is --tls-server-name, or the host part of --coordinator.
func (o *connFlags) tlsServerName() string {
	if o.serverName != "" {
		return o.serverName
	}
	host, _, err := net.SplitHostPort(o.coordinator)
	if err != nil {
		return o.coordinator
	}
	return host
}

func readTokenFlag(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	tok, err := auth.ReadToken(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	return tok, nil
}

// serveFlags are the coordinator's credential flags and connection limit.
type serveFlags struct {
	tls            auth.TLSFiles
	tokenFile      string
	insecure       bool
	maxConnections int
}

// AddFlags registers --tls-*, --token-file, --insecure and --max-connections.
func (o *serveFlags) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.tls.Cert, "tls-cert", "", "coordinator certificate (mutual TLS; with --tls-key and --tls-ca)")
	f.StringVar(&o.tls.Key, "tls-key", "", "private key of --tls-cert")
	f.StringVar(&o.tls.CA, "tls-ca", "", "CA whose signature workers' and clients' certificates must carry")
	f.StringVar(&o.tokenFile, "token-file", "", "file whose first line is a bearer token every call must carry")
	f.BoolVar(&o.insecure, "insecure", false, "serve plaintext to any address (default: plaintext only from loopback)")
	f.IntVar(&o.maxConnections, "max-connections", transport.DefaultMaxConnections, "connections served at once; more are closed at once and logged")
}

// Validate reports flag combinations that cannot work.
func (o *serveFlags) Validate() error {
	if err := o.tls.Validate(); err != nil {
		return err
	}
	if o.insecure && o.tls.Enabled() {
		return fmt.Errorf("--insecure with --tls-*: TLS is never plaintext; drop --insecure")
	}
	if o.maxConnections < 1 {
		return fmt.Errorf("--max-connections=%d: want at least 1", o.maxConnections)
	}
	return nil
}

// server builds the coordinator's transport from the flags. Plaintext
// without --insecure is served to loopback peers only; refused peers are
// logged, rate-limited.
func (o *serveFlags) server(log *slog.Logger) (transport.Server, error) {
	token, err := readTokenFlag(o.tokenFile)
	if err != nil {
		return transport.Server{}, err
	}
	s := transport.Server{Policy: auth.Policy{Token: token, StreamsPerCertificate: streamsPerWorkerCert},
		Insecure: o.insecure, MaxConnections: o.maxConnections, Log: log}
	if o.tls.Enabled() {
		if s.Policy.TLS, err = auth.ServerConfig(o.tls); err != nil {
			return transport.Server{}, fmt.Errorf("--tls-cert/--tls-key/--tls-ca: %w", err)
		}
	}
	return s, nil
}

// streamsPerWorkerCert: a worker holds one stream, two while a reconnect
// overlaps the old session; a few more leave slack.
const streamsPerWorkerCert = 4
