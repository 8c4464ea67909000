package shard

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"syscall"
	"time"
)

// MinClusterKeyLen is the shortest cluster key accepted, in bytes.
const MinClusterKeyLen = 32

// nodeServerName is the name every node's certificate carries and every
// dialer checks: the certificate authority, not a host name, is what
// tells a node of the cluster from any other.
const nodeServerName = "hebb-node"

// handshakeTimeout bounds a node connection's TLS handshake when its dial
// has no timeout of its own, and an inbound one's always.
const handshakeTimeout = 10 * time.Second

// ClusterKey secures the node listener with a secret every node of a
// cluster shares: each node holds a certificate signed by a certificate
// authority whose Ed25519 key is derived from the secret, and every
// connection, both ways, is mutual TLS 1.3 that only such certificates
// pass. A peer without the secret cannot raise a connection at all, and the
// traffic (Raft entries, forwarded requests) is encrypted.
type ClusterKey struct {
	server, client *tls.Config
	gossip         []byte // memberlist's AES-256 key, derived from the same secret
}

// NewClusterKey derives the node transport's TLS configuration and the
// gossip key from secret (at least MinClusterKeyLen bytes). The node's own
// certificate is made afresh, named nodeID.
func NewClusterKey(secret []byte, nodeID string) (*ClusterKey, error) {
	if len(secret) < MinClusterKeyLen {
		return nil, fmt.Errorf("cluster key: %d bytes, want at least %d", len(secret), MinClusterKeyLen)
	}
	seed, err := hkdf.Key(sha256.New, secret, nil, "hebb node transport ca v1", ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	gossip, err := hkdf.Key(sha256.New, secret, nil, "hebb gossip v1", 32)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	caKey := ed25519.NewKeyFromSeed(seed)
	ca, err := caCert(caKey)
	if err != nil {
		return nil, err
	}
	leaf, err := leafCert(ca, caKey, nodeID)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	server := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{leaf},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool,
		// No ticket arrives on an idle connection, whose socket the RPC
		// pool peeks at to tell whether it is still open (connAlive).
		SessionTicketsDisabled: true}
	client := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{leaf},
		RootCAs: pool, ServerName: nodeServerName}
	return &ClusterKey{server: server, client: client, gossip: gossip}, nil
}

// GossipKey is the key memberlist encrypts and authenticates gossip with.
func (k *ClusterKey) GossipKey() []byte { return k.gossip }

// caCert is the cluster's certificate authority: the same key on every
// node (derived from the secret), so each node's self-signed copy checks
// every other node's certificate.
func caCert(key ed25519.PrivateKey) (*x509.Certificate, error) {
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hebb cluster"},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2999, 12, 31, 0, 0, 0, 0, time.UTC),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("cluster key: cannot make the authority's certificate: %w", err)
	}
	return x509.ParseCertificate(der)
}

// leafCert makes this node's certificate, with a key of its own.
func leafCert(ca *x509.Certificate, caKey ed25519.PrivateKey, nodeID string) (tls.Certificate, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cluster key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cluster key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: nodeID},
		DNSNames:     []string{nodeServerName},
		NotBefore:    now.Add(-24 * time.Hour), // clocks of the nodes differ
		NotAfter:     now.Add(100 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cluster key: cannot make the node's certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// secureConn is a node connection under TLS that still reaches its socket
// (syscall.Conn), as the RPC pool's liveness peek needs.
type secureConn struct {
	*tls.Conn
	raw *trackedConn
}

func (c *secureConn) SyscallConn() (syscall.RawConn, error) { return c.raw.SyscallConn() }

// errNoClusterKey is why an inbound connection without a certificate of
// the cluster is refused.
var errNoClusterKey = errors.New("the peer did not prove the cluster key")

// serverTLS runs the TLS handshake of an inbound node connection.
func (k *ClusterKey) serverTLS(raw *trackedConn) (net.Conn, error) {
	c := tls.Server(raw, k.server)
	if err := handshake(c, handshakeTimeout); err != nil {
		return nil, fmt.Errorf("%w: %w", errNoClusterKey, err)
	}
	return &secureConn{Conn: c, raw: raw}, nil
}

// clientTLS runs the TLS handshake of an outbound node connection.
func (k *ClusterKey) clientTLS(raw *trackedConn, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = handshakeTimeout
	}
	c := tls.Client(raw, k.client)
	if err := handshake(c, timeout); err != nil {
		return nil, fmt.Errorf("cannot prove the cluster key to %s (is it the same on both nodes?): %w", raw.RemoteAddr(), err)
	}
	return &secureConn{Conn: c, raw: raw}, nil
}

func handshake(c *tls.Conn, timeout time.Duration) error {
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	if err := c.Handshake(); err != nil {
		return err
	}
	return c.SetDeadline(time.Time{})
}
