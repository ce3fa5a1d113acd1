//! PostgreSQL through rqps's own synchronous frontend ([`wire`]).
//!
//! Statements are prepared on the server once per connection with their
//! `?` placeholders numbered `$1, $2, ...`; parameters are encoded in
//! binary straight into the connection's output buffer in the type the
//! server chose for each placeholder (`int4` for the sysbench columns), and
//! result rows are counted without being decoded, so executing a statement
//! allocates nothing.

use std::path::PathBuf;
use std::time::Duration;

pub mod server;
mod sqlstate;
pub mod wire;

use self::wire::{ChannelBindingMode, Config, Host, PgConn};
use crate::engine::kind::{EngineKind, UrlTarget};
use crate::engine::schema::{self, ColType, KeyedTable, Table};
use crate::engine::tls::{Flavor, Mode, TlsInfo, TlsOptionError, TlsOptions, TlsSetup};
use crate::engine::url::{DbUrl, redact_url};
use crate::engine::{
    Caps, Conn, DbError, DbResult, Dialect, Driver, Outcome, Param, PsMode, Rows, SqlAccess,
    StmtId, inline_params,
};

const DEFAULT_PORT: u16 = 5432;

/// PostgreSQL in the engine registry.
pub static KIND: EngineKind = EngineKind {
    library: None,
    face: crate::engine::Face::Sql,
    fairness_settings: &[
        "default_transaction_isolation",
        "fsync",
        "synchronous_commit",
        "full_page_writes",
        "shared_buffers",
        "max_wal_size",
    ],
    name: "postgres",
    title: "PostgreSQL",
    aliases: &["postgres", "postgresql", "pg"],
    schemes: &["postgres", "postgresql"],
    default_port: Some(DEFAULT_PORT),
    server: Some(&server::RECIPE),
    prebuilt: Some(&server::PREBUILT),
    apt_package: Some(server::APT_PACKAGE),
    open_url: Some(open_url),
    options: &[],
};

fn open_url(
    t: &UrlTarget,
    _options: &toml::Table,
    timeouts: crate::engine::Timeouts,
) -> DbResult<std::sync::Arc<dyn Driver>> {
    Ok(std::sync::Arc::new(
        PostgresDriver::from_url(&t.url, &t.raw)?.with_timeouts(timeouts),
    ))
}
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct PostgresDriver {
    config: Config,
    /// Where we connect, for messages: `host:port` or `socket DIR (port N)`.
    addr: String,
    /// The target URL with its password hidden.
    shown: String,
    dialect: PostgresDialect,
    /// What TLS the last connection negotiated.
    tls_seen: std::sync::Mutex<Option<TlsInfo>>,
    /// How the last connection authenticated.
    auth_seen: std::sync::Mutex<Option<&'static str>>,
}

/// libpq's environment variable for each connection parameter rqps takes
/// from it: a URL without the parameter uses the variable, as libpq does.
const LIBPQ_ENV: &[(&str, &str)] = &[
    ("sslmode", "PGSSLMODE"),
    ("sslrootcert", "PGSSLROOTCERT"),
    ("sslcert", "PGSSLCERT"),
    ("sslkey", "PGSSLKEY"),
    ("channel_binding", "PGCHANNELBINDING"),
];

/// A connection parameter and where it came from (`sslmode`, or
/// `PGSSLMODE` when the URL lacks it), for messages.
fn setting(
    u: &DbUrl,
    key: &'static str,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Option<String>, &'static str) {
    if let Some(v) = u.param(key) {
        return (Some(v.to_string()), key);
    }
    match LIBPQ_ENV.iter().find(|(k, _)| *k == key) {
        Some(&(_, var)) => (env(var), var),
        None => (None, key),
    }
}

/// The process's environment, as libpq reads it.
fn process_env(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// `sslmode`, `sslrootcert`, `sslcert`, `sslkey` (or `PGSSLMODE` and the
/// other libpq variables) with libpq's defaults and rules: `prefer` by
/// default; `require` with a root certificate checks the chain as
/// `verify-ca` does; `sslrootcert=system` trusts the public CAs and needs
/// `verify-full`.
pub fn tls_options(u: &DbUrl) -> Result<TlsOptions, TlsOptionError> {
    tls_options_in(u, &process_env)
}

/// [`tls_options`] with the environment given.
fn tls_options_in(
    u: &DbUrl,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<TlsOptions, TlsOptionError> {
    let (given, from) = setting(u, "sslmode", env);
    let mut mode = match given.as_deref() {
        None | Some("prefer") => Mode::Prefer,
        Some("disable") => Mode::Disable,
        Some("allow") => Mode::Allow,
        Some("require") => Mode::Require,
        Some("verify-ca") => Mode::VerifyCa,
        Some("verify-full") => Mode::VerifyFull,
        Some(m) => {
            return Err(TlsOptionError::UnknownMode {
                key: from,
                value: m.to_string(),
                expected: "disable, allow, prefer, require, verify-ca or verify-full",
            });
        }
    };
    let file = |k: &'static str| {
        setting(u, k, env)
            .0
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let mut ca = file("sslrootcert");
    if ca.as_deref() == Some(std::path::Path::new("system")) {
        ca = None;
        match given.as_deref() {
            None => mode = Mode::VerifyFull,
            Some("verify-full") => {}
            Some(m) => return Err(TlsOptionError::SystemRootsNeedVerifyFull(m.to_string())),
        }
    } else if ca.is_some() && mode == Mode::Require {
        mode = Mode::VerifyCa;
    }
    Ok(TlsOptions {
        mode,
        ca,
        cert: file("sslcert"),
        key: file("sslkey"),
        flavor: Flavor::Postgres,
    })
}

/// `channel_binding` (or `PGCHANNELBINDING`), libpq's default `prefer`.
fn channel_binding_in(
    u: &DbUrl,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ChannelBindingMode, TlsOptionError> {
    let (given, from) = setting(u, "channel_binding", env);
    match given.as_deref() {
        None | Some("prefer") => Ok(ChannelBindingMode::Prefer),
        Some("disable") => Ok(ChannelBindingMode::Disable),
        Some("require") => Ok(ChannelBindingMode::Require),
        Some(m) => Err(TlsOptionError::UnknownMode {
            key: from,
            value: m.to_string(),
            expected: "disable, prefer or require",
        }),
    }
}

impl PostgresDriver {
    /// `postgres://user:pass@host:port/db` (or `postgresql://`); a unix
    /// socket directory is given libpq-style as `?host=/socket/dir`. The
    /// database name is required.
    pub fn new(url: &str) -> DbResult<Self> {
        Self::from_url(&DbUrl::parse(url, KIND.schemes)?, url)
    }

    /// With these timeouts (default: [`crate::engine::Timeouts::default`]).
    pub fn with_timeouts(mut self, t: crate::engine::Timeouts) -> Self {
        self.config.timeouts = t;
        self
    }

    /// The driver of a parsed target; `url` is its text, for messages.
    pub fn from_url(u: &DbUrl, url: &str) -> DbResult<Self> {
        u.check_params(
            url,
            &[
                "host",
                "port",
                "sslmode",
                "sslrootcert",
                "sslcert",
                "sslkey",
                "channel_binding",
                "application_name",
                "connect_timeout",
            ],
        )?;
        let connect_timeout = u.connect_timeout(url, "connect_timeout", CONNECT_TIMEOUT)?;
        let db = u.require_database(url)?.to_string();
        let bad = |what: String| DbError::fatal(format!("target '{}': {what}", redact_url(url)));
        let host = u
            .param("host")
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .or_else(|| u.host.clone())
            .ok_or_else(|| {
                bad("no host: give one, or a unix socket directory as ?host=/dir".into())
            })?;
        let port = match u.param("port") {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p != 0)
                .ok_or_else(|| bad(format!("bad port '{p}'")))?,
            None => u.port.unwrap_or(DEFAULT_PORT),
        };
        let unix = host.starts_with('/');
        let tls = tls_options(u).map_err(|e| bad(e.to_string()))?;
        let channel_binding =
            channel_binding_in(u, &process_env).map_err(|e| bad(e.to_string()))?;
        let user = u.user.clone().unwrap_or_else(|| "postgres".into());
        // Without one in the URL (or a password file), the one in
        // $PGPASSWORD, then ~/.pgpass (or $PGPASSFILE), as libpq does.
        let password = u
            .password
            .clone()
            .or_else(|| std::env::var("PGPASSWORD").ok())
            .or_else(|| {
                let key = crate::engine::secret::PgKey {
                    host: &host,
                    port,
                    database: &db,
                    user: &user,
                };
                crate::engine::secret::pgpass(&key, &mut |w| eprintln!("rqps: warning: {w}"))
            });
        // As libpq: no TLS over a unix socket, whatever sslmode says.
        let tls = if unix {
            TlsSetup::disabled(Flavor::Postgres)
        } else {
            TlsSetup::new(tls).map_err(|e| bad(e.message))?
        };
        let (host, addr) = if unix {
            let addr = format!("socket {host} (port {port})");
            (Host::Unix(PathBuf::from(host)), addr)
        } else if host.contains(':') {
            let addr = format!("[{host}]:{port}");
            (Host::Tcp(host), addr)
        } else {
            let addr = format!("{host}:{port}");
            (Host::Tcp(host), addr)
        };
        Ok(PostgresDriver {
            config: Config {
                host,
                port,
                user,
                password,
                database: db,
                application_name: u.param("application_name").unwrap_or("rqps").to_string(),
                connect_timeout,
                timeouts: Default::default(),
                tls,
                channel_binding,
            },
            tls_seen: std::sync::Mutex::new(None),
            auth_seen: std::sync::Mutex::new(None),
            addr,
            shown: redact_url(url),
            dialect: PostgresDialect,
        })
    }

    fn open(&self) -> DbResult<PgConn> {
        let c = PgConn::connect(&self.config).map_err(|mut err| {
            err.message = format!(
                "cannot connect to PostgreSQL at {} ({}): {}",
                self.addr, self.shown, err.message
            );
            err
        })?;
        if let Ok(mut seen) = self.tls_seen.lock() {
            *seen = c.tls().cloned();
        }
        if let Ok(mut seen) = self.auth_seen.lock() {
            *seen = Some(c.auth());
        }
        Ok(c)
    }

    /// Runs `sql` (simple protocol) and returns each row as (column name,
    /// text value) pairs, NULL as "".
    fn rows(c: &mut PgConn, sql: &str) -> DbResult<Vec<Vec<(String, String)>>> {
        let (names, rows) = c.query_rows(sql)?;
        Ok(rows
            .into_iter()
            .map(|r| {
                names
                    .iter()
                    .cloned()
                    .zip(r.into_iter().map(Option::unwrap_or_default))
                    .collect()
            })
            .collect())
    }
}

impl SqlAccess for PostgresDriver {
    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(PostgresConn {
            pg: self.open()?,
            stmts: Vec::new(),
            text: String::new(),
        }))
    }
    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }
}

impl Driver for PostgresDriver {
    /// Its reads and writes go through the client core.
    fn calls(&self) -> crate::engine::Calls {
        crate::engine::Calls::OnSockets(crate::engine::OnSockets::wire())
    }
    fn engine(&self) -> &'static str {
        KIND.name
    }
    fn sql(&self) -> Option<&dyn SqlAccess> {
        Some(self)
    }
    fn caps(&self) -> Caps {
        Caps {
            prepared_statements: true,
            multi_row_insert: true,
            single_writer: false,
            pipelining: true,
            // The protocol counts parameters in an Int16.
            max_params: 65535,
        }
    }
    fn tls(&self) -> Option<TlsInfo> {
        self.tls_seen.lock().ok()?.clone()
    }
    fn auth(&self) -> Option<String> {
        self.auth_seen.lock().ok()?.map(str::to_string)
    }
    fn version(&self) -> DbResult<String> {
        let mut c = self.open()?;
        Ok(c.query_scalar("SHOW server_version")?.unwrap_or_default())
    }
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        let mut c = self.open()?;
        Ok(Self::rows(
            &mut c,
            "SELECT name, setting FROM pg_settings ORDER BY name",
        )?
        .into_iter()
        .filter_map(|mut r| {
            (r.len() == 2).then(|| {
                let v = r.swap_remove(1).1;
                (r.swap_remove(0).1, v)
            })
        })
        .collect())
    }
    /// `view.column` → value for the current database's row of
    /// `pg_stat_database`, and `pg_stat_bgwriter`, `pg_stat_checkpointer`
    /// (17+) and `pg_stat_wal` (14+) where the server has them.
    /// `max_connections`, less the slots reserved for superusers when this
    /// user is none, and less the other client sessions open now.
    fn allowances(&self) -> DbResult<Vec<crate::engine::capacity::Allowance>> {
        let mut c = self.open()?;
        let mut num = |sql: &str| -> DbResult<u64> {
            Ok(c.query_scalar(sql)?
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0))
        };
        let max = num("SELECT setting FROM pg_settings WHERE name = 'max_connections'")?;
        let superuser = num(
            "SELECT CASE WHEN rolsuper THEN 1 ELSE 0 END FROM pg_roles WHERE rolname = current_user",
        )? == 1;
        let reserved = if superuser {
            0
        } else {
            num("SELECT coalesce(sum(setting::int), 0) FROM pg_settings \
                 WHERE name IN ('superuser_reserved_connections', 'reserved_connections')")?
        };
        let in_use = num("SELECT count(*) FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")?;
        let mut setting = "max_connections".to_string();
        if reserved > 0 || in_use > 0 {
            setting.push_str(&format!(" {max}"));
            if reserved > 0 {
                setting.push_str(&format!(", {reserved} reserved for superusers"));
            }
            if in_use > 0 {
                setting.push_str(&format!(", {in_use} in use by other sessions"));
            }
        }
        Ok(vec![crate::engine::capacity::Allowance {
            resource: crate::engine::capacity::Resource::Connections,
            allows: max.saturating_sub(reserved + in_use),
            setting,
        }])
    }
    fn status(&self) -> DbResult<Vec<(String, String)>> {
        let mut c = self.open()?;
        let mut out = Vec::new();
        for (view, filter) in [
            ("pg_stat_database", " WHERE datname = current_database()"),
            ("pg_stat_bgwriter", ""),
            ("pg_stat_checkpointer", ""),
            ("pg_stat_wal", ""),
        ] {
            let exists = c.query_scalar(&format!(
                "SELECT to_regclass('pg_catalog.{view}') IS NOT NULL"
            ))?;
            if exists.as_deref() != Some("t") {
                continue;
            }
            for row in Self::rows(&mut c, &format!("SELECT * FROM pg_catalog.{view}{filter}"))? {
                out.extend(row.into_iter().map(|(k, v)| (format!("{view}.{k}"), v)));
            }
        }
        Ok(out)
    }
}

pub struct PostgresDialect;

impl Dialect for PostgresDialect {
    fn client_driver_name(&self) -> Option<&'static str> {
        Some("pgsql")
    }

    /// The id is a SERIAL (BIGSERIAL for 64 bits) whose sequence hands out
    /// [`AutoId::cache`](crate::engine::schema::AutoId::cache) values per
    /// session when set. DEFAULT comes before NOT NULL, numbers quoted.
    fn create_table(&self, t: &Table) -> Vec<String> {
        let serial = match t.id.ty {
            ColType::BigInt => "BIGSERIAL",
            _ => "SERIAL",
        };
        let mut cols = vec![format!(
            "{} {serial}{}{}",
            t.id.name,
            if t.id.not_null { " NOT NULL" } else { "" },
            if t.key_on_column { " PRIMARY KEY" } else { "" }
        )];
        cols.extend(
            t.columns
                .iter()
                .map(|c| schema::column_sql(c, &pg_type(c.ty), true, true)),
        );
        if !t.key_on_column {
            cols.push(format!("PRIMARY KEY ({})", t.id.name));
        }
        let mut v = vec![format!("CREATE TABLE {} ({})", t.name, cols.join(", "))];
        if let Some(n) = t.id.cache {
            v.push(format!(
                "ALTER SEQUENCE {}_{}_seq CACHE {n}",
                t.name, t.id.name
            ));
        }
        v
    }
    /// Spelled as [`PostgresDialect::create_table`] spells columns.
    fn create_keyed_table(&self, t: &KeyedTable) -> Vec<String> {
        vec![schema::keyed_table_sql(t, &pg_type, true, true, "")]
    }
    /// Reference §1.6. Each statement goes out on its own through the
    /// simple protocol, outside any transaction, as VACUUM requires.
    /// CHECKPOINT needs superuser or (15+) the pg_checkpoint role.
    fn settle(&self, tables: &[String]) -> Vec<String> {
        let mut v: Vec<String> = tables
            .iter()
            .map(|t| format!("VACUUM (ANALYZE) {t}"))
            .collect();
        v.push("CHECKPOINT".into());
        v
    }
    fn db_size_sql(&self) -> Option<&'static str> {
        Some("SELECT pg_database_size(current_database())")
    }
    fn data_path_sql(&self) -> Option<&'static str> {
        // Needs superuser or pg_read_all_settings; without them the size on disk is not measured.
        Some("SHOW data_directory")
    }
    fn session_isolation(&self, level: &str) -> Option<String> {
        Some(format!(
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {level}"
        ))
    }
    fn isolation_sql(&self) -> &'static [&'static str] {
        &["SHOW transaction_isolation"]
    }
    fn lock_wait_timeout(&self, ms: u64) -> Option<String> {
        Some(format!("SET lock_timeout = {ms}"))
    }
}

/// Appends the values of one DataRow body to `out`.
fn push_row(body: &[u8], out: &mut Rows) -> std::io::Result<()> {
    let width = wire::data_row_width(body);
    if width == 0 {
        out.push_empty_row();
        return Ok(());
    }
    if out.width() == 0 {
        out.reset(width);
    }
    wire::data_row_values(body, |v| out.push(v))
}

/// Starts a result set in `out` from a RowDescription body, with its
/// column names.
fn begin_set(described: &[u8], out: &mut Rows) -> std::io::Result<()> {
    out.begin_set(wire::data_row_width(described));
    wire::column_names(described, |n| out.push_name(n)).map(|_| ())
}

/// A RowDescription (`T`) or DataRow (`D`) into `out`.
fn on_message(tag: u8, body: &[u8], out: &mut Rows) -> std::io::Result<()> {
    match tag {
        b'T' => begin_set(body, out),
        b'D' => push_row(body, out),
        _ => Ok(()),
    }
}

/// PostgreSQL's names for the portable types.
fn pg_type(t: ColType) -> String {
    match t {
        ColType::Float => "REAL".into(),
        ColType::DateTime => "TIMESTAMP WITHOUT TIME ZONE".into(),
        ColType::Timestamp => "TIMESTAMP WITH TIME ZONE".into(),
        t => schema::standard_type(t),
    }
}

/// Rewrites `?` placeholders as `$1, $2, ...`, leaving quoted strings,
/// quoted identifiers and comments alone.
pub fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    number_placeholders_into(sql, &mut out);
    out
}

/// [`number_placeholders`] into `out` (cleared first), for callers that
/// reuse a buffer.
pub fn number_placeholders_into(sql: &str, out: &mut String) {
    use std::fmt::Write;
    out.clear();
    let mut n = 0;
    let mut chars = sql.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '?' => {
                n += 1;
                let _ = write!(out, "${n}");
            }
            '\'' | '"' => {
                out.push(ch);
                for c in chars.by_ref() {
                    out.push(c);
                    // A doubled quote closes and reopens: same result.
                    if c == ch {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(ch);
                for c in chars.by_ref() {
                    out.push(c);
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                out.push(ch);
                let mut prev = '\0';
                for c in chars.by_ref() {
                    out.push(c);
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            _ => out.push(ch),
        }
    }
}

enum Slot {
    Prepared(wire::Statement),
    /// Simple protocol: the SQL with `?`, filled in on every execution.
    Text(String),
}

pub struct PostgresConn {
    pg: PgConn,
    stmts: Vec<Slot>,
    /// Reused buffer for statements sent as text.
    text: String,
}

impl Conn for PostgresConn {
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId> {
        let slot = match mode {
            PsMode::Auto => Slot::Prepared(self.pg.prepare(&number_placeholders(sql))?),
            PsMode::Disable => Slot::Text(sql.to_string()),
        };
        self.stmts.push(slot);
        Ok(StmtId(self.stmts.len() as u32 - 1))
    }

    #[inline]
    fn execute(&mut self, id: StmtId, params: &[Param<'_>]) -> DbResult<Outcome> {
        match self.stmts.get(id.0 as usize) {
            Some(Slot::Prepared(stmt)) => self.pg.execute(stmt, params),
            Some(Slot::Text(sql)) => {
                inline_params(sql, params, &mut self.text)?;
                self.pg.query(&self.text)
            }
            None => Err(DbError::fatal(format!("no prepared statement {}", id.0))),
        }
    }

    fn fetch(&mut self, id: StmtId, params: &[Param<'_>], out: &mut Rows) -> DbResult<Outcome> {
        out.reset(0);
        match self.stmts.get(id.0 as usize) {
            Some(Slot::Prepared(stmt)) => {
                if !stmt.described().is_empty() {
                    begin_set(stmt.described(), out).map_err(|e| DbError::fatal(e.to_string()))?;
                }
                self.pg
                    .execute_rows(stmt, params, |body| push_row(body, out))
            }
            Some(Slot::Text(sql)) => {
                inline_params(sql, params, &mut self.text)?;
                self.pg
                    .query_sets(&self.text, |tag, body| on_message(tag, body, out))
            }
            None => Err(DbError::fatal(format!("no prepared statement {}", id.0))),
        }
    }

    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        self.pg.query(sql)
    }

    fn in_transaction(&self) -> Option<bool> {
        Some(self.pg.in_transaction())
    }

    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        self.pg.query_scalar(sql)
    }

    fn query_into(&mut self, sql: &str, out: &mut Rows) -> DbResult<Outcome> {
        out.reset(0);
        self.pg
            .query_sets(sql, |tag, body| on_message(tag, body, out))
    }

    fn execute_unprepared(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        rows: Option<&mut Rows>,
    ) -> Option<DbResult<Outcome>> {
        number_placeholders_into(sql, &mut self.text);
        Some(match rows {
            Some(out) => {
                out.reset(0);
                self.pg
                    .execute_unnamed(&self.text, params, |tag, body| on_message(tag, body, out))
            }
            None => self.pg.execute_unnamed(&self.text, params, |_, _| Ok(())),
        })
    }

    fn column_names(&mut self, sql: &str) -> Option<DbResult<Vec<String>>> {
        Some(self.pg.query_rows(sql).map(|(names, _)| names))
    }

    fn pipeline_start(&mut self) -> DbResult<()> {
        self.pg.pipeline_start()
    }

    fn pipeline_queue(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        prepared: Option<&mut Option<StmtId>>,
    ) -> DbResult<()> {
        let Some(slot) = prepared else {
            number_placeholders_into(sql, &mut self.text);
            return self.pg.pipeline_unnamed(&self.text, params);
        };
        // Prepared on first use with a round trip of its own: nothing
        // queued has been sent, so it runs outside the pipeline.
        let id = match *slot {
            Some(id) => id,
            None => {
                let id = self.prepare(sql, PsMode::Auto)?;
                *slot = Some(id);
                id
            }
        };
        match self.stmts.get(id.0 as usize) {
            Some(Slot::Prepared(stmt)) => self.pg.pipeline_prepared(stmt, params),
            _ => Err(DbError::fatal(format!("no prepared statement {}", id.0))),
        }
    }

    fn pipeline_sync(&mut self) -> DbResult<()> {
        self.pg.pipeline_sync()
    }

    fn pipeline_end(&mut self, each: &mut dyn FnMut(Outcome)) -> DbResult<()> {
        self.pg.pipeline_end(each)
    }

    fn pipeline_discard(&mut self) {
        self.pg.pipeline_discard()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ErrorClass;

    #[test]
    fn keyed_tables_inserts_that_skip_and_upserts() {
        use crate::engine::SetTo;
        use crate::engine::schema::fixtures;
        let t = fixtures::keyed("kv");
        let d = PostgresDialect;
        assert_eq!(
            d.create_keyed_table(&t),
            [
                "CREATE TABLE kv (a BIGINT NOT NULL, b BIGINT NOT NULL, n INT DEFAULT '0' NOT NULL, \
              PRIMARY KEY (b, a))"
            ]
        );
        assert_eq!(
            d.insert_ignore(&t, 1),
            "INSERT INTO kv (a, b, n) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
        );
        assert_eq!(
            d.upsert(&t, 1, &[("n", SetTo::New), ("a", SetTo::Add(-1))]),
            "INSERT INTO kv (a, b, n) VALUES (?, ?, ?) ON CONFLICT (b, a) \
             DO UPDATE SET n = excluded.n, a = kv.a + -1"
        );
        assert_eq!(
            d.create_keyed_index(&t, &t.indexes[0]),
            "CREATE INDEX kv_n ON kv (a, n)"
        );
    }

    #[test]
    fn placeholders_are_numbered_outside_quotes_and_comments() {
        assert_eq!(
            number_placeholders("SELECT c FROM t WHERE id BETWEEN ? AND ?"),
            "SELECT c FROM t WHERE id BETWEEN $1 AND $2"
        );
        assert_eq!(
            number_placeholders("SELECT '?', \"a?\" -- ?\n, ? /* ? */ ,'it''s?', ?"),
            "SELECT '?', \"a?\" -- ?\n, $1 /* ? */ ,'it''s?', $2"
        );
        assert_eq!(number_placeholders("BEGIN"), "BEGIN");
    }

    #[test]
    fn urls_give_the_right_config() {
        let d = PostgresDriver::new("postgres://bob:pw@127.0.0.1/sbtest").unwrap();
        assert_eq!(d.config.port, 5432);
        assert_eq!(d.config.host, Host::Tcp("127.0.0.1".into()));
        assert_eq!(d.config.user, "bob");
        assert_eq!(d.config.password.as_deref(), Some("pw"));
        assert_eq!(d.config.database, "sbtest");
        assert_eq!(d.config.application_name, "rqps");
        assert_eq!(d.addr, "127.0.0.1:5432");
        assert!(!d.shown.contains("pw"));
        let d = PostgresDriver::new("postgresql://postgres@/sb?host=/tmp/run&port=5499").unwrap();
        assert_eq!(d.config.host, Host::Unix("/tmp/run".into()));
        assert_eq!(d.config.port, 5499);
        assert_eq!(d.config.password, None);
        assert_eq!(d.addr, "socket /tmp/run (port 5499)");
        let d = PostgresDriver::new("postgres://postgres@:5433/sb?host=%2Ftmp%2Frun").unwrap();
        assert_eq!(d.config.port, 5433);
        assert_eq!(d.config.host, Host::Unix("/tmp/run".into()));
        let d = PostgresDriver::new("postgres://[::1]:7/sb?application_name=x").unwrap();
        assert_eq!(d.config.host, Host::Tcp("::1".into()));
        assert_eq!(d.config.user, "postgres");
        assert_eq!(d.config.application_name, "x");
        assert_eq!(d.addr, "[::1]:7");
        for bad in [
            "postgres://u:pw@127.0.0.1:5432",
            "postgres://u:pw@/sbtest",
            "postgres://u:pw@h/sbtest?sslmode=required",
            "postgres://u:pw@h/sbtest?channel_binding=yes",
            "postgres://u:pw@h/sbtest?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem",
            "postgres://u:pw@h/sbtest?sslrootcert=system&sslmode=require",
            "postgres://u:pw@h/sbtest?port=x",
            "postgres://u:pw@h/sbtest?hots=/x",
            "mysql://u:pw@h/sbtest",
        ] {
            let e = PostgresDriver::new(bad).err().unwrap();
            assert_eq!(e.class, ErrorClass::Fatal);
            assert!(!e.to_string().contains(":pw"), "{e}");
        }
    }

    #[test]
    fn libpq_environment_variables_fill_in_what_the_url_leaves_out() {
        let env = |var: &str| match var {
            "PGSSLMODE" => Some("verify-full".to_string()),
            "PGSSLROOTCERT" => Some("/env/ca.pem".to_string()),
            "PGSSLCERT" => Some("/env/c.pem".to_string()),
            "PGSSLKEY" => Some("/env/k.pem".to_string()),
            "PGCHANNELBINDING" => Some("require".to_string()),
            _ => None,
        };
        let url = |q: &str| DbUrl::parse(&format!("postgres://u@h/db{q}"), KIND.schemes).unwrap();
        let o = tls_options_in(&url(""), &env).unwrap();
        assert_eq!(o.mode, Mode::VerifyFull);
        assert_eq!(o.ca.as_deref(), Some(std::path::Path::new("/env/ca.pem")));
        assert_eq!(o.cert.as_deref(), Some(std::path::Path::new("/env/c.pem")));
        assert_eq!(o.key.as_deref(), Some(std::path::Path::new("/env/k.pem")));
        assert_eq!(
            channel_binding_in(&url(""), &env).unwrap(),
            ChannelBindingMode::Require
        );
        // The URL wins over the environment, parameter by parameter.
        let o = tls_options_in(&url("?sslmode=disable&sslrootcert=/url/ca.pem"), &env).unwrap();
        assert_eq!(o.mode, Mode::Disable);
        assert_eq!(o.ca.as_deref(), Some(std::path::Path::new("/url/ca.pem")));
        assert_eq!(o.cert.as_deref(), Some(std::path::Path::new("/env/c.pem")));
        assert_eq!(
            channel_binding_in(&url("?channel_binding=disable"), &env).unwrap(),
            ChannelBindingMode::Disable
        );
        // A bad value from the environment is named by its variable.
        let bad = |var: &str| (var == "PGSSLMODE").then(|| "on".to_string());
        let e = tls_options_in(&url(""), &bad).unwrap_err().to_string();
        assert!(e.starts_with("PGSSLMODE=on: expected"), "{e}");
        let bad = |var: &str| (var == "PGCHANNELBINDING").then(|| "yes".to_string());
        let e = channel_binding_in(&url(""), &bad).unwrap_err().to_string();
        assert!(e.starts_with("PGCHANNELBINDING=yes: expected"), "{e}");
    }

    #[test]
    fn tls_options_follow_libpq() {
        let opts = |q: &str| {
            let u = DbUrl::parse(&format!("postgres://u@h/db{q}"), KIND.schemes).unwrap();
            tls_options_in(&u, &|_| None)
        };
        let mode = |q: &str| opts(q).unwrap().mode;
        assert_eq!(mode(""), Mode::Prefer, "libpq's default is prefer");
        assert_eq!(mode("?sslmode=disable"), Mode::Disable);
        assert_eq!(mode("?sslmode=allow"), Mode::Allow);
        assert_eq!(mode("?sslmode=require"), Mode::Require);
        assert_eq!(mode("?sslmode=verify-ca"), Mode::VerifyCa);
        assert_eq!(mode("?sslmode=verify-full"), Mode::VerifyFull);
        assert_eq!(
            mode("?sslmode=require&sslrootcert=/x/ca.pem"),
            Mode::VerifyCa,
            "require with a root certificate verifies the chain, as libpq"
        );
        assert_eq!(mode("?sslrootcert=system"), Mode::VerifyFull);
        let o = opts("?sslmode=verify-full&sslrootcert=/x/ca.pem&sslcert=/x/c.pem&sslkey=/x/k.pem")
            .unwrap();
        assert_eq!(o.ca.as_deref(), Some(std::path::Path::new("/x/ca.pem")));
        assert_eq!(o.cert.as_deref(), Some(std::path::Path::new("/x/c.pem")));
        assert_eq!(o.key.as_deref(), Some(std::path::Path::new("/x/k.pem")));
        assert!(
            opts("?sslmode=on")
                .unwrap_err()
                .to_string()
                .contains("verify-full")
        );
        // A unix socket never uses TLS, so its files are not even read.
        let d = PostgresDriver::new(
            "postgres://u@/db?host=/tmp&sslmode=verify-full&sslrootcert=/nonexistent",
        )
        .unwrap();
        assert_eq!(d.config.tls.mode(), Mode::Disable);
        let d = PostgresDriver::new("postgres://u@h/db?channel_binding=require").unwrap();
        assert_eq!(d.config.channel_binding, ChannelBindingMode::Require);
    }

    #[test]
    fn refused_connections_are_reconnect_and_hide_the_password() {
        let d = PostgresDriver::new("postgres://u:topsecret@127.0.0.1:1/sbtest").unwrap();
        let e = d.connect().err().unwrap();
        assert_eq!(e.class, ErrorClass::Reconnect, "{e}");
        assert!(e.message.contains("127.0.0.1:1"), "{e}");
        assert!(!e.to_string().contains("topsecret"), "{e}");
    }

    #[test]
    fn settle_vacuums_then_checkpoints() {
        assert_eq!(
            PostgresDialect.settle(&["sbtest1".into()]),
            ["VACUUM (ANALYZE) sbtest1", "CHECKPOINT"]
        );
    }
}
