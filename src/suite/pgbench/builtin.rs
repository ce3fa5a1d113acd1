//! pgbench's three built-in scripts, rendered per dialect: the statements
//! are pgbench's (PostgreSQL 16 documentation, "pgbench", built-in
//! scripts), with the transaction's first and last statement taken from
//! the engine's dialect (SQLite begins with the write lock taken, so two
//! clients cannot deadlock on its upgrade). The text is then read by the
//! same parser as a user's script.

use serde::{Deserialize, Serialize};

use crate::engine::Dialect;
use crate::error::{Error, usage};

/// A built-in script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Builtin {
    /// TPC-B-like: five statements in a transaction, three updates, a
    /// select and an insert into the history.
    TpcbLike,
    /// As tpcb-like without the tellers' and branches' updates.
    SimpleUpdate,
    /// One select of an account's balance.
    SelectOnly,
}

/// Every built-in, in pgbench's order.
pub const ALL: [Builtin; 3] = [
    Builtin::TpcbLike,
    Builtin::SimpleUpdate,
    Builtin::SelectOnly,
];

/// What `--builtin` completes to (shell completion): every built-in's name.
pub fn candidates() -> Vec<clap_complete::engine::CompletionCandidate> {
    ALL.iter()
        .map(|b| clap_complete::engine::CompletionCandidate::new(b.name()))
        .collect()
}

impl Builtin {
    /// As `--builtin` and results name it.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "tpcb-like",
            Builtin::SimpleUpdate => "simple-update",
            Builtin::SelectOnly => "select-only",
        }
    }

    /// The built-in called `name`; as pgbench, a unique prefix will do
    /// (`-b select`).
    pub fn find(name: &str) -> Result<Builtin, Error> {
        if let Some(b) = ALL.iter().find(|b| b.name() == name) {
            return Ok(*b);
        }
        let found: Vec<Builtin> = ALL
            .iter()
            .copied()
            .filter(|b| !name.is_empty() && b.name().starts_with(name))
            .collect();
        match found[..] {
            [b] => Ok(b),
            _ => Err(usage(format!(
                "--builtin {name}: expected tpcb-like, simple-update or select-only"
            ))),
        }
    }

    /// The script's text for an engine that speaks `d`.
    pub fn text(self, d: &dyn Dialect) -> String {
        let (begin, commit) = (d.begin_write(), d.commit());
        let aid = "\\set aid random(1, 100000 * :scale)\n";
        match self {
            Builtin::TpcbLike => format!(
                "{aid}\\set bid random(1, 1 * :scale)\n\
                 \\set tid random(1, 10 * :scale)\n\
                 \\set delta random(-5000, 5000)\n\
                 {begin};\n\
                 UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
                 SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
                 UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
                 UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
                 INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
                 {commit};\n"
            ),
            Builtin::SimpleUpdate => format!(
                "{aid}\\set bid random(1, 1 * :scale)\n\
                 \\set tid random(1, 10 * :scale)\n\
                 \\set delta random(-5000, 5000)\n\
                 {begin};\n\
                 UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
                 SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
                 INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
                 {commit};\n"
            ),
            Builtin::SelectOnly => {
                format!("{aid}SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dialect;

    #[test]
    fn names_and_unique_prefixes_find_a_builtin() {
        assert_eq!(Builtin::find("tpcb-like").unwrap(), Builtin::TpcbLike);
        assert_eq!(Builtin::find("select").unwrap(), Builtin::SelectOnly);
        assert_eq!(Builtin::find("si").unwrap(), Builtin::SimpleUpdate);
        assert!(Builtin::find("s").is_err(), "two start with s");
        assert!(Builtin::find("").is_err());
    }

    #[test]
    fn each_dialect_renders_its_transaction_and_the_parser_reads_every_builtin() {
        let sqlite = crate::engine::sqlite::SqliteDialect;
        let pg = crate::engine::postgres::PostgresDialect;
        let t = Builtin::TpcbLike.text(&sqlite);
        assert!(t.contains(&format!("\n{};\n", sqlite.begin_write())), "{t}");
        assert!(Builtin::TpcbLike.text(&pg).contains("\nBEGIN;\n"));
        for b in ALL {
            for d in [&sqlite as &dyn Dialect, &pg] {
                let s = super::super::script::parse_script(b.name(), &b.text(d))
                    .unwrap_or_else(|e| panic!("{}: {e}", b.name()));
                let sql = s
                    .commands
                    .iter()
                    .filter(|c| matches!(c.kind, super::super::script::CommandKind::Sql { .. }))
                    .count();
                assert_eq!(
                    sql,
                    match b {
                        Builtin::TpcbLike => 7,
                        Builtin::SimpleUpdate => 5,
                        Builtin::SelectOnly => 1,
                    },
                    "{}",
                    b.name()
                );
            }
        }
    }
}
