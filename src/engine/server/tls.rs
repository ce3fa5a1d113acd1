//! Certificates for a throwaway server that requires TLS
//! ([`ServerSpec::require_tls`](super::ServerSpec::require_tls)).
//!
//! [`TlsFiles::make`] creates, at run time, a CA, a server certificate it
//! signs for `localhost` and `127.0.0.1` (the names a throwaway server is
//! reached by), and a client certificate it signs, for clients that insist on
//! presenting one (sysbench's MySQL driver does). The CA's private key is
//! never written: once the two certificates are signed, nobody can make
//! another one this server would trust. Every file is created anew with mode
//! 0600 in a directory of mode 0700; the server's files (CA, certificate,
//! key) and the directory belong to the user the server runs as, so that
//! PostgreSQL accepts its key and a server run as `nobody` can read them.
//!
//! Each recipe turns these files into its own settings (`ssl_cert`...
//! for MariaDB, `ssl_cert_file`... and `hostssl` rules for PostgreSQL), in
//! its engine's folder; this module names no engine.

use std::fs;
use std::path::{Path, PathBuf};

use super::util::{FileError, set_mode, write_private};

/// The PEM files of one throwaway server's TLS (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The CA certificate that signed the other two: what a client that
    /// verifies the server trusts, and what the server checks a client
    /// certificate against.
    pub ca: PathBuf,
    /// The server's certificate, for `localhost` and `127.0.0.1`.
    pub cert: PathBuf,
    /// The server certificate's private key.
    pub key: PathBuf,
    /// A client certificate the CA signed (CN `rqps client`).
    pub client_cert: PathBuf,
    /// Its private key.
    pub client_key: PathBuf,
}

/// Why the TLS files could not be made. A server's start reports it as its
/// own error ([`ServerError`](super::ServerError)), with the same message.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Making a certificate failed (a bug or a broken RNG, never the user's
    /// input).
    #[error("cannot make the {what} for TLS: {source}")]
    Cert {
        what: &'static str,
        #[source]
        source: rcgen::Error,
    },
    /// A file or the directory could not be created, written, chmod-ed or
    /// chown-ed.
    #[error(transparent)]
    File(#[from] FileError),
}

/// What went wrong making a certificate (a bug or a broken RNG, never the
/// user's input).
fn cert_error(what: &'static str) -> impl FnOnce(rcgen::Error) -> TlsError {
    move |source| TlsError::Cert { what, source }
}

impl TlsFiles {
    /// Creates `dir` (which must not exist) and the files in it. `owner`:
    /// the uid and gid the server runs as when it is not this process's
    /// user (see the module docs).
    pub fn make(dir: &Path, owner: Option<(u32, u32)>) -> Result<TlsFiles, TlsError> {
        fs::create_dir(dir).map_err(FileError::at(format!("cannot create {}", dir.display())))?;
        set_mode(dir, 0o700)?;
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new())
            .map_err(cert_error("CA certificate"))?;
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "rqps throwaway server CA");
        ca.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let ca_key = rcgen::KeyPair::generate().map_err(cert_error("CA key"))?;
        let issuer = rcgen::CertifiedIssuer::self_signed(ca, ca_key)
            .map_err(cert_error("CA certificate"))?;
        let signed = |names: Vec<String>, cn: &str, what: &'static str| {
            let mut p = rcgen::CertificateParams::new(names).map_err(cert_error(what))?;
            p.distinguished_name.push(rcgen::DnType::CommonName, cn);
            let key = rcgen::KeyPair::generate().map_err(cert_error(what))?;
            let cert = p.signed_by(&key, &*issuer).map_err(cert_error(what))?;
            Ok::<_, TlsError>((cert.pem(), key.serialize_pem()))
        };
        let (cert, key) = signed(
            vec!["localhost".into(), "127.0.0.1".into()],
            "localhost",
            "server certificate",
        )?;
        let (client_cert, client_key) = signed(Vec::new(), "rqps client", "client certificate")?;
        let files = TlsFiles {
            ca: dir.join("ca.pem"),
            cert: dir.join("server.pem"),
            key: dir.join("server.key"),
            client_cert: dir.join("client.pem"),
            client_key: dir.join("client.key"),
        };
        for (path, text) in [
            (&files.ca, issuer.pem()),
            (&files.cert, cert),
            (&files.key, key),
            (&files.client_cert, client_cert),
            (&files.client_key, client_key),
        ] {
            write_private(path, &text)?;
        }
        if let Some((uid, gid)) = owner {
            for path in [dir, &files.ca, &files.cert, &files.key] {
                std::os::unix::fs::lchown(path, Some(uid), Some(gid))
                    .map_err(FileError::at(format!("cannot chown {}", path.display())))?;
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn every_file_is_private_and_the_ca_key_is_not_kept() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("tls");
        let f = TlsFiles::make(&dir, None).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        let all = [&f.ca, &f.cert, &f.key, &f.client_cert, &f.client_key];
        for p in all {
            assert_eq!(mode(p), 0o600, "{}", p.display());
        }
        assert_eq!(fs::read_dir(&dir).unwrap().count(), all.len());
        for p in [&f.ca, &f.cert, &f.client_cert] {
            let pem = fs::read_to_string(p).unwrap();
            assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        }
        for p in [&f.key, &f.client_key] {
            let pem = fs::read_to_string(p).unwrap();
            assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{pem}");
        }
        // A second server's files never land on the first's.
        let e = TlsFiles::make(&dir, None).unwrap_err();
        assert!(e.to_string().starts_with("cannot create "), "{e}");
    }

    #[test]
    fn the_server_certificate_is_trusted_for_the_loopback_names_through_the_ca_only() {
        use rustls::client::danger::ServerCertVerifier as _;
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
        let parent = tempfile::tempdir().unwrap();
        let f = TlsFiles::make(&parent.path().join("a"), None).unwrap();
        let other = TlsFiles::make(&parent.path().join("b"), None).unwrap();
        let verifier = |ca: &Path| {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from_pem_file(ca).unwrap())
                .unwrap();
            rustls::client::WebPkiServerVerifier::builder_with_provider(
                roots.into(),
                rustls::crypto::ring::default_provider().into(),
            )
            .build()
            .unwrap()
        };
        let cert = CertificateDer::from_pem_file(&f.cert).unwrap();
        let check = |ca: &Path, name: &'static str| {
            verifier(ca).verify_server_cert(
                &cert,
                &[],
                &ServerName::try_from(name).unwrap(),
                &[],
                UnixTime::now(),
            )
        };
        for name in ["localhost", "127.0.0.1"] {
            check(&f.ca, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(check(&f.ca, "db.example.com").is_err());
        assert!(check(&other.ca, "localhost").is_err());
    }
}
