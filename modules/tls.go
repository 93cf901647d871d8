// tls.go: the self-signed certificate of the HTTPS service.

package modules

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"cairn/node"
	"cairn/node/config"
)

// certPaths resolves the configured certificate and key against repo.
func certPaths(repo string, c config.ModulesHTTPS) (cert, key string) {
	cert, key = c.Certificate, c.Key
	if cert == "" {
		cert = "tls/modules.crt"
	}
	if key == "" {
		key = "tls/modules.key"
	}
	if !filepath.IsAbs(cert) {
		cert = filepath.Join(repo, cert)
	}
	if !filepath.IsAbs(key) {
		key = filepath.Join(repo, key)
	}
	return cert, key
}

// EnsureCert makes sure the HTTPS certificate and key of cfg exist in
// repo, generating a self-signed pair (ECDSA P-256, ten years, for
// localhost, 127.0.0.1, ::1 and the host name) when neither file exists.
// It reports whether it generated one.
func EnsureCert(repo string, cfg config.ModulesConfig) (bool, error) {
	certFile, keyFile := certPaths(repo, cfg.HTTPS)
	_, cerr := os.Stat(certFile)
	_, kerr := os.Stat(keyFile)
	if cerr == nil && kerr == nil {
		return false, nil
	}
	if !errors.Is(cerr, fs.ErrNotExist) || !errors.Is(kerr, fs.ErrNotExist) {
		return false, fmt.Errorf("https certificate: %s or %s is missing or unreadable", certFile, keyFile)
	}
	certPEM, keyPEM, err := selfSigned(time.Now())
	if err != nil {
		return false, err
	}
	for _, d := range []string{filepath.Dir(certFile), filepath.Dir(keyFile)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return false, err
		}
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return false, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return false, err
	}
	return true, nil
}

// selfSigned generates a self-signed certificate and its key (PEM). Its
// validity spans now and node.ClockFloor, ten years past the later:
// a board without a real-time clock may generate it at first start with
// a time years behind, and the certificate must not have expired once
// NTP sets the clock.
func selfSigned(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	names := []string{"localhost"}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		names = append(names, h, h+".local")
	}
	from, to := now, node.ClockFloor
	if now.After(to) {
		from, to = to, now
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "cairn modules", Organization: []string{"cairn"}},
		NotBefore:             from.Add(-time.Hour),
		NotAfter:              to.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              names,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}

// loadTLS returns the TLS config of the HTTPS service.
func loadTLS(repo string, c config.ModulesHTTPS) (*tls.Config, error) {
	certFile, keyFile := certPaths(repo, c)
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("https certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}, nil
}
