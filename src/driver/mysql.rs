//! MySQL and MariaDB through the `mysql` crate (synchronous, no TLS).
//!
//! Statements are prepared on the server once per connection (binary
//! protocol) and kept for the connection's life; the crate's statement
//! cache is turned off because it closes the least recently used statement
//! on the server when it overflows, which would invalidate handles we keep.

use std::time::Duration;

use ::mysql::prelude::{Protocol, Queryable};
use ::mysql::{Opts, OptsBuilder, Params, QueryResult, Statement, Value};

use super::url::{DbUrl, safe};
use super::{
    Caps, Conn, DbError, DbResult, Dialect, Driver, ErrorClass, Outcome, Param, PsMode, StmtId,
    inline_params,
};

const DEFAULT_PORT: u16 = 3306;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for one read or write on the socket: a server that stopped
/// answering fails the statement instead of hanging it. Long enough for
/// `CREATE INDEX` on large tables, which sends nothing until it is done.
const IO_TIMEOUT: Duration = Duration::from_secs(600);

/// MySQL error numbers (server and client) and what the runner does on them.
const RETRY_CODES: &[u16] = &[
    1213, // ER_LOCK_DEADLOCK
    1205, // ER_LOCK_WAIT_TIMEOUT
    1020, // ER_CHECKREAD (record changed since last read)
];
const RECONNECT_CODES: &[u16] = &[
    2006, // CR_SERVER_GONE_ERROR
    2013, // CR_SERVER_LOST
    2055, // CR_SERVER_LOST_EXTENDED
    1927, // ER_CONNECTION_KILLED (MariaDB)
    1053, // ER_SERVER_SHUTDOWN
    4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
];
/// ER_UNSUPPORTED_PS: the statement cannot be prepared; it is sent as text.
const UNSUPPORTED_PS: u16 = 1295;

pub struct MysqlDriver {
    opts: Opts,
    /// Where we connect, for messages: `host:port` or `socket PATH`.
    addr: String,
    /// The target URL with its password hidden.
    shown: String,
    dialect: MysqlDialect,
}

impl MysqlDriver {
    /// `mysql://user:pass@host:port/db` (or `mariadb://`); a unix socket is
    /// given as `?socket=/path/mysqld.sock`. The database name is required.
    pub fn new(url: &str) -> DbResult<Self> {
        let u = DbUrl::parse(url, &["mysql", "mariadb"])?;
        u.check_params(url, &["socket"])?;
        let db = u.require_database(url)?.to_string();
        let socket = u.param("socket").filter(|s| !s.is_empty());
        if u.host.is_none() && socket.is_none() {
            return Err(DbError::fatal(format!(
                "target '{}' has no host: give one, or a unix socket as ?socket=/path/mysqld.sock",
                safe(url)
            )));
        }
        let host = u.host.clone().unwrap_or_else(|| "localhost".into());
        let port = u.port.unwrap_or(DEFAULT_PORT);
        let addr = match socket {
            Some(s) => format!("socket {s}"),
            None if host.contains(':') => format!("[{host}]:{port}"),
            None => format!("{host}:{port}"),
        };
        let opts = OptsBuilder::new()
            .ip_or_hostname(Some(host))
            .tcp_port(port)
            .socket(socket)
            // Connect the way the target says: the crate would otherwise
            // switch a loopback TCP target to the server's unix socket.
            .prefer_socket(false)
            .user(u.user.clone())
            .pass(u.password.clone())
            .db_name(Some(db))
            .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
            .read_timeout(Some(IO_TIMEOUT))
            .write_timeout(Some(IO_TIMEOUT))
            .tcp_keepalive_time_ms(Some(60_000))
            .tcp_keepalive_probe_interval_secs(Some(10))
            .tcp_keepalive_probe_count(Some(6))
            .tcp_user_timeout_ms(Some(120_000))
            .tcp_nodelay(true)
            .stmt_cache_size(0);
        Ok(MysqlDriver {
            opts: opts.into(),
            addr,
            shown: safe(url),
            dialect: MysqlDialect,
        })
    }

    fn open(&self) -> DbResult<::mysql::Conn> {
        ::mysql::Conn::new(self.opts.clone()).map_err(|e| {
            let mut err = map_err(e);
            err.message = format!(
                "cannot connect to MySQL at {} ({}): {}",
                self.addr, self.shown, err.message
            );
            err
        })
    }

    /// Runs `sql` and returns every row as text, columns in order.
    fn rows(&self, sql: &str) -> DbResult<Vec<Vec<String>>> {
        let mut conn = self.open()?;
        let rows: Vec<::mysql::Row> = conn.query(sql).map_err(map_err)?;
        Ok(rows
            .iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| r.as_ref(i).map(value_text).unwrap_or_default())
                    .collect()
            })
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

impl Driver for MysqlDriver {
    fn engine(&self) -> &'static str {
        // MariaDB too: same protocol, same SQL, same counters.
        "mysql"
    }
    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(MysqlConn {
            conn: self.open()?,
            stmts: Vec::new(),
            text: String::new(),
        }))
    }
    fn caps(&self) -> Caps {
        Caps {
            prepared_statements: true,
            multi_row_insert: true,
            single_writer: false,
            max_params: 65535,
        }
    }
    fn dialect(&self) -> &dyn Dialect {
        &self.dialect
    }
    fn version(&self) -> DbResult<String> {
        let mut c = self.open()?;
        let v: Option<Option<String>> = c.query_first("SELECT VERSION()").map_err(map_err)?;
        Ok(v.flatten().unwrap_or_default())
    }
    fn settings(&self) -> DbResult<Vec<(String, String)>> {
        self.pairs("SHOW GLOBAL VARIABLES")
    }
    fn status(&self) -> DbResult<Vec<(String, String)>> {
        self.pairs("SHOW GLOBAL STATUS")
    }
}

pub struct MysqlDialect;

impl Dialect for MysqlDialect {
    fn sbtest_create_table(&self, table: &str) -> String {
        format!(
            "CREATE TABLE {table} (id INTEGER NOT NULL AUTO_INCREMENT, \
             k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, \
             pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = innodb"
        )
    }
    fn sbtest_insert_auto_id_prefix(&self, table: &str) -> String {
        // id 0 makes AUTO_INCREMENT assign the next id (as sysbench does).
        format!("INSERT INTO {table} (id, k, c, pad) VALUES (0, ")
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
    /// Reference §4.1: BIGINT AUTO_INCREMENT and DATETIME, InnoDB.
    fn ibench_create_table(&self, table: &str) -> Vec<String> {
        vec![format!(
            "CREATE TABLE {table} (transactionid BIGINT NOT NULL AUTO_INCREMENT, \
             dateandtime DATETIME, cashregisterid INT NOT NULL, customerid INT NOT NULL, \
             productid INT NOT NULL, price INT NOT NULL, data VARCHAR(4000), \
             PRIMARY KEY (transactionid)) ENGINE = innodb"
        )]
    }
    fn datetime_from_epoch(&self) -> &'static str {
        "FROM_UNIXTIME(?)"
    }
    /// InnoDB builds all of them in one ALTER TABLE (reference §4.1).
    fn create_indexes(&self, table: &str, indexes: &[(String, &str)]) -> Vec<String> {
        let adds: Vec<String> = indexes
            .iter()
            .map(|(name, cols)| format!("ADD INDEX {name} ({cols})"))
            .collect();
        vec![format!("ALTER TABLE {table} {}", adds.join(", "))]
    }
    fn table_with_index(&self, table: &str, index: &str) -> String {
        format!("{table} FORCE INDEX ({index})")
    }
    /// MySQL cannot LIMIT inside an IN sub-select, and needs none.
    fn delete_oldest(&self, table: &str, key: &str, n: usize) -> String {
        format!("DELETE FROM {table} WHERE {key} >= ? ORDER BY {key} ASC LIMIT {n}")
    }
    fn db_size_sql(&self) -> Option<&'static str> {
        Some(
            "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema = DATABASE()",
        )
    }
    fn data_path_sql(&self) -> Option<&'static str> {
        Some("SELECT @@datadir")
    }
}

enum Slot {
    Prepared(Statement),
    /// Text protocol: the SQL with `?`, filled in on every execution.
    Text(String),
}

pub struct MysqlConn {
    conn: ::mysql::Conn,
    stmts: Vec<Slot>,
    /// Reused buffer for statements sent as text.
    text: String,
}

fn map_err(e: ::mysql::Error) -> DbError {
    use ::mysql::DriverError as D;
    match e {
        ::mysql::Error::MySqlError(me) => {
            let class = if RETRY_CODES.contains(&me.code) {
                ErrorClass::Retry
            } else if RECONNECT_CODES.contains(&me.code) {
                ErrorClass::Reconnect
            } else {
                ErrorClass::Fatal
            };
            DbError {
                class,
                code: Some(me.code.to_string()),
                message: me.message,
            }
        }
        ::mysql::Error::IoError(io) => DbError {
            class: ErrorClass::Reconnect,
            code: None,
            message: format!("connection to the server failed: {io}"),
        },
        ::mysql::Error::CodecError(c) => DbError {
            class: ErrorClass::Reconnect,
            code: None,
            message: format!("connection to the server failed: {c}"),
        },
        ::mysql::Error::DriverError(d) => {
            let class = match d {
                D::ConnectTimeout
                | D::CouldNotConnect(_)
                | D::PacketOutOfSync
                | D::UnexpectedPacket
                | D::SetupError
                | D::Timeout => ErrorClass::Reconnect,
                _ => ErrorClass::Fatal,
            };
            DbError {
                class,
                code: None,
                message: d.to_string(),
            }
        }
        other => DbError::fatal(other.to_string()),
    }
}

/// A value of a text-protocol row as text.
fn value_text(v: &Value) -> String {
    match v {
        Value::NULL => String::new(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        other => other.as_sql(true),
    }
}

/// Reads every result set of `res`: the rows of those that have columns,
/// the affected-row counts of the others.
fn drain<P: Protocol>(mut res: QueryResult<'_, '_, '_, P>) -> DbResult<Outcome> {
    let mut rows = 0u64;
    let mut affected = 0u64;
    let mut has_rows = false;
    while let Some(set) = res.iter() {
        if set.columns().as_ref().is_empty() {
            affected += set.affected_rows();
        } else {
            has_rows = true;
        }
        for row in set {
            row.map_err(map_err)?;
            rows += 1;
        }
    }
    Ok(if has_rows {
        Outcome::Rows(rows)
    } else {
        Outcome::Affected(affected)
    })
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str, mode: PsMode) -> DbResult<StmtId> {
        let slot = match mode {
            PsMode::Auto => match self.conn.prep(sql) {
                Ok(stmt) => Slot::Prepared(stmt),
                Err(::mysql::Error::MySqlError(me)) if me.code == UNSUPPORTED_PS => {
                    Slot::Text(sql.to_string())
                }
                Err(e) => return Err(map_err(e)),
            },
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
            Slot::Prepared(stmt) => {
                let params = if params.is_empty() {
                    Params::Empty
                } else {
                    Params::Positional(
                        params
                            .iter()
                            .map(|p| match *p {
                                Param::Int(v) => Value::Int(v),
                                Param::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
                            })
                            .collect(),
                    )
                };
                let res = self.conn.exec_iter(stmt, params).map_err(map_err)?;
                drain(res)
            }
            Slot::Text(sql) => {
                let mut text = std::mem::take(&mut self.text);
                let r = inline_params(sql, params, &mut text).and_then(|_| {
                    let res = self.conn.query_iter(&text).map_err(map_err)?;
                    drain(res)
                });
                self.text = text;
                r
            }
        }
    }

    fn query(&mut self, sql: &str) -> DbResult<Outcome> {
        let res = self.conn.query_iter(sql).map_err(map_err)?;
        drain(res)
    }

    fn query_scalar(&mut self, sql: &str) -> DbResult<Option<String>> {
        let row: Option<::mysql::Row> = self.conn.query_first(sql).map_err(map_err)?;
        Ok(row.and_then(|r| match r.as_ref(0) {
            None | Some(Value::NULL) => None,
            Some(v) => Some(value_text(v)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_the_right_options() {
        let d = MysqlDriver::new("mysql://root:pw@127.0.0.1/sbtest").unwrap();
        assert_eq!(d.opts.get_tcp_port(), 3306);
        assert_eq!(d.opts.get_pass(), Some("pw"));
        assert_eq!(d.opts.get_db_name(), Some("sbtest"));
        assert!(!d.opts.get_prefer_socket());
        assert_eq!(d.addr, "127.0.0.1:3306");
        assert!(!d.shown.contains("pw"));
        let d = MysqlDriver::new("mariadb://root@/sb?socket=/tmp/x/mysqld.sock").unwrap();
        assert_eq!(d.opts.get_socket(), Some("/tmp/x/mysqld.sock"));
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
    fn settle_has_no_reset_master() {
        let s = MysqlDialect.settle(&["sbtest1".into(), "sbtest2".into()]);
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
