//! TLS for the wire clients (rustls with the ring provider), shared by the
//! PostgreSQL and MySQL drivers.
//!
//! Contract:
//! - [`Mode`] is the policy, in libpq's words (each driver parses its own
//!   spelling: `sslmode=verify-full`, `ssl-mode=VERIFY_IDENTITY`):
//!   `Disable` never uses TLS; `Prefer` uses it when the server offers it and
//!   verifies nothing; `Require` insists on it and verifies nothing;
//!   `VerifyCa` checks the certificate chain against the CA but not the host
//!   name; `VerifyFull` checks both. Without a CA file the trusted roots are
//!   Mozilla's (webpki-roots), as for a managed service with a public CA.
//! - [`TlsOptions::client_config`] loads the CA and the client certificate
//!   and key once per target, so a bad file is the user's error before any
//!   connection; [`connect`] runs the handshake over a connected socket and
//!   turns certificate errors into one line naming the CA file and the
//!   remedy (in the driver's option spelling, [`Flavor`]).
//! - [`TlsInfo`] is what a connection negotiated (version and cipher), which
//!   runs store because TLS changes the cost per query.
//! - [`server_end_point_hash`] is the `tls-server-end-point` channel binding
//!   of RFC 5929 for SCRAM-SHA-256-PLUS.

use std::io;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConnection, WebPkiServerVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use super::error::{DbError, DbResult};

/// A TLS connection over TCP, as the wire clients read and write it.
pub type TlsStream = rustls::StreamOwned<ClientConnection, TcpStream>;

/// A read from `s` inside a task of the event-driven core
/// ([`crate::evloop`]): rustls over the socket without blocking, and
/// a wait for the socket (readable, or writable while records are left to
/// send) instead.
pub fn read_in_task(s: &mut TlsStream, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let fd = s.sock.as_raw_fd();
    in_task(s, fd, |s| {
        rustls::Stream::new(&mut s.conn, &mut crate::evloop::NonBlocking(fd)).read(buf)
    })
}

/// A write to `s` inside a task, as [`read_in_task`].
pub fn write_in_task(s: &mut TlsStream, buf: &[u8]) -> std::io::Result<usize> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let fd = s.sock.as_raw_fd();
    in_task(s, fd, |s| {
        rustls::Stream::new(&mut s.conn, &mut crate::evloop::NonBlocking(fd)).write(buf)
    })
}

fn in_task<T>(
    s: &mut TlsStream,
    fd: std::os::fd::RawFd,
    mut op: impl FnMut(&mut TlsStream) -> std::io::Result<T>,
) -> std::io::Result<T> {
    use crate::evloop::{Interest, retry};
    retry(fd, Interest::Read, |interest| {
        let r = op(s);
        // What to wait for depends on what rustls has left to do.
        *interest = if s.conn.wants_write() {
            Interest::Both
        } else {
            Interest::Read
        };
        r
    })
}

/// How much TLS a connection insists on and verifies (libpq's `sslmode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disable,
    /// Plaintext first, TLS only when the server refuses plaintext
    /// (libpq's `allow`; MySQL has no such mode).
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    /// Whether a server without TLS is refused.
    pub fn required(self) -> bool {
        !matches!(self, Mode::Disable | Mode::Allow | Mode::Prefer)
    }
}

/// Whose option names the messages use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Postgres,
    Mysql,
}

impl Flavor {
    /// The option that sets the mode, written with `mode`'s value.
    pub fn mode_option(self, mode: Mode) -> &'static str {
        match (self, mode) {
            (Flavor::Postgres, Mode::Disable) => "sslmode=disable",
            (Flavor::Postgres, Mode::Allow) => "sslmode=allow",
            (Flavor::Postgres, Mode::Prefer) => "sslmode=prefer",
            (Flavor::Postgres, Mode::Require) => "sslmode=require",
            (Flavor::Postgres, Mode::VerifyCa) => "sslmode=verify-ca",
            (Flavor::Postgres, Mode::VerifyFull) => "sslmode=verify-full",
            (Flavor::Mysql, Mode::Disable) => "ssl-mode=DISABLED",
            // MySQL URLs cannot ask for `allow`; PREFERRED is its nearest.
            (Flavor::Mysql, Mode::Allow | Mode::Prefer) => "ssl-mode=PREFERRED",
            (Flavor::Mysql, Mode::Require) => "ssl-mode=REQUIRED",
            (Flavor::Mysql, Mode::VerifyCa) => "ssl-mode=VERIFY_CA",
            (Flavor::Mysql, Mode::VerifyFull) => "ssl-mode=VERIFY_IDENTITY",
        }
    }
    /// The option naming the CA file.
    pub fn ca_option(self) -> &'static str {
        match self {
            Flavor::Postgres => "sslrootcert",
            Flavor::Mysql => "ssl-ca",
        }
    }
}

/// A TLS option of a target URL that cannot work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TlsOptionError {
    /// A mode the engine's clients do not know.
    #[error("{key}={value}: expected {expected}")]
    UnknownMode {
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    /// `sslrootcert=system` with a mode that does not check the host name.
    #[error(
        "sslrootcert=system trusts the public CAs, which only verify-full makes safe: use sslmode=verify-full, not {0}"
    )]
    SystemRootsNeedVerifyFull(String),
}

/// The TLS options of one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsOptions {
    pub mode: Mode,
    /// PEM file of the CA certificates to trust; `None`: Mozilla's roots.
    pub ca: Option<PathBuf>,
    /// PEM client certificate chain and its private key, both or neither.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub flavor: Flavor,
}

impl TlsOptions {
    /// No TLS at all.
    pub fn disabled(flavor: Flavor) -> TlsOptions {
        TlsOptions {
            mode: Mode::Disable,
            ca: None,
            cert: None,
            key: None,
            flavor,
        }
    }

    /// The rustls configuration for this target (`None` when TLS is
    /// disabled). Errors name the file and say what to give instead.
    pub fn client_config(&self) -> DbResult<Option<Arc<ClientConfig>>> {
        if self.mode == Mode::Disable {
            return Ok(None);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| DbError::fatal(format!("TLS setup: {e}")))?;
        let algs = provider.signature_verification_algorithms;
        let verifier: Arc<dyn ServerCertVerifier> = match self.mode {
            Mode::Disable | Mode::Allow | Mode::Prefer | Mode::Require => {
                Arc::new(NoVerification(algs))
            }
            Mode::VerifyCa | Mode::VerifyFull => {
                let roots = Arc::new(self.roots()?);
                let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| DbError::fatal(format!("TLS setup: {e}")))?;
                if self.mode == Mode::VerifyCa {
                    Arc::new(ChainOnly(webpki))
                } else {
                    webpki
                }
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match (&self.cert, &self.key) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => {
                let chain = read_certs(cert, "client certificate")?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    DbError::fatal(format!(
                        "cannot read the client key {}: {e} (give a PEM private key)",
                        key.display()
                    ))
                })?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    DbError::fatal(format!(
                        "the client certificate {} and its key do not go together: {e}",
                        cert.display()
                    ))
                })?
            }
            _ => {
                return Err(DbError::fatal(
                    "a client certificate needs its key and a key its certificate: give both",
                ));
            }
        };
        Ok(Some(Arc::new(config)))
    }

    fn roots(&self) -> DbResult<RootCertStore> {
        let Some(ca) = &self.ca else {
            return Ok(RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            });
        };
        let mut roots = RootCertStore::empty();
        for c in read_certs(ca, "CA file")? {
            roots.add(c).map_err(|e| {
                DbError::fatal(format!(
                    "the CA file {} holds a certificate rustls cannot use: {e}",
                    ca.display()
                ))
            })?;
        }
        Ok(roots)
    }
}

/// [`TlsOptions`] with their rustls configuration, loaded once per target
/// and shared by its connections. Compares (and prints) as its options.
#[derive(Clone)]
pub struct TlsSetup {
    pub options: TlsOptions,
    config: Option<Arc<ClientConfig>>,
}

impl TlsSetup {
    /// Loads the files `options` name (see [`TlsOptions::client_config`]).
    pub fn new(options: TlsOptions) -> DbResult<TlsSetup> {
        let config = options.client_config()?;
        Ok(TlsSetup { options, config })
    }

    /// No TLS at all.
    pub fn disabled(flavor: Flavor) -> TlsSetup {
        TlsSetup {
            options: TlsOptions::disabled(flavor),
            config: None,
        }
    }

    /// TLS when the server offers it, unverified (libpq's default), and no
    /// files: what rqps's own connections to its throwaway servers use, so
    /// that a `--config` that demands TLS still lets them in.
    pub fn prefer(flavor: Flavor) -> TlsSetup {
        let options = TlsOptions {
            mode: Mode::Prefer,
            ..TlsOptions::disabled(flavor)
        };
        // Without files only a broken crypto provider fails: then plaintext.
        TlsSetup::new(options).unwrap_or_else(|_| TlsSetup::disabled(flavor))
    }

    pub fn mode(&self) -> Mode {
        self.options.mode
    }

    /// Runs the handshake over `tcp` ([`connect`]); `None` when TLS is disabled.
    pub fn connect(&self, host: &str, tcp: TcpStream) -> Option<DbResult<TlsStream>> {
        let config = self.config.clone()?;
        Some(connect(config, &self.options, host, tcp))
    }
}

impl PartialEq for TlsSetup {
    fn eq(&self, other: &Self) -> bool {
        self.options == other.options
    }
}

impl Eq for TlsSetup {}

impl std::fmt::Debug for TlsSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.options.fmt(f)
    }
}

fn read_certs(path: &Path, what: &str) -> DbResult<Vec<CertificateDer<'static>>> {
    let bad = |e: &dyn std::fmt::Display| {
        DbError::fatal(format!(
            "cannot read the {what} {}: {e} (give a PEM file of certificates)",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    if certs.is_empty() {
        return Err(bad(&"no certificate in it"));
    }
    Ok(certs)
}

/// What a TLS connection negotiated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsInfo {
    /// `TLSv1.3`, `TLSv1.2`.
    pub version: String,
    /// The IANA name of the cipher suite, e.g. `TLS13_AES_256_GCM_SHA384`.
    pub cipher: String,
}

impl TlsInfo {
    /// Of an established connection.
    pub fn of(conn: &ClientConnection) -> TlsInfo {
        let version = match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            Some(v) => format!("{v:?}"),
            None => "unknown".to_string(),
        };
        let cipher = conn
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()))
            .unwrap_or_else(|| "unknown".into());
        TlsInfo { version, cipher }
    }
}

impl std::fmt::Display for TlsInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.version, self.cipher)
    }
}

/// Runs the TLS handshake over `tcp` (already past the protocol's own TLS
/// request) with the server named `host`. Certificate errors become one
/// line naming the CA file and the remedy.
pub fn connect(
    config: Arc<ClientConfig>,
    opts: &TlsOptions,
    host: &str,
    tcp: TcpStream,
) -> DbResult<TlsStream> {
    let name = ServerName::try_from(host.to_string()).map_err(|_| {
        DbError::fatal(format!("'{host}' is neither a host name nor an IP address"))
    })?;
    let mut conn = ClientConnection::new(config, name)
        .map_err(|e| DbError::fatal(format!("TLS setup: {e}")))?;
    let mut tcp = tcp;
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(&mut tcp) {
            return Err(handshake_error(e, opts, host));
        }
    }
    Ok(rustls::StreamOwned::new(conn, tcp))
}

/// A failed handshake, in the user's terms.
fn handshake_error(e: io::Error, opts: &TlsOptions, host: &str) -> DbError {
    let f = opts.flavor;
    let ca = match &opts.ca {
        Some(p) => format!("the CA file {} ({})", p.display(), f.ca_option()),
        None => format!("the public CAs (no {} given)", f.ca_option()),
    };
    let tls = e
        .get_ref()
        .and_then(|r| r.downcast_ref::<rustls::Error>())
        .cloned();
    let message = match tls {
        Some(rustls::Error::InvalidCertificate(c)) => match c {
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!(
                    "TLS: the server's certificate is not valid for '{host}': connect by a name \
                     the certificate holds, or use {} to check the chain only",
                    f.mode_option(Mode::VerifyCa)
                )
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => format!(
                "TLS: the server's certificate has expired: renew it, or use {} to skip verification",
                f.mode_option(Mode::Require)
            ),
            c => format!(
                "TLS: the server's certificate is not trusted by {ca} ({c:?}): give the CA that \
                 signed the server's certificate, or use {} to skip verification",
                f.mode_option(Mode::Require)
            ),
        },
        Some(e) => format!("TLS handshake failed: {e}"),
        None => format!("TLS handshake failed: {e}"),
    };
    DbError::fatal(message)
}

/// The `tls-server-end-point` channel binding data (RFC 5929 §4.1): the
/// hash of the server's certificate with the hash of its signature
/// algorithm, SHA-256 for MD5 and SHA-1. `None` for a signature algorithm
/// without a single hash (RSASSA-PSS, Ed25519), which servers cannot bind
/// either.
pub fn server_end_point_hash(cert_der: &[u8]) -> Option<Vec<u8>> {
    use sha2::Digest;
    let oid = signature_algorithm_oid(cert_der)?;
    // DER contents of the OIDs (X.509 / PKCS#1 / RFC 5758).
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    enum ShaBits {
        S224,
        S256,
        S384,
        S512,
    }
    let h = if let Some(rest) = oid.strip_prefix(RSA) {
        match rest {
            [4] | [5] | [11] => ShaBits::S256, // md5, sha1, sha256 WithRSAEncryption
            [12] => ShaBits::S384,
            [13] => ShaBits::S512,
            [14] => ShaBits::S224,
            _ => return None,
        }
    } else if let Some(rest) = oid.strip_prefix(ECDSA) {
        match rest {
            [1] | [3, 2] => ShaBits::S256, // ecdsa-with-SHA1, -SHA256
            [3, 1] => ShaBits::S224,
            [3, 3] => ShaBits::S384,
            [3, 4] => ShaBits::S512,
            _ => return None,
        }
    } else {
        return None;
    };
    Some(match h {
        ShaBits::S224 => sha2::Sha224::digest(cert_der).to_vec(),
        ShaBits::S256 => sha2::Sha256::digest(cert_der).to_vec(),
        ShaBits::S384 => sha2::Sha384::digest(cert_der).to_vec(),
        ShaBits::S512 => sha2::Sha512::digest(cert_der).to_vec(),
    })
}

/// The OID (its DER contents) of `Certificate.signatureAlgorithm`:
/// `SEQUENCE { tbsCertificate SEQUENCE, signatureAlgorithm SEQUENCE { OID, .. }, .. }`.
fn signature_algorithm_oid(der: &[u8]) -> Option<&[u8]> {
    let (tag, cert, _) = der_item(der)?;
    if tag != 0x30 {
        return None;
    }
    let (_, _, after_tbs) = der_item(cert)?;
    let (tag, alg, _) = der_item(after_tbs)?;
    if tag != 0x30 {
        return None;
    }
    let (tag, oid, _) = der_item(alg)?;
    (tag == 0x06).then_some(oid)
}

/// One DER item: its tag, contents and what follows it.
fn der_item(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, b) = b.split_first()?;
    let (&first, b) = b.split_first()?;
    let (len, b) = if first < 0x80 {
        (first as usize, b)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || b.len() < n {
            return None;
        }
        let len = b[..n].iter().fold(0usize, |a, &x| (a << 8) | x as usize);
        (len, &b[n..])
    };
    (b.len() >= len).then(|| (tag, &b[..len], &b[len..]))
}

/// `require` and `prefer`: encryption without authentication of the
/// server, as libpq and the mysql client do. The handshake signature is
/// still checked against the certificate's key.
#[derive(Debug)]
struct NoVerification(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root; the host name is not
/// checked.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_items_with_short_and_long_lengths_are_framed() {
        assert_eq!(
            der_item(&[0x06, 2, 1, 2, 9]),
            Some((6, &[1u8, 2][..], &[9u8][..]))
        );
        let mut long = vec![0x04, 0x81, 200];
        long.extend(std::iter::repeat_n(7, 200));
        let (t, c, rest) = der_item(&long).unwrap();
        assert_eq!((t, c.len(), rest.len()), (4, 200, 0));
        assert_eq!(der_item(&[0x04, 5, 1]), None, "a truncated item is refused");
    }

    #[test]
    fn the_channel_binding_hash_follows_the_certificate_signature_algorithm() {
        use sha2::Digest;
        let cert = |alg: &'static rcgen::SignatureAlgorithm| {
            let key = rcgen::KeyPair::generate_for(alg).unwrap();
            let params = rcgen::CertificateParams::new(vec!["localhost".into()]).unwrap();
            params.self_signed(&key).unwrap().der().to_vec()
        };
        let p256 = cert(&rcgen::PKCS_ECDSA_P256_SHA256);
        assert_eq!(
            server_end_point_hash(&p256).unwrap(),
            sha2::Sha256::digest(&p256).to_vec()
        );
        let p384 = cert(&rcgen::PKCS_ECDSA_P384_SHA384);
        assert_eq!(
            server_end_point_hash(&p384).unwrap(),
            sha2::Sha384::digest(&p384).to_vec()
        );
        let ed = cert(&rcgen::PKCS_ED25519);
        assert_eq!(
            server_end_point_hash(&ed),
            None,
            "Ed25519 has no hash to bind with"
        );
        assert_eq!(server_end_point_hash(b"not a certificate"), None);
    }

    #[test]
    fn modes_below_require_accept_a_server_without_tls() {
        assert!(!Mode::Disable.required());
        assert!(!Mode::Prefer.required());
        assert!(Mode::Require.required() && Mode::VerifyCa.required());
        assert!(Mode::VerifyFull.required());
    }

    #[test]
    fn a_client_certificate_without_its_key_is_refused() {
        let o = TlsOptions {
            mode: Mode::Require,
            cert: Some("/nonexistent/client.crt".into()),
            ..TlsOptions::disabled(Flavor::Postgres)
        };
        let e = o.client_config().unwrap_err();
        assert!(e.message.contains("give both"), "{}", e.message);
    }

    #[test]
    fn a_missing_ca_file_is_named_in_the_error() {
        let o = TlsOptions {
            mode: Mode::VerifyFull,
            ca: Some("/nonexistent/ca.pem".into()),
            ..TlsOptions::disabled(Flavor::Mysql)
        };
        let e = o.client_config().unwrap_err();
        assert!(e.message.contains("/nonexistent/ca.pem"), "{}", e.message);
    }
}
