//! MySQL and MariaDB through our own protocol client, [`wire`]
//! (synchronous, no TLS).
//!
//! Statements are prepared on the server once per connection (binary
//! protocol) and kept for the connection's life. Executions count the rows
//! without decoding them and allocate nothing, so the benchmark spends its
//! client CPU on the server's answers rather than on its own bookkeeping.

use std::path::PathBuf;
use std::time::Duration;

mod auth;
mod errno;
pub mod oracle;
pub mod server;
pub(crate) mod wire;

use self::wire::{Addr, Client, Opts, Stmt};
use crate::engine::kind::{BadOptionValue, EngineKind, EngineOption, UrlTarget};
use crate::engine::schema::{self, ColType, KeyedTable, SetTo, Table};
use crate::engine::tls::{Flavor, Mode, TlsInfo, TlsOptionError, TlsOptions, TlsSetup};
use crate::engine::url::{DbUrl, redact_url};
use crate::engine::{
    Caps, Conn, DbError, DbResult, Dialect, Driver, Meaning, Outcome, Param, PsMode, Rows,
    SqlAccess, StmtId, inline_params,
};

const DEFAULT_PORT: u16 = 3306;

/// The settings that decide durability, isolation and memory on MySQL and
/// MariaDB alike.
const FAIRNESS: &[&str] = &[
    "transaction_isolation",
    "tx_isolation",
    "innodb_flush_log_at_trx_commit",
    // Whether there is a binary log at all: sync_binlog = 1 means nothing
    // without one (8.0 has it on by default, 5.x and MariaDB off).
    "log_bin",
    "sync_binlog",
    "innodb_doublewrite",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    // 8.0.30 and later size the redo log with this instead.
    "innodb_redo_log_capacity",
];

/// The options of both kinds (one table, one flag: the registry offers it once).
const OPTIONS: &[EngineOption] = &[EngineOption {
    key: STORAGE_ENGINE,
    flag: "mysql-storage-engine",
    value_name: "ENGINE",
    help: "MySQL/MariaDB: storage engine of the tables rqps creates (default InnoDB), e.g. RocksDB.",
    check: check_storage_engine,
}];

/// Oracle MySQL in the engine registry. MySQL and MariaDB are two kinds
/// that share this folder's protocol client, dialect and counters, each with
/// its own throwaway server and prebuilt versions; results name the product
/// the server says it is ([`MysqlDriver`]'s `engine()`), whatever the URL
/// scheme: `mysql 8.0.33`, `mariadb 11.4.5-MariaDB`.
pub static KIND: EngineKind = EngineKind {
    library: None,
    face: crate::engine::Face::Sql,
    fairness_settings: FAIRNESS,
    name: "mysql",
    title: "MySQL",
    aliases: &["mysql"],
    schemes: &["mysql"],
    default_port: Some(DEFAULT_PORT),
    server: Some(&oracle::RECIPE),
    prebuilt: Some(&oracle::PREBUILT),
    // Debian has no Oracle MySQL (its mysqld is MariaDB's).
    apt_package: None,
    open_url: Some(open_url),
    options: OPTIONS,
};

/// MariaDB in the engine registry: this folder's client, MariaDB's server
/// ([`server`]) and its prebuilt versions.
pub static MARIADB: EngineKind = EngineKind {
    library: None,
    face: crate::engine::Face::Sql,
    fairness_settings: FAIRNESS,
    name: "mariadb",
    title: "MariaDB",
    aliases: &["mariadb"],
    schemes: &["mariadb"],
    default_port: Some(DEFAULT_PORT),
    server: Some(&server::RECIPE),
    prebuilt: Some(&server::PREBUILT),
    apt_package: Some(server::APT_PACKAGE),
    open_url: Some(open_url),
    options: OPTIONS,
};

/// The option that picks the storage engine of the tables rqps creates
/// (sysbench's `--mysql-storage-engine`).
pub const STORAGE_ENGINE: &str = "mysql_storage_engine";

fn open_url(
    t: &UrlTarget,
    options: &toml::Table,
    timeouts: crate::engine::Timeouts,
) -> DbResult<std::sync::Arc<dyn Driver>> {
    let mut d = MysqlDriver::from_url(&t.url, &t.raw)?.with_timeouts(timeouts);
    if let Some(e) = options.get(STORAGE_ENGINE) {
        let e = e.as_str().ok_or_else(|| {
            DbError::fatal(format!("{STORAGE_ENGINE}: expected a storage engine name"))
        })?;
        d = d.with_storage_engine(e)?;
    }
    Ok(std::sync::Arc::new(d))
}
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// ER_UNSUPPORTED_PS: the statement cannot be prepared; it is sent as text.
const UNSUPPORTED_PS: u16 = 1295;

pub struct MysqlDriver {
    opts: Opts,
    /// Where we connect, for messages: `host:port` or `socket PATH`.
    addr: String,
    /// The target URL with its password hidden.
    shown: String,
    dialect: MysqlDialect,
    /// What TLS the last connection negotiated.
    tls_seen: std::sync::Mutex<Option<TlsInfo>>,
    /// What the last connection's server said it is ([`Product`]).
    product: std::sync::atomic::AtomicU8,
    /// The authentication plugin the last login used.
    auth_seen: std::sync::Mutex<Option<&'static str>>,
    /// What the URL's scheme says the server is, until a connection tells.
    scheme_product: Product,
}

/// Which server a [`MysqlDriver`] reaches, as its handshake says: the name
/// results give the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Product {
    /// Not connected yet: the URL's scheme decides.
    Unknown = 0,
    Mysql = 1,
    Mariadb = 2,
}

/// The URL schemes of both kinds (a `mysql://` URL may reach MariaDB, and a
/// `mariadb://` one MySQL).
const SCHEMES: &[&str] = &["mysql", "mariadb"];

/// `ssl-mode`, `ssl-ca`, `ssl-cert`, `ssl-key` with the mysql client's
/// default (`PREFERRED`). Only `VERIFY_CA` and `VERIFY_IDENTITY` check the
/// server's certificate, as in the mysql client.
pub fn tls_options(u: &DbUrl) -> Result<TlsOptions, TlsOptionError> {
    let mode = match u.param("ssl-mode").map(str::to_ascii_uppercase).as_deref() {
        None | Some("PREFERRED") => Mode::Prefer,
        Some("DISABLED") => Mode::Disable,
        Some("REQUIRED") => Mode::Require,
        Some("VERIFY_CA") => Mode::VerifyCa,
        Some("VERIFY_IDENTITY") => Mode::VerifyFull,
        Some(m) => {
            return Err(TlsOptionError::UnknownMode {
                key: "ssl-mode",
                value: m.to_string(),
                expected: "DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY",
            });
        }
    };
    let file = |k: &str| u.param(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    Ok(TlsOptions {
        mode,
        ca: file("ssl-ca"),
        cert: file("ssl-cert"),
        key: file("ssl-key"),
        flavor: Flavor::Mysql,
    })
}

impl MysqlDriver {
    /// `mysql://user:pass@host:port/db` (or `mariadb://`); a unix socket is
    /// given as `?socket=/path/mysqld.sock`. The database name is required.
    /// `?get-server-public-key=true` or `?server-public-key-path=FILE` let
    /// `caching_sha2_password` send the password over plaintext, RSA-encrypted.
    pub fn new(url: &str) -> DbResult<Self> {
        Self::from_url(&DbUrl::parse(url, SCHEMES)?, url)
    }

    /// The driver of a parsed target; `url` is its text, for messages.
    pub fn from_url(u: &DbUrl, url: &str) -> DbResult<Self> {
        u.check_params(
            url,
            &[
                "socket",
                "ssl-mode",
                "ssl-ca",
                "ssl-cert",
                "ssl-key",
                "get-server-public-key",
                "server-public-key-path",
                "connect-timeout",
            ],
        )?;
        let connect_timeout = u.connect_timeout(url, "connect-timeout", CONNECT_TIMEOUT)?;
        let keys = key_opts(u, url)?;
        let bad = |what: String| DbError::fatal(format!("target '{}': {what}", redact_url(url)));
        let tls = tls_options(u).map_err(|e| bad(e.to_string()))?;
        let db = u.require_database(url)?.to_string();
        let socket = u.param("socket").filter(|s| !s.is_empty());
        if u.host.is_none() && socket.is_none() {
            return Err(DbError::fatal(format!(
                "target '{}' has no host: give one, or a unix socket as ?socket=/path/mysqld.sock",
                redact_url(url)
            )));
        }
        let host = u.host.clone().unwrap_or_else(|| "localhost".into());
        let port = u.port.unwrap_or(DEFAULT_PORT);
        let addr = match socket {
            Some(s) => format!("socket {s}"),
            None if host.contains(':') => format!("[{host}]:{port}"),
            None => format!("{host}:{port}"),
        };
        // As the mysql client: no TLS over a unix socket.
        let tls = if socket.is_some() {
            TlsSetup::disabled(Flavor::Mysql)
        } else {
            TlsSetup::new(tls).map_err(|e| bad(e.message))?
        };
        // Keepalive (60 s idle, 10 s probes, 6 of them) and a 120 s TCP user
        // timeout are set by the client on every TCP connection.
        let opts = Opts {
            addr: match socket {
                Some(s) => Addr::Unix(PathBuf::from(s)),
                None => Addr::Tcp { host, port },
            },
            user: u.user.clone().unwrap_or_default(),
            // Without one in the URL, the one in $MYSQL_PWD, as MySQL's own clients do.
            password: u
                .password
                .clone()
                .or_else(|| std::env::var("MYSQL_PWD").ok())
                .unwrap_or_default(),
            db: Some(db),
            connect_timeout,
            io_timeout: crate::engine::DEFAULT_STATEMENT_TIMEOUT,
            message_timeout: crate::engine::DEFAULT_MESSAGE_TIMEOUT,
            keys,
            tls,
        };
        Ok(MysqlDriver {
            opts,
            addr,
            shown: redact_url(url),
            dialect: MysqlDialect::default(),
            tls_seen: std::sync::Mutex::new(None),
            product: std::sync::atomic::AtomicU8::new(Product::Unknown as u8),
            auth_seen: std::sync::Mutex::new(None),
            scheme_product: if u.scheme == "mariadb" {
                Product::Mariadb
            } else {
                Product::Mysql
            },
        })
    }

    /// With these timeouts (default: [`crate::engine::Timeouts::default`]).
    pub fn with_timeouts(mut self, t: crate::engine::Timeouts) -> Self {
        self.opts.io_timeout = t.statement;
        self.opts.message_timeout = t.message;
        self
    }

    /// The storage engine of the tables rqps creates (sysbench's
    /// `--mysql-storage-engine`; default InnoDB). A name of letters, digits
    /// and underscores.
    pub fn with_storage_engine(mut self, engine: &str) -> DbResult<Self> {
        check_storage_engine(engine).map_err(|e| DbError::fatal(e.to_string()))?;
        self.dialect.engine = engine.to_string();
        Ok(self)
    }

    fn open(&self) -> DbResult<Client> {
        let c = Client::connect(&self.opts).map_err(|e| {
            let mut err = map_err(e);
            err.message = format!(
                "cannot connect to MySQL at {} ({}): {}",
                self.addr, self.shown, err.message
            );
            err
        })?;
        if let Ok(mut seen) = self.tls_seen.lock() {
            *seen = c.tls();
        }
        if let Ok(mut seen) = self.auth_seen.lock() {
            *seen = Some(c.auth_plugin());
        }
        let product = if c.is_mariadb() {
            Product::Mariadb
        } else {
            Product::Mysql
        };
        self.product
            .store(product as u8, std::sync::atomic::Ordering::Relaxed);
        Ok(c)
    }

    /// Runs `sql` and returns every row as text, columns in order.
    fn rows(&self, sql: &str) -> DbResult<Vec<Vec<String>>> {
        let mut conn = self.open()?;
        let rows = conn.query_rows(sql).map_err(map_err)?;
        Ok(rows
            .into_iter()
            .map(|r| r.into_iter().map(Option::unwrap_or_default).collect())
            .collect())
    }

    fn pairs(&self, sql: &str) -> DbResult<Vec<(String, String)>> {
        Ok(self
            .rows(sql)?
            .into_iter()
            .filter_map(|mut r| {
                (r.len() >= 2).then(|| {
                    let v = r.swap_remove(1);
                    (r.swap_remove(0), v)
                })
            })
            .collect())
    }
}

impl SqlAccess for MysqlDriver {
    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(MysqlConn {
            conn: self.open()?,
            stmts: Vec::new(),
            text: String::new(),
        }))
    }
    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }
}

impl Driver for MysqlDriver {
    /// Its reads and writes go through the client core.
    fn calls(&self) -> crate::engine::Calls {
        crate::engine::Calls::OnSockets(crate::engine::OnSockets::wire())
    }
    /// `mariadb` when the server said it is MariaDB, `mysql` otherwise;
    /// before the first connection, what the URL's scheme says.
    fn engine(&self) -> &'static str {
        let seen = self.product.load(std::sync::atomic::Ordering::Relaxed);
        let product = match seen {
            1 => Product::Mysql,
            2 => Product::Mariadb,
            _ => self.scheme_product,
        };
        match product {
            Product::Mariadb => MARIADB.name,
            Product::Mysql | Product::Unknown => KIND.name,
        }
    }
    fn auth(&self) -> Option<String> {
        self.auth_seen.lock().ok()?.map(str::to_string)
    }
    fn sql(&self) -> Option<&dyn SqlAccess> {
        Some(self)
    }
    fn caps(&self) -> Caps {
        Caps {
            prepared_statements: true,
            multi_row_insert: true,
            single_writer: false,
            pipelining: false,
            max_params: 65535,
        }
    }
    fn tls(&self) -> Option<TlsInfo> {
        self.tls_seen.lock().ok()?.clone()
    }
    fn version(&self) -> DbResult<String> {
        let mut c = self.open()?;
        let v = c.query_scalar("SELECT VERSION()").map_err(map_err)?;
        Ok(v.unwrap_or_default())
    }
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        self.pairs("SHOW GLOBAL VARIABLES")
    }
    fn status(&self) -> DbResult<Vec<(String, String)>> {
        self.pairs("SHOW GLOBAL STATUS")
    }
    /// `max_connections` less the other sessions connected now, and
    /// `max_prepared_stmt_count` less the statements prepared now.
    fn allowances(&self) -> DbResult<Vec<crate::engine::capacity::Allowance>> {
        use crate::engine::capacity::{Allowance, Resource};
        let vars = self.pairs(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('max_connections', 'max_prepared_stmt_count')",
        )?;
        let status = self.pairs(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Prepared_stmt_count')",
        )?;
        let num = |v: &[(String, String)], k: &str| {
            v.iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(k))
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
        };
        let mut out = Vec::new();
        for (setting, used, resource, others) in [
            (
                "max_connections",
                // This session is one of them.
                num(&status, "Threads_connected").map(|n| n.saturating_sub(1)),
                Resource::Connections,
                "other sessions",
            ),
            (
                "max_prepared_stmt_count",
                num(&status, "Prepared_stmt_count"),
                Resource::PreparedStatements,
                "prepared by other sessions",
            ),
        ] {
            let Some(max) = num(&vars, setting) else {
                continue;
            };
            let used = used.unwrap_or(0);
            out.push(Allowance {
                resource,
                allows: max.saturating_sub(used),
                setting: if used == 0 {
                    setting.to_string()
                } else {
                    // "1 other session", "2 other sessions".
                    let others = if used == 1 {
                        others.replacen("sessions", "session", 1)
                    } else {
                        others.to_string()
                    };
                    format!("{setting} {max}, {used} {others} now")
                },
            });
        }
        Ok(out)
    }
}

/// `get-server-public-key` and `server-public-key-path` of a target (the
/// key file is read here, so a missing one fails before any connection).
fn key_opts(u: &DbUrl, url: &str) -> DbResult<wire::KeyOpts> {
    let bad = |what: String| DbError::fatal(format!("target '{}': {what}", redact_url(url)));
    let get_server_public_key = match u.param("get-server-public-key") {
        None => false,
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "" | "true" | "1" | "on" | "yes" => true,
            "false" | "0" | "off" | "no" => false,
            _ => {
                return Err(bad(format!(
                    "get-server-public-key={v}: give true or false"
                )));
            }
        },
    };
    let server_public_key = match u.param("server-public-key-path").filter(|p| !p.is_empty()) {
        None => None,
        Some(p) => Some(std::fs::read_to_string(p).map_err(|e| {
            bad(format!(
                "server-public-key-path={p}: cannot read the server's RSA public key: {e}"
            ))
        })?),
    };
    Ok(wire::KeyOpts {
        get_server_public_key,
        server_public_key,
    })
}

/// A storage engine name is letters, digits and underscores (it is put into SQL).
pub fn check_storage_engine(engine: &str) -> Result<(), BadOptionValue> {
    if engine.is_empty()
        || !engine
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(BadOptionValue {
            what: "storage engine",
            value: engine.to_string(),
            expected: "a name such as InnoDB, RocksDB or Aria",
        });
    }
    Ok(())
}

/// MySQL and MariaDB SQL; tables are created with `engine`.
pub struct MysqlDialect {
    pub engine: String,
}

impl Default for MysqlDialect {
    fn default() -> Self {
        MysqlDialect {
            engine: "InnoDB".into(),
        }
    }
}

impl MysqlDialect {
    fn innodb(&self) -> bool {
        self.engine.eq_ignore_ascii_case("innodb")
    }
}

impl Dialect for MysqlDialect {
    fn client_driver_name(&self) -> Option<&'static str> {
        Some("mysql")
    }

    /// The id is `NOT NULL AUTO_INCREMENT` with the primary key as a table
    /// constraint, in the chosen storage engine. DEFAULT comes before NOT
    /// NULL, numbers quoted.
    fn create_table(&self, t: &Table) -> Vec<String> {
        let mut cols = vec![format!(
            "{} {} NOT NULL AUTO_INCREMENT",
            t.id.name,
            mysql_type(t.id.ty)
        )];
        cols.extend(
            t.columns
                .iter()
                .map(|c| schema::column_sql(c, &mysql_type(c.ty), true, true)),
        );
        cols.push(format!("PRIMARY KEY ({})", t.id.name));
        vec![format!(
            "CREATE TABLE {} ({}) ENGINE = {}",
            t.name,
            cols.join(", "),
            self.engine
        )]
    }
    /// In the chosen storage engine, spelled as [`MysqlDialect::create_table`] spells columns.
    fn create_keyed_table(&self, t: &KeyedTable) -> Vec<String> {
        vec![schema::keyed_table_sql(
            t,
            &mysql_type,
            true,
            true,
            &format!(" ENGINE = {}", self.engine),
        )]
    }
    fn insert_ignore(&self, t: &KeyedTable, rows: usize) -> String {
        format!(
            "INSERT IGNORE INTO {} ({}) VALUES {}",
            t.name,
            t.column_list(),
            t.placeholders(rows)
        )
    }
    fn upsert(&self, t: &KeyedTable, rows: usize, set: &[(&str, SetTo)]) -> String {
        let sets: Vec<String> = set
            .iter()
            .map(|(c, v)| match v {
                SetTo::New => format!("{c} = VALUES({c})"),
                SetTo::Add(n) => format!("{c} = {c} + {n}"),
            })
            .collect();
        format!(
            "INSERT INTO {} ({}) VALUES {} ON DUPLICATE KEY UPDATE {}",
            t.name,
            t.column_list(),
            t.placeholders(rows),
            sets.join(", ")
        )
    }
    /// Id 0 makes AUTO_INCREMENT assign the next id (as sysbench does).
    fn insert_auto_id_prefix(&self, t: &Table) -> String {
        format!(
            "INSERT INTO {} ({}, {}) VALUES (0, ",
            t.name,
            t.id.name,
            t.value_columns()
        )
    }
    /// Reference §1.6 also runs `RESET MASTER` and lowers
    /// `innodb_max_dirty_pages_pct[_lwm]` until after the sleep. Neither is
    /// done here: RESET MASTER destroys the binlogs of a server the user
    /// owns, and a global setting cannot be restored from a list of
    /// statements (the caller sleeps afterwards, with no hook to undo it).
    /// ANALYZE refreshes the statistics; FLUSH TABLES closes the tables and
    /// lets the engine write their pending changes, which is as far as one
    /// can go without changing server settings.
    fn settle(&self, tables: &[String]) -> Vec<String> {
        let mut v: Vec<String> = tables
            .iter()
            .map(|t| format!("ANALYZE TABLE {t}"))
            .collect();
        if !tables.is_empty() {
            v.push(format!("FLUSH TABLES {}", tables.join(", ")));
        }
        v
    }
    fn datetime_from_epoch(&self) -> &'static str {
        "FROM_UNIXTIME(?)"
    }
    /// InnoDB builds all of them in one ALTER TABLE; other engines (MyRocks)
    /// get one ALTER TABLE per index, as the reference does (§4.1).
    fn create_indexes(&self, t: &Table) -> Vec<String> {
        let adds: Vec<String> = t
            .indexes
            .iter()
            .map(|i| format!("ADD INDEX {} ({})", i.name, i.column_list()))
            .collect();
        if self.innodb() {
            vec![format!("ALTER TABLE {} {}", t.name, adds.join(", "))]
        } else {
            adds.iter()
                .map(|a| format!("ALTER TABLE {} {a}", t.name))
                .collect()
        }
    }
    fn table_with_index(&self, t: &Table, index: &str) -> String {
        format!("{} FORCE INDEX ({index})", t.name)
    }
    /// MySQL cannot LIMIT inside an IN sub-select, and needs none.
    fn delete_oldest(&self, t: &Table, n: usize) -> String {
        let (name, key) = (&t.name, &t.id.name);
        format!("DELETE FROM {name} WHERE {key} >= ? ORDER BY {key} ASC LIMIT {n}")
    }
    fn db_size_sql(&self) -> Option<&'static str> {
        Some(
            "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = DATABASE()",
        )
    }
    fn data_path_sql(&self) -> Option<&'static str> {
        Some("SELECT @@datadir")
    }
    /// MySQL 8 and MariaDB 11.1+ call it transaction_isolation; older
    /// versions tx_isolation.
    fn isolation_sql(&self) -> &'static [&'static str] {
        &["SELECT @@transaction_isolation", "SELECT @@tx_isolation"]
    }
    /// InnoDB counts whole seconds.
    fn lock_wait_timeout(&self, ms: u64) -> Option<String> {
        Some(format!(
            "SET SESSION innodb_lock_wait_timeout = {}",
            ms.div_ceil(1000).max(1)
        ))
    }
}

/// MySQL's names for the portable types.
fn mysql_type(t: ColType) -> String {
    match t {
        ColType::Double => "DOUBLE".into(),
        ColType::Text => "MEDIUMTEXT".into(),
        t => schema::standard_type(t),
    }
}

enum Slot {
    Prepared(Stmt),
    /// Text protocol: the SQL with `?`, filled in on every execution.
    Text(String),
}

pub struct MysqlConn {
    conn: Client,
    stmts: Vec<Slot>,
    /// Reused buffer for statements sent as text.
    text: String,
}

#[cold]
fn map_err(e: wire::Error) -> DbError {
    let message = e.to_string();
    match e.kind() {
        wire::Kind::Server => {
            let wire::Error::Server {
                code,
                state,
                message,
            } = e
            else {
                unreachable!("Kind::Server is an ERR packet")
            };
            let (class, meaning) = errno::of(code, &message);
            DbError {
                code: Some(code.to_string()),
                state,
                ..DbError::new(class, meaning, message)
            }
        }
        // I/O errors, the server closing the connection, packets out of
        // order: the connection is gone.
        wire::Kind::Broken => DbError::lost(message),
        // A statement the server left unanswered for the statement timeout
        // fails the test; its connection is closed.
        wire::Kind::TimedOut => DbError::fatal(message),
        wire::Kind::Fatal => match e {
            wire::Error::Tls(e) => e,
            wire::Error::ProtocolVersion(_)
            | wire::Error::NotProtocol41 { .. }
            | wire::Error::UnsupportedPlugin { .. } => {
                DbError::fatal(message).means(Meaning::Unsupported)
            }
            wire::Error::UnexpectedAuthPacket { .. } => {
                DbError::fatal(message).means(Meaning::Protocol)
            }
            _ => DbError::fatal(message),
        },
    }
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId> {
        let slot = match mode {
            PsMode::Auto => match self.conn.prepare(sql) {
                Ok(stmt) => Slot::Prepared(stmt),
                Err(wire::Error::Server { code, .. }) if code == UNSUPPORTED_PS => {
                    Slot::Text(sql.to_string())
                }
                Err(e) => return Err(map_err(e)),
            },
            PsMode::Disable => Slot::Text(sql.to_string()),
        };
        self.stmts.push(slot);
        Ok(StmtId(self.stmts.len() as u32 - 1))
    }

    #[inline]
    fn execute(&mut self, id: StmtId, params: &[Param<'_>]) -> DbResult<Outcome> {
        let Some(slot) = self.stmts.get(id.0 as usize) else {
            return Err(DbError::fatal(format!("no prepared statement {}", id.0)));
        };
        match slot {
            Slot::Prepared(stmt) => self.conn.execute(stmt, params).map_err(map_err),
            Slot::Text(sql) => {
                inline_params(sql, params, &mut self.text)?;
                self.conn.query(&self.text).map_err(map_err)
            }
        }
    }

    fn fetch(&mut self, id: StmtId, params: &[Param<'_>], out: &mut Rows) -> DbResult<Outcome> {
        let Some(slot) = self.stmts.get(id.0 as usize) else {
            return Err(DbError::fatal(format!("no prepared statement {}", id.0)));
        };
        match slot {
            Slot::Prepared(stmt) => self.conn.execute_rows(stmt, params, out).map_err(map_err),
            Slot::Text(sql) => {
                inline_params(sql, params, &mut self.text)?;
                self.conn.query_into(&self.text, out).map_err(map_err)
            }
        }
    }

    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        self.conn.query(sql).map_err(map_err)
    }

    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        self.conn.query_scalar(sql).map_err(map_err)
    }

    fn query_into(&mut self, sql: &str, out: &mut Rows) -> DbResult<Outcome> {
        self.conn.query_into(sql, out).map_err(map_err)
    }

    fn column_names(&mut self, sql: &str) -> Option<DbResult<Vec<String>>> {
        Some(self.conn.query_column_names(sql).map_err(map_err))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ErrorClass;

    #[test]
    fn keyed_tables_inserts_that_skip_and_upserts() {
        use crate::engine::schema::fixtures;
        let (d, t) = (MysqlDialect::default(), fixtures::keyed("kv"));
        assert_eq!(
            d.create_keyed_table(&t),
            [
                "CREATE TABLE kv (a BIGINT NOT NULL, b BIGINT NOT NULL, n INT DEFAULT '0' NOT NULL, \
              PRIMARY KEY (b, a)) ENGINE = InnoDB"
            ]
        );
        assert_eq!(
            d.insert_ignore(&t, 1),
            "INSERT IGNORE INTO kv (a, b, n) VALUES (?, ?, ?)"
        );
        assert_eq!(
            d.upsert(&t, 2, &[("n", SetTo::New), ("a", SetTo::Add(1))]),
            "INSERT INTO kv (a, b, n) VALUES (?, ?, ?), (?, ?, ?) \
             ON DUPLICATE KEY UPDATE n = VALUES(n), a = a + 1"
        );
    }

    #[test]
    fn rsa_key_options_are_read_from_the_url() {
        let d = MysqlDriver::new("mysql://u:pw@h/db?get-server-public-key=true").unwrap();
        assert!(d.opts.keys.get_server_public_key);
        assert!(d.opts.keys.server_public_key.is_none());
        let d = MysqlDriver::new("mysql://u:pw@h/db").unwrap();
        assert!(!d.opts.keys.get_server_public_key);
        let e = MysqlDriver::new("mysql://u:pw@h/db?get-server-public-key=maybe")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("true or false") && !e.contains("pw@"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("k.pem");
        std::fs::write(&key, "PEM").unwrap();
        let d = MysqlDriver::new(&format!(
            "mysql://u:pw@h/db?server-public-key-path={}",
            key.display()
        ))
        .unwrap();
        assert_eq!(d.opts.keys.server_public_key.as_deref(), Some("PEM"));
        let e = MysqlDriver::new("mysql://u:pw@h/db?server-public-key-path=/nonexistent/k.pem")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot read the server's RSA public key"), "{e}");
    }

    #[test]
    fn urls_give_the_right_options() {
        let d = MysqlDriver::new("mysql://root:pw@127.0.0.1/sbtest").unwrap();
        assert_eq!(
            d.opts.addr,
            Addr::Tcp {
                host: "127.0.0.1".into(),
                port: 3306
            }
        );
        assert_eq!(
            (d.opts.user.as_str(), d.opts.password.as_str()),
            ("root", "pw")
        );
        assert_eq!(d.opts.db.as_deref(), Some("sbtest"));
        assert_eq!(d.opts.io_timeout, crate::engine::DEFAULT_STATEMENT_TIMEOUT);
        assert_eq!(d.addr, "127.0.0.1:3306");
        assert!(!d.shown.contains("pw"));
        let d = MysqlDriver::new("mariadb://root@/sb?socket=/tmp/x/mysqld.sock").unwrap();
        assert_eq!(d.opts.addr, Addr::Unix("/tmp/x/mysqld.sock".into()));
        assert_eq!(d.addr, "socket /tmp/x/mysqld.sock");
        for bad in [
            "mysql://root:pw@127.0.0.1:3306",
            "mysql://root:pw@/sbtest",
            "mysql://root:pw@h/sbtest?sockett=/x",
            "postgres://root:pw@h/sbtest",
        ] {
            let e = MysqlDriver::new(bad).err().unwrap();
            assert_eq!(e.class, ErrorClass::Fatal);
            assert!(!e.to_string().contains(":pw"), "{e}");
        }
    }

    #[test]
    fn refused_connections_are_reconnect_and_hide_the_password() {
        // Port 1 on loopback: nothing listens there.
        let d = MysqlDriver::new("mysql://root:topsecret@127.0.0.1:1/sbtest").unwrap();
        let e = d.connect().err().unwrap();
        assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
        assert!(e.message.contains("127.0.0.1:1"), "{e}");
        assert!(!e.to_string().contains("topsecret"), "{e}");
    }

    #[test]
    fn errors_are_classified_by_mysql_error_number() {
        let server = |code| wire::Error::Server {
            code,
            state: None,
            message: "m".into(),
        };
        for (code, class) in [
            (1213, ErrorClass::Retry),
            (1205, ErrorClass::Retry),
            (1020, ErrorClass::Retry),
            (2006, ErrorClass::Reconnect),
            (2013, ErrorClass::Reconnect),
            (2055, ErrorClass::Reconnect),
            (1927, ErrorClass::Reconnect),
            (1053, ErrorClass::Reconnect),
            (4031, ErrorClass::Reconnect),
            (1062, ErrorClass::Fatal),
            (1045, ErrorClass::Fatal),
        ] {
            let e = map_err(server(code));
            assert_eq!((e.class, e.code), (class, Some(code.to_string())));
        }
        let e = map_err(wire::Error::Closed);
        assert_eq!((e.class, e.code.as_deref()), (ErrorClass::Reconnect, None));
        assert!(e.message.contains("closed the connection"), "{e}");
        let e = map_err(wire::Error::Parameters { takes: 2, given: 1 });
        assert_eq!((e.class, e.meaning()), (ErrorClass::Fatal, Meaning::Other));
        let e = map_err(wire::Error::ProtocolVersion(9));
        assert_eq!(e.meaning(), Meaning::Unsupported);
    }

    #[test]
    fn storage_engine_goes_into_the_ddl() {
        use crate::engine::schema::{Index, fixtures};
        let d = MysqlDriver::new("mysql://root@127.0.0.1/sb")
            .unwrap()
            .with_storage_engine("RocksDB")
            .unwrap();
        let dl = d.dialect();
        let (narrow, queue) = (fixtures::narrow("t1"), fixtures::queue("q1"));
        assert!(dl.create_table(&narrow)[0].ends_with("ENGINE = RocksDB"));
        assert!(dl.create_table(&queue)[0].ends_with("ENGINE = RocksDB"));
        let mut two = fixtures::narrow("pi1");
        two.indexes = vec![Index::new("a", &["x", "y"]), Index::new("b", &["z"])];
        assert_eq!(
            dl.create_indexes(&two),
            [
                "ALTER TABLE pi1 ADD INDEX a (x, y)",
                "ALTER TABLE pi1 ADD INDEX b (z)"
            ]
        );
        // InnoDB: one ALTER TABLE for all of them.
        assert_eq!(
            MysqlDialect::default().create_indexes(&two),
            ["ALTER TABLE pi1 ADD INDEX a (x, y), ADD INDEX b (z)"]
        );
        for bad in ["", "x;drop", "In no"] {
            assert!(
                MysqlDriver::new("mysql://root@127.0.0.1/sb")
                    .unwrap()
                    .with_storage_engine(bad)
                    .is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn settle_has_no_reset_master() {
        let s = MysqlDialect::default().settle(&["sbtest1".into(), "sbtest2".into()]);
        assert_eq!(
            s,
            [
                "ANALYZE TABLE sbtest1",
                "ANALYZE TABLE sbtest2",
                "FLUSH TABLES sbtest1, sbtest2"
            ]
        );
    }
}
