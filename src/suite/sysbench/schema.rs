//! sysbench's table, `sbtest<i>`, as data: an engine-assigned 32-bit `id`,
//! then `k`, `c` (120 characters) and `pad` (60), all with defaults, and the
//! secondary index `k_<i>` on `k`, built after the table is loaded.

use crate::engine::schema::{AutoId, ColType, Column, Index, Table};

/// Table `i`'s name (1-based): what the events, the load and [`table`] call it.
pub fn table_name(i: usize) -> String {
    format!("sbtest{i}")
}

/// Table `i` (1-based).
pub fn table(i: usize) -> Table {
    Table {
        name: table_name(i),
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
        indexes: vec![Index::new(format!("k_{i}"), &["k"])],
        key_on_column: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dialect;
    use crate::engine::mysql::MysqlDialect;
    use crate::engine::postgres::PostgresDialect;
    use crate::engine::sqlite::SqliteDialect;

    /// The DDL each engine ran before tables became data, byte for byte.
    #[test]
    fn renders_as_before_on_every_engine() {
        let t = table(3);
        let my = MysqlDialect::default();
        assert_eq!(
            my.create_table(&t),
            ["CREATE TABLE sbtest3 (id INTEGER NOT NULL AUTO_INCREMENT, \
              k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, \
              pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE = InnoDB"]
        );
        assert_eq!(
            my.insert_auto_id_prefix(&t),
            "INSERT INTO sbtest3 (id, k, c, pad) VALUES (0, "
        );
        assert_eq!(
            PostgresDialect.create_table(&t),
            [
                "CREATE TABLE sbtest3 (id SERIAL NOT NULL, k INTEGER DEFAULT '0' NOT NULL, \
              c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, \
              PRIMARY KEY (id))"
            ]
        );
        assert_eq!(
            SqliteDialect.create_table(&t),
            [
                "CREATE TABLE sbtest3 (id INTEGER NOT NULL PRIMARY KEY, k INTEGER NOT NULL DEFAULT 0, \
              c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')"
            ]
        );
        let (pg, lite): (&dyn Dialect, &dyn Dialect) = (&PostgresDialect, &SqliteDialect);
        for d in [pg, lite] {
            assert_eq!(
                d.insert_auto_id_prefix(&t),
                "INSERT INTO sbtest3 (k, c, pad) VALUES ("
            );
        }
        let my: &dyn Dialect = &my;
        for d in [my, pg, lite] {
            assert_eq!(d.drop_table(&t), "DROP TABLE IF EXISTS sbtest3");
            assert_eq!(
                d.create_index(&t, &t.indexes[0]),
                "CREATE INDEX k_3 ON sbtest3 (k)"
            );
        }
    }
}
