//! Tables as data: a workload declares its tables here and each engine's
//! [`Dialect`](crate::engine::Dialect) renders the statements that create,
//! fill, trim and query them.
//!
//! The contract: a [`Table`] says *what* a table is (its engine-assigned id,
//! columns with portable types, secondary indexes); the dialect decides *how*
//! its engine spells it (`AUTO_INCREMENT`, `SERIAL`, the SQLite rowid, ...).
//! Nothing here names a workload: suites own their declarations (e.g.
//! `suite/sysbench/schema.rs`).
//!
//! A workload's tables often follow a reference DDL that must be reproduced
//! byte for byte, so results stay comparable with the reference tool. Two
//! spelling choices differ between such references and are therefore part of
//! the declaration ([`AutoId::not_null`], [`Table::key_on_column`]); an engine
//! that only has one way to say it ignores them.

/// A portable column type. Each dialect maps it to its own name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    /// 32-bit integer, written `INT`.
    Int,
    /// 32-bit integer, written `INTEGER` (same type as [`ColType::Int`];
    /// the spelling is kept so rendered DDL matches a workload's reference).
    Integer,
    /// 64-bit integer.
    BigInt,
    /// Fixed-length text of `n` characters.
    Char(u32),
    /// Variable-length text of at most `n` characters.
    Varchar(u32),
    /// 4-byte floating point.
    Float,
    /// 8-byte floating point.
    Double,
    /// Date and time of day without a time zone.
    DateTime,
    /// A point in time (with the engine's time-zone handling).
    Timestamp,
    /// Exact decimal number of `precision` digits, `scale` of them after the
    /// point (money). SQLite keeps it with NUMERIC affinity, so fractions are
    /// stored as 8-byte floating point there.
    Decimal(u8, u8),
    /// Text of any length (engines without an unbounded type use their
    /// largest common one, e.g. `MEDIUMTEXT`, 16 MiB).
    Text,
}

/// A column's default value.
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    Int(i64),
    Text(String),
}

/// One ordinary column (the engine-assigned id is declared apart, as [`AutoId`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: ColType,
    pub not_null: bool,
    pub default: Option<DefaultValue>,
}

impl Column {
    /// A nullable column without a default.
    pub fn new(name: impl Into<String>, ty: ColType) -> Self {
        Column {
            name: name.into(),
            ty,
            not_null: false,
            default: None,
        }
    }
    pub fn not_null(mut self) -> Self {
        self.not_null = true;
        self
    }
    pub fn default_int(mut self, v: i64) -> Self {
        self.default = Some(DefaultValue::Int(v));
        self
    }
    pub fn default_text(mut self, v: impl Into<String>) -> Self {
        self.default = Some(DefaultValue::Text(v.into()));
        self
    }
}

/// The primary key: one integer column whose values the engine assigns in
/// insert order (1, 2, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct AutoId {
    pub name: String,
    /// [`ColType::Integer`]/[`ColType::Int`] or [`ColType::BigInt`].
    pub ty: ColType,
    /// Write `NOT NULL` on the id even where the primary key implies it.
    pub not_null: bool,
    /// Let a session take ids in blocks of this many (engines with id
    /// sequences cache them; others ignore it). Ids then stay unique but may
    /// leave gaps when sessions interleave.
    pub cache: Option<u32>,
}

/// A secondary index.
#[derive(Clone, Debug, PartialEq)]
pub struct Index {
    pub name: String,
    pub columns: Vec<String>,
}

impl Index {
    pub fn new(name: impl Into<String>, columns: &[&str]) -> Self {
        Index {
            name: name.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
        }
    }
    /// The column list as SQL writes it: `a, b, c`.
    pub fn column_list(&self) -> String {
        self.columns.join(", ")
    }
}

/// A table as a workload declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub id: AutoId,
    /// The other columns, in order (inserts bind them in this order).
    pub columns: Vec<Column>,
    /// Secondary indexes, created apart from the table (see
    /// [`Dialect::create_indexes`](crate::engine::Dialect::create_indexes)).
    pub indexes: Vec<Index>,
    /// Declare the primary key on the id column (`id ... PRIMARY KEY`)
    /// rather than as a table constraint (`PRIMARY KEY (id)`), where the
    /// engine allows both.
    pub key_on_column: bool,
}

impl Table {
    /// The column list of an insert that lets the engine assign the id:
    /// every column but the id, in declaration order.
    pub fn value_columns(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
    /// The secondary index called `name`.
    pub fn index(&self, name: &str) -> Option<&Index> {
        self.indexes.iter().find(|i| i.name == name)
    }
}

/// A table keyed by its own columns (a natural key, possibly over several
/// columns) rather than by an engine-assigned id.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedTable {
    pub name: String,
    /// Every column, in order (inserts bind them in this order).
    pub columns: Vec<Column>,
    /// The primary key's columns, in key order; empty: no primary key (a
    /// log that is only appended to and scanned).
    pub key: Vec<String>,
    /// Secondary indexes, created apart from the table.
    pub indexes: Vec<Index>,
}

impl KeyedTable {
    /// The column list of an insert of whole rows: `a, b, c`.
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
    /// The key's column list: `a, b`.
    pub fn key_list(&self) -> String {
        self.key.join(", ")
    }
    /// `rows` groups of `(?, ?, ..)`, one `?` per column, comma-separated.
    pub fn placeholders(&self, rows: usize) -> String {
        let one = format!("({})", vec!["?"; self.columns.len()].join(", "));
        vec![one; rows.max(1)].join(", ")
    }
    /// The secondary index called `name`.
    pub fn index(&self, name: &str) -> Option<&Index> {
        self.indexes.iter().find(|i| i.name == name)
    }
}

/// What a column becomes when an upsert finds its key already present.
#[derive(Clone, Debug, PartialEq)]
pub enum SetTo {
    /// The value the insert carried for it.
    New,
    /// The existing row's value plus this number (counters, versions).
    Add(i64),
}

/// The `CREATE TABLE` of a keyed table with the given type names and column
/// spelling (see [`column_sql`]), and `suffix` after the closing parenthesis.
pub(crate) fn keyed_table_sql(
    t: &KeyedTable,
    type_name: &dyn Fn(ColType) -> String,
    default_first: bool,
    quote_numbers: bool,
    suffix: &str,
) -> String {
    let mut cols: Vec<String> = t
        .columns
        .iter()
        .map(|c| column_sql(c, &type_name(c.ty), default_first, quote_numbers))
        .collect();
    if !t.key.is_empty() {
        cols.push(format!("PRIMARY KEY ({})", t.key_list()));
    }
    format!("CREATE TABLE {} ({}){suffix}", t.name, cols.join(", "))
}

/// Writes a default value as SQL: numbers quoted (`'0'`) or bare (`0`).
pub(crate) fn default_sql(v: &DefaultValue, quote_numbers: bool) -> String {
    match v {
        DefaultValue::Int(n) if quote_numbers => format!("'{n}'"),
        DefaultValue::Int(n) => n.to_string(),
        DefaultValue::Text(s) => format!("'{}'", s.replace('\'', "''")),
    }
}

/// Writes `name TYPE` plus NOT NULL and DEFAULT in the order the engine's
/// reference DDL uses (`default_first`: `DEFAULT x NOT NULL`).
pub(crate) fn column_sql(
    c: &Column,
    type_name: &str,
    default_first: bool,
    quote_numbers: bool,
) -> String {
    let mut s = format!("{} {type_name}", c.name);
    let default = c
        .default
        .as_ref()
        .map(|d| format!(" DEFAULT {}", default_sql(d, quote_numbers)));
    let not_null = if c.not_null { " NOT NULL" } else { "" };
    match (&default, default_first) {
        (Some(d), true) => {
            s.push_str(d);
            s.push_str(not_null);
        }
        (Some(d), false) => {
            s.push_str(not_null);
            s.push_str(d);
        }
        (None, _) => s.push_str(not_null),
    }
    s
}

/// The type names most engines share; dialects override what differs.
pub(crate) fn standard_type(t: ColType) -> String {
    match t {
        ColType::Int => "INT".into(),
        ColType::Integer => "INTEGER".into(),
        ColType::BigInt => "BIGINT".into(),
        ColType::Char(n) => format!("CHAR({n})"),
        ColType::Varchar(n) => format!("VARCHAR({n})"),
        ColType::Float => "FLOAT".into(),
        ColType::Double => "DOUBLE PRECISION".into(),
        ColType::DateTime => "DATETIME".into(),
        ColType::Timestamp => "TIMESTAMP".into(),
        ColType::Decimal(p, s) => format!("DECIMAL({p},{s})"),
        ColType::Text => "TEXT".into(),
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Two tables shaped like the ones the suites declare, so the dialects'
    //! renderings can be checked here without the engine naming a suite.
    use super::*;

    /// Engine-assigned 32-bit id, defaults on every column, key as a constraint.
    pub fn narrow(name: &str) -> Table {
        Table {
            name: name.into(),
            id: AutoId {
                name: "id".into(),
                ty: ColType::Integer,
                not_null: true,
                cache: None,
            },
            columns: vec![
                Column::new("k", ColType::Integer).not_null().default_int(0),
                Column::new("c", ColType::Char(120))
                    .not_null()
                    .default_text(""),
                Column::new("pad", ColType::Char(60))
                    .not_null()
                    .default_text(""),
            ],
            indexes: vec![Index::new(format!("k_{name}"), &["k"])],
            key_on_column: false,
        }
    }

    /// Keyed by two of its columns (in the other order), one index.
    pub fn keyed(name: &str) -> KeyedTable {
        KeyedTable {
            name: name.into(),
            columns: vec![
                Column::new("a", ColType::BigInt).not_null(),
                Column::new("b", ColType::BigInt).not_null(),
                Column::new("n", ColType::Int).not_null().default_int(0),
            ],
            key: vec!["b".into(), "a".into()],
            indexes: vec![Index::new(format!("{name}_n"), &["a", "n"])],
        }
    }

    /// Engine-assigned 64-bit id with a cache, a date-time, three indexes,
    /// key on the column.
    pub fn queue(name: &str) -> Table {
        Table {
            name: name.into(),
            id: AutoId {
                name: "transactionid".into(),
                ty: ColType::BigInt,
                not_null: false,
                cache: Some(1000),
            },
            columns: vec![
                Column::new("dateandtime", ColType::DateTime),
                Column::new("cashregisterid", ColType::Int).not_null(),
                Column::new("customerid", ColType::Int).not_null(),
                Column::new("productid", ColType::Int).not_null(),
                Column::new("price", ColType::Int).not_null(),
                Column::new("data", ColType::Varchar(4000)),
            ],
            indexes: vec![
                Index::new(
                    format!("{name}_marketsegment"),
                    &["productid", "customerid", "price"],
                ),
                Index::new(
                    format!("{name}_registersegment"),
                    &["cashregisterid", "customerid", "price"],
                ),
                Index::new(
                    format!("{name}_pdc"),
                    &["price", "dateandtime", "customerid"],
                ),
            ],
            key_on_column: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_render_defaults_in_either_order() {
        let c = Column::new("k", ColType::Integer).not_null().default_int(0);
        assert_eq!(
            column_sql(&c, "INTEGER", true, true),
            "k INTEGER DEFAULT '0' NOT NULL"
        );
        assert_eq!(
            column_sql(&c, "INTEGER", false, false),
            "k INTEGER NOT NULL DEFAULT 0"
        );
        let t = Column::new("c", ColType::Char(3)).default_text("a'b");
        assert_eq!(
            column_sql(&t, "CHAR(3)", true, true),
            "c CHAR(3) DEFAULT 'a''b'"
        );
    }

    #[test]
    fn keyed_tables_list_columns_key_and_placeholders() {
        let t = fixtures::keyed("kv");
        assert_eq!(t.column_list(), "a, b, n");
        assert_eq!(t.key_list(), "b, a");
        assert_eq!(t.placeholders(2), "(?, ?, ?), (?, ?, ?)");
        assert_eq!(
            keyed_table_sql(&t, &|c| standard_type(c), false, false, ""),
            "CREATE TABLE kv (a BIGINT NOT NULL, b BIGINT NOT NULL, n INT NOT NULL DEFAULT 0, \
             PRIMARY KEY (b, a))"
        );
        assert!(t.index("kv_n").is_some());
    }

    #[test]
    fn value_columns_leave_out_the_id() {
        let t = fixtures::narrow("t1");
        assert_eq!(t.value_columns(), "k, c, pad");
        assert_eq!(t.index("k_t1").unwrap().column_list(), "k");
        assert!(t.index("nope").is_none());
    }
}
