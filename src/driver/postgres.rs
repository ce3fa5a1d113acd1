//! PostgreSQL through the `postgres` crate (synchronous, no TLS).
//!
//! Statements are prepared on the server once per connection with their
//! `?` placeholders numbered `$1, $2, ...`; parameters are encoded straight
//! into the protocol buffer in the type the server chose for each
//! placeholder (`int4` for the sysbench columns, which an `i64` would not
//! pass), so executing a statement builds no owned copies of its values.

use std::error::Error as StdError;
use std::time::Duration;

use ::postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use ::postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};
use bytes::BytesMut;

use super::url::{DbUrl, safe};
use super::{
    Caps, Conn, DbError, DbResult, Dialect, Driver, ErrorClass, Outcome, Param, PsMode, StmtId,
    inline_params,
};

const DEFAULT_PORT: u16 = 5432;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Statements with at most this many parameters (all of the hot path's but
/// the load's and IN lists of 100) bind them without allocating.
const STACK_PARAMS: usize = 16;

pub struct PostgresDriver {
    config: Config,
    /// Where we connect, for messages: `host:port` or `socket DIR (port N)`.
    addr: String,
    /// The target URL with its password hidden.
    shown: String,
    dialect: PostgresDialect,
}

impl PostgresDriver {
    /// `postgres://user:pass@host:port/db` (or `postgresql://`); a unix
    /// socket directory is given libpq-style as `?host=/socket/dir`. The
    /// database name is required.
    pub fn new(url: &str) -> DbResult<Self> {
        let u = DbUrl::parse(url, &["postgres", "postgresql"])?;
        u.check_params(url, &["host", "port", "sslmode", "application_name"])?;
        let db = u.require_database(url)?.to_string();
        let bad = |what: String| DbError::fatal(format!("target '{}': {what}", safe(url)));
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
        match u.param("sslmode") {
            None | Some("disable" | "allow" | "prefer") => {}
            Some(m) => {
                return Err(bad(format!(
                    "sslmode={m} is not supported: rqps connects without TLS"
                )));
            }
        }
        let mut config = Config::new();
        let addr = if host.starts_with('/') {
            config.host_path(&host);
            format!("socket {host} (port {port})")
        } else {
            config.host(&host);
            if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            }
        };
        config
            .port(port)
            .dbname(&db)
            .user(u.user.as_deref().unwrap_or("postgres"))
            .application_name(u.param("application_name").unwrap_or("rqps"))
            .connect_timeout(CONNECT_TIMEOUT)
            // A dead peer is noticed by TCP: keepalives while waiting for
            // an answer, the user timeout while our data goes unacknowledged.
            // No statement_timeout: it would also cut legitimate long
            // statements (CREATE INDEX, VACUUM on large tables).
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(60))
            .keepalives_interval(Duration::from_secs(10))
            .keepalives_retries(6)
            .tcp_user_timeout(Duration::from_secs(120));
        if let Some(p) = &u.password {
            config.password(p);
        }
        Ok(PostgresDriver {
            config,
            addr,
            shown: safe(url),
            dialect: PostgresDialect,
        })
    }

    fn open(&self) -> DbResult<Client> {
        self.config.connect(NoTls).map_err(|e| {
            let mut err = map_err(e);
            err.message = format!(
                "cannot connect to PostgreSQL at {} ({}): {}",
                self.addr, self.shown, err.message
            );
            err
        })
    }

    /// Runs `sql` (simple protocol) and returns each row as (column name,
    /// text value) pairs.
    fn rows(client: &mut Client, sql: &str) -> DbResult<Vec<Vec<(String, String)>>> {
        let mut out = Vec::new();
        for m in client.simple_query(sql).map_err(map_err)? {
            if let SimpleQueryMessage::Row(r) = m {
                out.push(
                    r.columns()
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            (
                                c.name().to_string(),
                                r.get(i).unwrap_or_default().to_string(),
                            )
                        })
                        .collect(),
                );
            }
        }
        Ok(out)
    }
}

impl Driver for PostgresDriver {
    fn engine(&self) -> &'static str {
        "postgres"
    }
    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(PostgresConn {
            client: self.open()?,
            stmts: Vec::new(),
            text: String::new(),
        }))
    }
    fn caps(&self) -> Caps {
        Caps {
            prepared_statements: true,
            multi_row_insert: true,
            single_writer: false,
            // The protocol counts parameters in an Int16.
            max_params: 65535,
        }
    }
    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }
    fn version(&self) -> DbResult<String> {
        let mut c = self.open()?;
        Ok(first_value(&mut c, "SHOW server_version")?.unwrap_or_default())
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
    fn status(&self) -> DbResult<Vec<(String, String)>> {
        let mut c = self.open()?;
        let mut out = Vec::new();
        for (view, filter) in [
            ("pg_stat_database", " WHERE datname = current_database()"),
            ("pg_stat_bgwriter", ""),
            ("pg_stat_checkpointer", ""),
            ("pg_stat_wal", ""),
        ] {
            let exists = first_value(
                &mut c,
                &format!("SELECT to_regclass('pg_catalog.{view}') IS NOT NULL"),
            )?;
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
    fn sbtest_create_table(&self, table: &str) -> String {
        format!(
            "CREATE TABLE {table} (id SERIAL NOT NULL, k INTEGER DEFAULT '0' NOT NULL, \
             c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, \
             PRIMARY KEY (id))"
        )
    }
    fn sbtest_insert_auto_id_prefix(&self, table: &str) -> String {
        format!("INSERT INTO {table} (k, c, pad) VALUES (")
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
}

/// Rewrites `?` placeholders as `$1, $2, ...`, leaving quoted strings,
/// quoted identifiers and comments alone.
pub fn number_placeholders(sql: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(sql.len() + 16);
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
    out
}

fn is_text(ty: &Type) -> bool {
    *ty == Type::TEXT
        || *ty == Type::BPCHAR
        || *ty == Type::VARCHAR
        || *ty == Type::NAME
        || *ty == Type::UNKNOWN
}

/// A parameter is encoded in the type the server inferred for its
/// placeholder, straight into the protocol buffer.
impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match *self {
            Param::Int(v) => {
                if *ty == Type::INT4 {
                    i32::try_from(v)?.to_sql(ty, out)
                } else if *ty == Type::INT8 {
                    v.to_sql(ty, out)
                } else if *ty == Type::INT2 {
                    i16::try_from(v)?.to_sql(ty, out)
                } else if *ty == Type::FLOAT8 {
                    (v as f64).to_sql(ty, out)
                } else if *ty == Type::FLOAT4 {
                    (v as f32).to_sql(ty, out)
                } else if is_text(ty) {
                    // Text's binary format is its UTF-8 bytes.
                    use std::fmt::Write;
                    write!(out, "{v}")?;
                    Ok(IsNull::No)
                } else {
                    Err(format!("cannot bind an integer to a parameter of type {ty}").into())
                }
            }
            Param::Text(s) => {
                if is_text(ty) {
                    out.extend_from_slice(s.as_bytes());
                    Ok(IsNull::No)
                } else if *ty == Type::INT4 {
                    s.trim().parse::<i32>()?.to_sql(ty, out)
                } else if *ty == Type::INT8 {
                    s.trim().parse::<i64>()?.to_sql(ty, out)
                } else if *ty == Type::INT2 {
                    s.trim().parse::<i16>()?.to_sql(ty, out)
                } else {
                    Err(format!("cannot bind text to a parameter of type {ty}").into())
                }
            }
        }
    }

    fn accepts(_ty: &Type) -> bool {
        // Checked per value in to_sql, where the error says what failed.
        true
    }

    to_sql_checked!();
}

fn map_err(e: ::postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        let class = match code {
            "40001" | "40P01" | "55P03" => ErrorClass::Retry,
            "57P01" | "57P02" | "57P03" => ErrorClass::Reconnect,
            c if c.starts_with("08") => ErrorClass::Reconnect,
            _ => ErrorClass::Fatal,
        };
        let message = match db.detail() {
            Some(d) => format!("{}: {d}", db.message()),
            None => db.message().to_string(),
        };
        return DbError {
            class,
            code: Some(code.to_string()),
            message,
        };
    }
    let io = e
        .source()
        .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some());
    // Closed, I/O and connect errors, and the crate's own timeouts: the
    // connection is gone or unusable.
    let lost = e.is_closed() || io || e.to_string().starts_with("timeout");
    let message = match e.source() {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    };
    DbError {
        class: if lost {
            ErrorClass::Reconnect
        } else {
            ErrorClass::Fatal
        },
        code: None,
        message,
    }
}

fn first_value(client: &mut Client, sql: &str) -> DbResult<Option<String>> {
    for m in client.simple_query(sql).map_err(map_err)? {
        if let SimpleQueryMessage::Row(r) = m {
            return Ok(r.get(0).map(str::to_string));
        }
    }
    Ok(None)
}

enum Slot {
    Prepared {
        stmt: Statement,
        /// Whether the statement returns a result set.
        rows: bool,
    },
    /// Simple protocol: the SQL with `?`, filled in on every execution.
    Text(String),
}

pub struct PostgresConn {
    client: Client,
    stmts: Vec<Slot>,
    /// Reused buffer for statements sent as text.
    text: String,
}

/// Runs `sql` through the simple protocol and reads all it returns.
fn simple(client: &mut Client, sql: &str) -> DbResult<Outcome> {
    let mut rows = 0u64;
    let mut affected = 0u64;
    let mut has_rows = false;
    let mut in_set = false;
    for m in client.simple_query(sql).map_err(map_err)? {
        match m {
            SimpleQueryMessage::RowDescription(_) => {
                has_rows = true;
                in_set = true;
            }
            SimpleQueryMessage::Row(_) => rows += 1,
            SimpleQueryMessage::CommandComplete(n) => {
                if !in_set {
                    affected += n;
                }
                in_set = false;
            }
            _ => {}
        }
    }
    Ok(if has_rows {
        Outcome::Rows(rows)
    } else {
        Outcome::Affected(affected)
    })
}

impl Conn for PostgresConn {
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId> {
        let slot = match mode {
            PsMode::Auto => {
                let stmt = self
                    .client
                    .prepare(&number_placeholders(sql))
                    .map_err(map_err)?;
                Slot::Prepared {
                    rows: !stmt.columns().is_empty(),
                    stmt,
                }
            }
            PsMode::Disable => Slot::Text(sql.to_string()),
        };
        self.stmts.push(slot);
        Ok(StmtId(self.stmts.len() as u32 - 1))
    }

    fn execute(&mut self, id: StmtId, params: &[Param<'_>]) -> DbResult<Outcome> {
        let slot = self
            .stmts
            .get(id.0 as usize)
            .ok_or_else(|| DbError::fatal(format!("no prepared statement {}", id.0)))?;
        match slot {
            Slot::Prepared { stmt, rows } => {
                // One round trip through the client (one block_on): rows
                // are collected, not pulled one by one.
                let run = |client: &mut Client, refs: &[&(dyn ToSql + Sync)]| {
                    if *rows {
                        client
                            .query(stmt, refs)
                            .map(|r| Outcome::Rows(r.len() as u64))
                    } else {
                        // BEGIN/COMMIT tags carry no count: 0.
                        client.execute(stmt, refs).map(Outcome::Affected)
                    }
                };
                let r = if params.len() <= STACK_PARAMS {
                    let mut refs: [&(dyn ToSql + Sync); STACK_PARAMS] = [&0i64; STACK_PARAMS];
                    for (r, p) in refs.iter_mut().zip(params) {
                        *r = p;
                    }
                    run(&mut self.client, &refs[..params.len()])
                } else {
                    let refs: Vec<&(dyn ToSql + Sync)> =
                        params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                    run(&mut self.client, &refs)
                };
                r.map_err(map_err)
            }
            Slot::Text(sql) => {
                let mut text = std::mem::take(&mut self.text);
                let r = inline_params(sql, params, &mut text)
                    .and_then(|_| simple(&mut self.client, &text));
                self.text = text;
                r
            }
        }
    }

    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        simple(&mut self.client, sql)
    }

    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        first_value(&mut self.client, sql)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(d.config.get_ports(), &[5432]);
        assert_eq!(d.config.get_user(), Some("bob"));
        assert_eq!(d.config.get_password(), Some(&b"pw"[..]));
        assert_eq!(d.config.get_dbname(), Some("sbtest"));
        assert_eq!(d.addr, "127.0.0.1:5432");
        assert!(!d.shown.contains("pw"));
        let d = PostgresDriver::new("postgresql://postgres@/sb?host=/tmp/run&port=5499").unwrap();
        assert_eq!(
            d.config.get_hosts(),
            &[::postgres::config::Host::Unix("/tmp/run".into())]
        );
        assert_eq!(d.config.get_ports(), &[5499]);
        assert_eq!(d.addr, "socket /tmp/run (port 5499)");
        let d = PostgresDriver::new("postgres://postgres@:5433/sb?host=%2Ftmp%2Frun").unwrap();
        assert_eq!(d.config.get_ports(), &[5433]);
        for bad in [
            "postgres://u:pw@127.0.0.1:5432",
            "postgres://u:pw@/sbtest",
            "postgres://u:pw@h/sbtest?sslmode=require",
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
