//! The client side of the MySQL/MariaDB authentication plugins beyond the
//! scrambles of [`super::wire`]: what the full `caching_sha2_password`
//! exchange and `sha256_password` send, and MariaDB's `client_ed25519`.
//!
//! - Over a secure transport (a unix socket, or TLS) the password travels as
//!   it is, NUL-terminated.
//! - Over plaintext it is encrypted with the server's RSA public key:
//!   `(password + NUL) XOR scramble` (the scramble repeated), RSA-OAEP with
//!   SHA-1 and MGF1-SHA-1, as the server decrypts it. The key comes from a
//!   PEM file (`server-public-key-path=FILE`) or from the server itself
//!   (`get-server-public-key=true` for `caching_sha2_password`; always for
//!   `sha256_password`, as the mysql client does).
//! - `client_ed25519` signs the server's 32-byte nonce with Ed25519, the
//!   expanded secret key being SHA-512 of the password (of any length)
//!   instead of SHA-512 of a 32-byte seed.

use ed25519_dalek::hazmat::{ExpandedSecretKey, raw_sign};
use ed25519_dalek::{Signature, VerifyingKey};
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::DecodePublicKey;
use rsa::{Oaep, RsaPublicKey};
use sha1::Sha1;
use sha2::{Digest, Sha512};

/// Why the password could not be RSA-encrypted for the server.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RsaError {
    #[error("the RSA public key is not PEM text")]
    NotText,
    #[error("the RSA public key is not a PEM RSA public key ({0})")]
    NotRsaKey(#[source] rsa::pkcs1::Error),
    #[error("the server sent no scramble to encrypt the password with")]
    NoScramble,
    #[error(
        "cannot encrypt the password with the server's RSA key ({0}); a password this long needs a larger key, or TLS"
    )]
    Encrypt(#[source] rsa::Error),
}

/// The server's RSA public key as PEM (`BEGIN PUBLIC KEY`, as MySQL sends
/// and stores it, or `BEGIN RSA PUBLIC KEY`).
pub(crate) fn parse_public_key(pem: &[u8]) -> Result<RsaPublicKey, RsaError> {
    let text = std::str::from_utf8(pem)
        .map_err(|_| RsaError::NotText)?
        .trim_matches(|c: char| c == '\0' || c.is_whitespace());
    RsaPublicKey::from_public_key_pem(text)
        .or_else(|_| RsaPublicKey::from_pkcs1_pem(text))
        .map_err(RsaError::NotRsaKey)
}

/// `(password + NUL) XOR scramble`, encrypted with RSA-OAEP (SHA-1).
pub(crate) fn encrypt_password(
    password: &[u8],
    scramble: &[u8],
    key: &RsaPublicKey,
) -> Result<Vec<u8>, RsaError> {
    if scramble.is_empty() {
        return Err(RsaError::NoScramble);
    }
    let mut plain: Vec<u8> = password.to_vec();
    plain.push(0);
    for (i, b) in plain.iter_mut().enumerate() {
        *b ^= scramble[i % scramble.len()];
    }
    let mut rng = rsa::rand_core::OsRng;
    key.encrypt(&mut rng, Oaep::new::<Sha1>(), &plain)
        .map_err(RsaError::Encrypt)
}

/// MariaDB `client_ed25519`: the 64-byte signature of `nonce` by the key
/// whose expanded secret (clamped scalar, then the nonce prefix) is
/// SHA-512 of the password.
pub(crate) fn ed25519_sign(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    let expanded: [u8; 64] = Sha512::digest(password).into();
    let secret = ExpandedSecretKey::from_bytes(&expanded);
    let public = VerifyingKey::from(&secret);
    let sig: Signature = raw_sign::<Sha512>(&secret, nonce, &public);
    sig.to_bytes().to_vec()
}

/// The public key MariaDB stores for an ed25519 account with this password
/// (`PASSWORD('...')` under the ed25519 plugin shows it base64-encoded).
#[cfg(test)]
pub(crate) fn ed25519_public(password: &[u8]) -> [u8; 32] {
    let expanded: [u8; 64] = Sha512::digest(password).into();
    VerifyingKey::from(&ExpandedSecretKey::from_bytes(&expanded)).to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::RsaPrivateKey;
    use rsa::pkcs8::{EncodePublicKey, LineEnding};

    #[test]
    fn the_encrypted_password_decrypts_to_the_password_xor_the_scramble() {
        let mut rng = rsa::rand_core::OsRng;
        let private = RsaPrivateKey::new(&mut rng, 1024).unwrap();
        let pem = private
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        let mut sent = pem.into_bytes();
        sent.push(0);
        let key = parse_public_key(&sent).unwrap();
        let scramble: Vec<u8> = (1..=20).collect();
        let c = encrypt_password(b"hunter2", &scramble, &key).unwrap();
        assert_eq!(c.len(), 128);
        let plain = private.decrypt(Oaep::new::<Sha1>(), &c).unwrap();
        let back: Vec<u8> = plain
            .iter()
            .enumerate()
            .map(|(i, b)| b ^ scramble[i % 20])
            .collect();
        assert_eq!(back, b"hunter2\0");
        // Too long for the key: a message, not a panic.
        let long = vec![b'x'; 200];
        let e = encrypt_password(&long, &scramble, &key)
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger key"), "{e}");
        assert!(parse_public_key(b"-----BEGIN PUBLIC KEY-----\nzz\n").is_err());
    }

    #[test]
    fn ed25519_signatures_verify_with_the_key_mariadb_stores() {
        use ed25519_dalek::Verifier;
        // MariaDB's own example: PASSWORD('secret') under ed25519.
        let public = ed25519_public(b"secret");
        use base64::Engine;
        assert_eq!(
            base64::engine::general_purpose::STANDARD_NO_PAD.encode(public),
            "ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY"
        );
        let nonce = [7u8; 32];
        let sig = ed25519_sign(b"secret", &nonce);
        let vk = VerifyingKey::from_bytes(&public).unwrap();
        vk.verify(&nonce, &Signature::from_slice(&sig).unwrap())
            .unwrap();
        let other = VerifyingKey::from_bytes(&ed25519_public(b"secreT")).unwrap();
        assert!(
            other
                .verify(&nonce, &Signature::from_slice(&sig).unwrap())
                .is_err()
        );
    }
}
