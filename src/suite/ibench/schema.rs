//! The Insert Benchmark's table, `pi<i>` (reference §4.1), as data:
//! `transactionid` assigned by the engine in insert order (64 bits, handed
//! out in blocks of 1000 where the engine has sequences), then
//! `dateandtime, cashregisterid, customerid, productid, price, data`, and
//! three secondary indexes, each covering one of the range queries.

use crate::engine::schema::{AutoId, ColType, Column, Index, Table};

use super::{INDEXES, KEY, table_name};

/// Table of client `i` (1-based).
pub fn table(i: usize) -> Table {
    let name = table_name(i);
    Table {
        id: AutoId {
            name: KEY.into(),
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
        indexes: INDEXES
            .iter()
            .map(|(suffix, cols)| {
                let cols: Vec<&str> = cols.split(", ").collect();
                Index::new(format!("{name}_{suffix}"), &cols)
            })
            .collect(),
        key_on_column: true,
        name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dialect;
    use crate::engine::mysql::MysqlDialect;
    use crate::engine::postgres::PostgresDialect;
    use crate::engine::sqlite::SqliteDialect;

    /// The DDL and queue statements each engine ran before tables became
    /// data, byte for byte.
    #[test]
    fn renders_as_before_on_every_engine() {
        let t = table(1);
        let mysql = MysqlDialect::default();
        let (my, pg, lite): (&dyn Dialect, &dyn Dialect, &dyn Dialect) =
            (&mysql, &PostgresDialect, &SqliteDialect);
        assert_eq!(
            my.create_table(&t),
            [
                "CREATE TABLE pi1 (transactionid BIGINT NOT NULL AUTO_INCREMENT, \
              dateandtime DATETIME, cashregisterid INT NOT NULL, customerid INT NOT NULL, \
              productid INT NOT NULL, price INT NOT NULL, data VARCHAR(4000), \
              PRIMARY KEY (transactionid)) ENGINE = InnoDB"
            ]
        );
        assert_eq!(
            pg.create_table(&t),
            [
                "CREATE TABLE pi1 (transactionid BIGSERIAL PRIMARY KEY, \
                 dateandtime TIMESTAMP WITHOUT TIME ZONE, cashregisterid INT NOT NULL, \
                 customerid INT NOT NULL, productid INT NOT NULL, price INT NOT NULL, \
                 data VARCHAR(4000))",
                "ALTER SEQUENCE pi1_transactionid_seq CACHE 1000"
            ]
        );
        assert_eq!(
            lite.create_table(&t),
            [
                "CREATE TABLE pi1 (transactionid INTEGER PRIMARY KEY, dateandtime DATETIME, \
              cashregisterid INT NOT NULL, customerid INT NOT NULL, productid INT NOT NULL, \
              price INT NOT NULL, data VARCHAR(4000))"
            ]
        );
        // The order rows are bound in.
        assert_eq!(
            t.value_columns(),
            "dateandtime, cashregisterid, customerid, productid, price, data"
        );
        assert_eq!(
            my.create_indexes(&t),
            [
                "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price), \
              ADD INDEX pi1_registersegment (cashregisterid, customerid, price), \
              ADD INDEX pi1_pdc (price, dateandtime, customerid)"
            ]
        );
        let rocks = MysqlDialect {
            engine: "RocksDB".into(),
        };
        assert_eq!(
            rocks.create_indexes(&t),
            [
                "ALTER TABLE pi1 ADD INDEX pi1_marketsegment (productid, customerid, price)",
                "ALTER TABLE pi1 ADD INDEX pi1_registersegment (cashregisterid, customerid, price)",
                "ALTER TABLE pi1 ADD INDEX pi1_pdc (price, dateandtime, customerid)",
            ]
        );
        assert!(rocks.create_table(&t)[0].ends_with("ENGINE = RocksDB"));
        for d in [pg, lite] {
            assert_eq!(
                d.create_indexes(&t),
                [
                    "CREATE INDEX pi1_marketsegment ON pi1 (productid, customerid, price)",
                    "CREATE INDEX pi1_registersegment ON pi1 (cashregisterid, customerid, price)",
                    "CREATE INDEX pi1_pdc ON pi1 (price, dateandtime, customerid)",
                ]
            );
        }
        assert_eq!(
            my.table_with_index(&t, "pi1_pdc"),
            "pi1 FORCE INDEX (pi1_pdc)"
        );
        assert_eq!(
            lite.table_with_index(&t, "pi1_pdc"),
            "pi1 INDEXED BY pi1_pdc"
        );
        assert_eq!(pg.table_with_index(&t, "pi1_pdc"), "pi1");
        assert_eq!(
            my.delete_oldest(&t, 50),
            "DELETE FROM pi1 WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT 50"
        );
        for d in [pg, lite] {
            assert_eq!(
                d.delete_oldest(&t, 5),
                "DELETE FROM pi1 WHERE transactionid IN (SELECT transactionid FROM pi1 \
                 WHERE transactionid >= ? ORDER BY transactionid ASC LIMIT 5)"
            );
        }
        for d in [my, pg, lite] {
            assert_eq!(d.min_key_sql(&t), "SELECT min(transactionid) FROM pi1");
            assert_eq!(d.max_key_sql(&t), "SELECT max(transactionid) FROM pi1");
            assert_eq!(d.drop_table(&t), "DROP TABLE IF EXISTS pi1");
        }
        assert_eq!(my.datetime_from_epoch(), "FROM_UNIXTIME(?)");
        assert_eq!(pg.datetime_from_epoch(), "to_timestamp(?)");
        assert_eq!(lite.datetime_from_epoch(), "datetime(?, 'unixepoch')");
    }
}
