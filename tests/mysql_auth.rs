//! rqps's MySQL client against a small in-test server that implements the
//! server side of `caching_sha2_password` and `sha256_password` from the
//! protocol documentation (Debian ships no MySQL 8 to test against):
//! handshake V10, the fast path (password cached), the full path with the
//! server's RSA key (asked for, or from a key file) and over a secure
//! transport (a unix socket, or TLS with a certificate made at test time),
//! `sha256_password` with and without an auth switch. After authentication the server answers each COM_QUERY with one
//! row, which is all `Driver::version` needs.
//!
//! The server records every cleartext password it receives over TCP: the
//! client must never send one there.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rqps::engine::Driver;
use rqps::engine::mysql::MysqlDriver;
use rsa::pkcs8::{EncodePublicKey, LineEnding};
use rsa::{Oaep, RsaPrivateKey};
use sha2::{Digest, Sha256};

const CACHING_SHA2: &str = "caching_sha2_password";
const SHA256: &str = "sha256_password";
const VERSION: &str = "8.0.36-rqps-auth-test";

/// Capabilities of the server: 4.1 protocol, secure connection, plugin auth
/// (lenenc data), connect with db, deprecate EOF, long password (a MySQL).
const CLIENT_SSL: u32 = 1 << 11;
const CAPS: u32 = 1
    | (1 << 3)
    | (1 << 9)
    | (1 << 13)
    | (1 << 15)
    | (1 << 16)
    | (1 << 17)
    | (1 << 18)
    | (1 << 19)
    | (1 << 21)
    | (1 << 24);

/// What the server does, and what it saw.
struct Setup {
    /// The plugin named in the handshake.
    default_plugin: &'static str,
    /// The account's plugin (a switch when it differs from the default).
    account_plugin: &'static str,
    user: &'static str,
    password: &'static str,
    /// caching_sha2_password: whether the fast path may succeed.
    cached: bool,
    key: RsaPrivateKey,
    /// Whether the server has an RSA key to send when asked (else it sends
    /// an empty one).
    has_key: bool,
    /// Cleartext passwords received over TCP (must stay empty).
    leaked: Mutex<Vec<Vec<u8>>>,
    /// How each successful login went, e.g. "fast", "full-rsa", "full-secure".
    logins: Mutex<Vec<&'static str>>,
}

fn key() -> RsaPrivateKey {
    static KEY: std::sync::OnceLock<RsaPrivateKey> = std::sync::OnceLock::new();
    KEY.get_or_init(|| RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).unwrap())
        .clone()
}

fn public_pem(k: &RsaPrivateKey) -> String {
    k.to_public_key().to_public_key_pem(LineEnding::LF).unwrap()
}

trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

struct Conn {
    s: Box<dyn Stream>,
    seq: u8,
    secure: bool,
}

impl Conn {
    fn read(&mut self) -> Option<Vec<u8>> {
        let mut h = [0u8; 4];
        self.s.read_exact(&mut h).ok()?;
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        self.seq = h[3].wrapping_add(1);
        let mut b = vec![0; len];
        self.s.read_exact(&mut b).ok()?;
        Some(b)
    }
    fn write(&mut self, payload: &[u8]) {
        let mut p = (payload.len() as u32).to_le_bytes()[..3].to_vec();
        p.push(self.seq);
        p.extend_from_slice(payload);
        self.seq = self.seq.wrapping_add(1);
        let _ = self.s.write_all(&p);
    }
    fn ok(&mut self) {
        self.write(&[0, 0, 0, 2, 0, 0, 0]);
    }
    fn denied(&mut self, user: &str) {
        let mut p = vec![0xff];
        p.extend_from_slice(&1045u16.to_le_bytes());
        p.extend_from_slice(
            format!("#28000Access denied for user '{user}'@'localhost' (using password: YES)")
                .as_bytes(),
        );
        self.write(&p);
    }
}

fn lenenc_str(out: &mut Vec<u8>, s: &[u8]) {
    assert!(s.len() < 251);
    out.push(s.len() as u8);
    out.extend_from_slice(s);
}

/// `SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble)`.
fn sha2_scramble(pw: &[u8], scramble: &[u8]) -> Vec<u8> {
    let d1 = Sha256::digest(pw);
    let d2 = Sha256::digest(d1);
    let mut h = Sha256::new();
    h.update(d2);
    h.update(scramble);
    let m = h.finalize();
    d1.iter().zip(m.iter()).map(|(a, b)| a ^ b).collect()
}

impl Setup {
    fn new(default_plugin: &'static str, account_plugin: &'static str, cached: bool) -> Arc<Self> {
        Arc::new(Setup {
            default_plugin,
            account_plugin,
            user: "bench",
            password: "s3cret-Pw",
            cached,
            key: key(),
            has_key: true,
            leaked: Mutex::new(Vec::new()),
            logins: Mutex::new(Vec::new()),
        })
    }

    /// The password in a full-path packet: cleartext over a secure
    /// transport, else RSA-decrypted and unscrambled.
    fn password_in(
        &self,
        c: &mut Conn,
        b: &[u8],
        scramble: &[u8],
    ) -> Option<(Vec<u8>, &'static str)> {
        if c.secure {
            return Some((b.strip_suffix(&[0]).unwrap_or(b).to_vec(), "full-secure"));
        }
        match self.key.decrypt(Oaep::new::<sha1::Sha1>(), b) {
            Ok(plain) => {
                let pw: Vec<u8> = plain
                    .iter()
                    .enumerate()
                    .map(|(i, x)| x ^ scramble[i % scramble.len()])
                    .collect();
                Some((pw.strip_suffix(&[0]).unwrap_or(&pw).to_vec(), "full-rsa"))
            }
            Err(_) => {
                // Not encrypted: a cleartext password over plaintext TCP.
                self.leaked.lock().unwrap().push(b.to_vec());
                None
            }
        }
    }

    /// One connection: authentication, then queries until COM_QUIT. With
    /// `tls` (TCP only), the server offers CLIENT_SSL and answers an
    /// SSLRequest with the TLS handshake; TLS makes the channel secure.
    fn serve(
        &self,
        s: Box<dyn Stream>,
        secure: bool,
        tls: Option<(std::net::TcpStream, Arc<rustls::ServerConfig>)>,
    ) {
        let mut c = Conn { s, seq: 0, secure };
        let scramble: Vec<u8> = (0..20).map(|_| rand::random_range(1u8..=127)).collect();
        let mut hs = vec![10];
        hs.extend_from_slice(VERSION.as_bytes());
        hs.push(0);
        hs.extend_from_slice(&7u32.to_le_bytes());
        hs.extend_from_slice(&scramble[..8]);
        hs.push(0);
        let caps = if tls.is_some() {
            CAPS | CLIENT_SSL
        } else {
            CAPS
        };
        hs.extend_from_slice(&(caps as u16).to_le_bytes());
        hs.push(255);
        hs.extend_from_slice(&2u16.to_le_bytes());
        hs.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        hs.push(21);
        hs.extend_from_slice(&[0; 10]);
        hs.extend_from_slice(&scramble[8..]);
        hs.push(0);
        hs.extend_from_slice(self.default_plugin.as_bytes());
        hs.push(0);
        c.write(&hs);
        let Some(mut resp) = c.read() else { return };
        if let Some((tcp, config)) = tls
            && resp.len() == 32
            && u32::from_le_bytes(resp[..4].try_into().unwrap()) & CLIENT_SSL != 0
        {
            let conn = rustls::ServerConnection::new(config).unwrap();
            c.s = Box::new(rustls::StreamOwned::new(conn, tcp));
            c.secure = true;
            let Some(r) = c.read() else { return };
            resp = r;
        }
        // caps, max packet, charset, 23 filler; user; lenenc auth; db; plugin.
        let mut r = &resp[32..];
        let nul = |r: &mut &[u8]| -> Vec<u8> {
            let i = r.iter().position(|&b| b == 0).unwrap_or(r.len());
            let v = r[..i].to_vec();
            *r = &r[(i + 1).min(r.len())..];
            v
        };
        let user = String::from_utf8(nul(&mut r)).unwrap();
        // Length-encoded: one byte, or 0xfc and two (an RSA-encrypted password).
        let (n, skip) = match r[0] {
            0xfc => (u16::from_le_bytes([r[1], r[2]]) as usize, 3),
            n => (n as usize, 1),
        };
        let mut auth = r[skip..skip + n].to_vec();
        r = &r[skip + n..];
        let _db = nul(&mut r);
        let client_plugin = String::from_utf8(nul(&mut r)).unwrap();
        if client_plugin != self.account_plugin {
            let mut sw = vec![0xfe];
            sw.extend_from_slice(self.account_plugin.as_bytes());
            sw.push(0);
            sw.extend_from_slice(&scramble);
            sw.push(0);
            c.write(&sw);
            let Some(a) = c.read() else { return };
            auth = a;
        }
        let right = user == self.user;
        let pw = self.password.as_bytes();
        let login = if self.account_plugin == CACHING_SHA2 {
            if self.cached && right && auth == sha2_scramble(pw, &scramble) {
                c.write(&[1, 3]);
                Some("fast")
            } else {
                c.write(&[1, 4]);
                let Some(mut b) = c.read() else { return };
                if b == [2] && !c.secure {
                    let mut k = vec![1];
                    if self.has_key {
                        k.extend_from_slice(public_pem(&self.key).as_bytes());
                    }
                    c.write(&k);
                    let Some(next) = c.read() else { return };
                    b = next;
                }
                self.password_in(&mut c, &b, &scramble)
                    .filter(|(p, _)| right && p == pw)
                    .map(|(_, how)| how)
            }
        } else {
            // sha256_password: the password, encrypted or (secure) clear;
            // [1] asks for the key first.
            let mut b = auth;
            if b == [1] && !c.secure {
                let mut k = vec![1];
                if self.has_key {
                    k.extend_from_slice(public_pem(&self.key).as_bytes());
                }
                c.write(&k);
                let Some(next) = c.read() else { return };
                b = next;
            }
            self.password_in(&mut c, &b, &scramble)
                .filter(|(p, _)| right && p == pw)
                .map(|(_, how)| how)
        };
        match login {
            Some(how) => {
                self.logins.lock().unwrap().push(how);
                c.ok();
            }
            None => return c.denied(&user),
        }
        while let Some(cmd) = c.read() {
            match cmd.first() {
                Some(0x03) => {
                    let sql = String::from_utf8_lossy(&cmd[1..]).to_string();
                    let value = if sql.contains("VERSION()") {
                        VERSION
                    } else {
                        "1"
                    };
                    c.write(&[1]);
                    let mut def = Vec::new();
                    for s in ["def", "", "", "", "v", ""] {
                        lenenc_str(&mut def, s.as_bytes());
                    }
                    def.push(0x0c);
                    def.extend_from_slice(&33u16.to_le_bytes());
                    def.extend_from_slice(&256u32.to_le_bytes());
                    def.push(0xfd);
                    def.extend_from_slice(&[0, 0, 0, 0, 0]);
                    c.write(&def);
                    let mut row = Vec::new();
                    lenenc_str(&mut row, value.as_bytes());
                    c.write(&row);
                    c.write(&[0xfe, 0, 0, 2, 0, 0, 0]);
                }
                Some(0x01) | None => return,
                Some(_) => c.denied(&user),
            }
            c.seq = 0;
        }
    }
}

/// A server config with a self-signed certificate for 127.0.0.1 made now.
fn tls_config() -> Arc<rustls::ServerConfig> {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(ck.signing_key.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![ck.cert.der().clone()], key)
            .unwrap(),
    )
}

/// A server on a loopback port and on a unix socket in `dir`.
struct TestServer {
    setup: Arc<Setup>,
    port: u16,
    socket: PathBuf,
    dir: tempfile::TempDir,
}

fn start(setup: Arc<Setup>) -> TestServer {
    start_with(setup, None)
}

fn start_with(setup: Arc<Setup>, tls: Option<Arc<rustls::ServerConfig>>) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("mysqld.sock");
    let tcp = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let s = setup.clone();
    std::thread::spawn(move || {
        for conn in tcp.incoming().flatten() {
            let s = s.clone();
            let tls = tls.clone().map(|t| (conn.try_clone().unwrap(), t));
            std::thread::spawn(move || s.serve(Box::new(conn), false, tls));
        }
    });
    let s = setup.clone();
    std::thread::spawn(move || {
        for conn in unix.incoming().flatten() {
            let s = s.clone();
            std::thread::spawn(move || s.serve(Box::new(conn), true, None));
        }
    });
    TestServer {
        setup,
        port,
        socket,
        dir,
    }
}

impl TestServer {
    fn tcp(&self, password: &str, params: &str) -> String {
        format!(
            "mysql://bench:{password}@127.0.0.1:{}/sbtest{params}",
            self.port
        )
    }
    fn unix(&self, password: &str) -> String {
        format!(
            "mysql://bench:{password}@localhost/sbtest?socket={}",
            self.socket.display()
        )
    }
    /// The server's public key in a PEM file.
    fn key_file(&self) -> PathBuf {
        let p = self.dir.path().join("public_key.pem");
        std::fs::write(&p, public_pem(&self.setup.key)).unwrap();
        p
    }
    fn logins(&self) -> Vec<&'static str> {
        self.setup.logins.lock().unwrap().clone()
    }
    fn assert_nothing_leaked(&self) {
        assert!(
            self.setup.leaked.lock().unwrap().is_empty(),
            "a cleartext password went over TCP"
        );
    }
}

/// `Driver::version` through `url`: the server's version, or the error.
fn version(url: &str) -> Result<String, String> {
    let d = MysqlDriver::new(url).map_err(|e| e.to_string())?;
    d.version().map_err(|e| e.to_string())
}

/// Right password: the version; wrong one: "Access denied" naming `plugin`.
fn right_and_wrong(url: impl Fn(&str) -> String, plugin: &str) {
    assert_eq!(version(&url("s3cret-Pw")).unwrap(), VERSION);
    let e = version(&url("wrong-pw")).unwrap_err();
    assert!(
        e.contains("Access denied") && e.contains(plugin) && e.contains("--password-file"),
        "{e}"
    );
    assert!(!e.contains("wrong-pw") && !e.contains("s3cret-Pw"), "{e}");
}

#[test]
fn caching_sha2_password_fast_path_logs_in_with_a_cached_password() {
    let s = start(Setup::new(CACHING_SHA2, CACHING_SHA2, true));
    assert_eq!(version(&s.tcp("s3cret-Pw", "")).unwrap(), VERSION);
    assert_eq!(s.logins(), ["fast"]);
    // A wrong password misses the cache, as on a real server: the full
    // exchange follows, and fails.
    right_and_wrong(|p| s.tcp(p, "?get-server-public-key=true"), CACHING_SHA2);
    assert_eq!(s.logins(), ["fast", "fast"]);
    s.assert_nothing_leaked();
}

#[test]
fn caching_sha2_password_full_path_over_plaintext_asks_for_the_servers_rsa_key() {
    let s = start(Setup::new(CACHING_SHA2, CACHING_SHA2, false));
    right_and_wrong(|p| s.tcp(p, "?get-server-public-key=true"), CACHING_SHA2);
    assert_eq!(s.logins(), ["full-rsa"]);
    s.assert_nothing_leaked();
}

#[test]
fn caching_sha2_password_full_path_over_plaintext_uses_a_key_file() {
    let s = start(Setup::new(CACHING_SHA2, CACHING_SHA2, false));
    let key = s.key_file();
    right_and_wrong(
        |p| s.tcp(p, &format!("?server-public-key-path={}", key.display())),
        CACHING_SHA2,
    );
    assert_eq!(s.logins(), ["full-rsa"]);
    s.assert_nothing_leaked();
}

#[test]
fn caching_sha2_password_full_path_sends_the_password_over_a_unix_socket() {
    let s = start(Setup::new(CACHING_SHA2, CACHING_SHA2, false));
    right_and_wrong(|p| s.unix(p), CACHING_SHA2);
    assert_eq!(s.logins(), ["full-secure"]);
}

#[test]
fn caching_sha2_password_full_path_over_plaintext_without_a_key_says_how_to_get_one() {
    let s = start(Setup::new(CACHING_SHA2, CACHING_SHA2, false));
    let e = version(&s.tcp("s3cret-Pw", "")).unwrap_err();
    for remedy in [
        "caching_sha2_password",
        "get-server-public-key=true",
        "server-public-key-path=FILE",
        "ssl-mode=REQUIRED",
    ] {
        assert!(e.contains(remedy), "{remedy} missing in: {e}");
    }
    assert!(!e.contains("s3cret-Pw"));
    assert!(s.logins().is_empty());
    s.assert_nothing_leaked();
}

#[test]
fn a_bad_key_file_is_refused_before_connecting() {
    let s = start(Setup::new(CACHING_SHA2, CACHING_SHA2, false));
    let e =
        version(&s.tcp("s3cret-Pw", "?server-public-key-path=/nonexistent/key.pem")).unwrap_err();
    assert!(
        e.contains("server-public-key-path") && e.contains("cannot read"),
        "{e}"
    );
    let junk = s.dir.path().join("junk.pem");
    std::fs::write(&junk, "not a key").unwrap();
    let e = version(&s.tcp(
        "s3cret-Pw",
        &format!("?server-public-key-path={}", junk.display()),
    ))
    .unwrap_err();
    assert!(
        e.contains("caching_sha2_password") && e.contains("RSA public key"),
        "{e}"
    );
    s.assert_nothing_leaked();
}

#[test]
fn sha256_password_asks_for_the_key_over_plaintext_and_sends_it_clear_over_a_socket() {
    let s = start(Setup::new(SHA256, SHA256, false));
    right_and_wrong(|p| s.tcp(p, ""), SHA256);
    let key = s.key_file();
    right_and_wrong(
        |p| s.tcp(p, &format!("?server-public-key-path={}", key.display())),
        SHA256,
    );
    right_and_wrong(|p| s.unix(p), SHA256);
    assert_eq!(s.logins(), ["full-rsa", "full-rsa", "full-secure"]);
    s.assert_nothing_leaked();
}

#[test]
fn sha256_password_after_an_auth_switch() {
    let s = start(Setup::new(CACHING_SHA2, SHA256, false));
    right_and_wrong(|p| s.tcp(p, ""), SHA256);
    right_and_wrong(|p| s.unix(p), SHA256);
    assert_eq!(s.logins(), ["full-rsa", "full-secure"]);
    s.assert_nothing_leaked();
}

#[test]
fn caching_sha2_password_after_an_auth_switch_from_native() {
    let s = start(Setup::new("mysql_native_password", CACHING_SHA2, false));
    right_and_wrong(|p| s.tcp(p, "?get-server-public-key=true"), CACHING_SHA2);
    assert_eq!(s.logins(), ["full-rsa"]);
    s.assert_nothing_leaked();
}

#[test]
fn a_server_without_an_rsa_key_gives_the_ways_out() {
    for plugin in [CACHING_SHA2, SHA256] {
        let mut setup = Setup::new(plugin, plugin, false);
        Arc::get_mut(&mut setup).unwrap().has_key = false;
        let s = start(setup);
        let e = version(&s.tcp("s3cret-Pw", "?get-server-public-key=true")).unwrap_err();
        for part in [
            plugin,
            "RSA public key",
            "server-public-key-path=FILE",
            "ssl-mode=REQUIRED",
        ] {
            assert!(e.contains(part), "{part} missing in: {e}");
        }
        assert!(!e.contains("s3cret-Pw"), "{e}");
        s.assert_nothing_leaked();
    }
}

#[test]
fn the_full_paths_send_the_password_itself_over_tls() {
    for plugin in [CACHING_SHA2, SHA256] {
        let s = start_with(Setup::new(plugin, plugin, false), Some(tls_config()));
        right_and_wrong(|p| s.tcp(p, "?ssl-mode=REQUIRED"), plugin);
        assert_eq!(s.logins(), ["full-secure"], "{plugin}");
        // The same server without TLS on the client's side: the RSA path.
        right_and_wrong(
            |p| s.tcp(p, "?ssl-mode=DISABLED&get-server-public-key=true"),
            plugin,
        );
        assert_eq!(s.logins(), ["full-secure", "full-rsa"], "{plugin}");
        s.assert_nothing_leaked();
    }
}
