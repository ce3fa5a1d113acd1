//! The three LinkBench tables as data (spec A1); each engine's dialect
//! renders them.

use crate::engine::schema::{AutoId, ColType, Column, Index, KeyedTable, Table};

pub const NODE: &str = "nodetable";
pub const LINK: &str = "linktable";
pub const COUNT: &str = "counttable";
/// The covering index list scans read.
pub const ID1_TYPE: &str = "id1_type";
/// Every node's type.
pub const NODE_TYPE: i64 = 2048;

/// Nodes: an engine-assigned id, a type, a version, a time in seconds, a payload.
pub fn node() -> Table {
    Table {
        name: NODE.into(),
        id: AutoId {
            name: "id".into(),
            ty: ColType::BigInt,
            not_null: true,
            cache: None,
        },
        columns: vec![
            Column::new("type", ColType::Int).not_null(),
            Column::new("version", ColType::BigInt).not_null(),
            Column::new("time", ColType::Int).not_null(),
            Column::new("data", ColType::Text).not_null(),
        ],
        indexes: vec![],
        key_on_column: false,
    }
}

/// Links, keyed by (link_type, id1, id2), with the covering `id1_type` index.
pub fn link() -> KeyedTable {
    KeyedTable {
        name: LINK.into(),
        columns: vec![
            Column::new("id1", ColType::BigInt)
                .not_null()
                .default_int(0),
            Column::new("id2", ColType::BigInt)
                .not_null()
                .default_int(0),
            Column::new("link_type", ColType::BigInt)
                .not_null()
                .default_int(0),
            Column::new("visibility", ColType::Int)
                .not_null()
                .default_int(0),
            Column::new("data", ColType::Varchar(255))
                .not_null()
                .default_text(""),
            Column::new("time", ColType::BigInt)
                .not_null()
                .default_int(0),
            Column::new("version", ColType::Int)
                .not_null()
                .default_int(0),
        ],
        key: vec!["link_type".into(), "id1".into(), "id2".into()],
        indexes: vec![Index::new(
            ID1_TYPE,
            &[
                "id1",
                "link_type",
                "visibility",
                "time",
                "id2",
                "version",
                "data",
            ],
        )],
    }
}

/// Counts of visible links per (id, link_type).
pub fn count() -> KeyedTable {
    KeyedTable {
        name: COUNT.into(),
        columns: vec![
            Column::new("id", ColType::BigInt).not_null().default_int(0),
            Column::new("link_type", ColType::BigInt)
                .not_null()
                .default_int(0),
            Column::new("count", ColType::Int).not_null().default_int(0),
            Column::new("time", ColType::BigInt)
                .not_null()
                .default_int(0),
            Column::new("version", ColType::BigInt)
                .not_null()
                .default_int(0),
        ],
        key: vec!["id".into(), "link_type".into()],
        indexes: vec![],
    }
}

/// Every table's name.
pub fn names() -> Vec<String> {
    vec![NODE.into(), LINK.into(), COUNT.into()]
}
