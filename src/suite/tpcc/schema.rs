//! The nine TPC-C tables as data; each engine's dialect renders them.

use crate::engine::KeyedTable;
use crate::engine::schema::{ColType, Column, Index};

fn int(name: &str) -> Column {
    Column::new(name, ColType::Int).not_null()
}
fn varchar(name: &str, n: u32) -> Column {
    Column::new(name, ColType::Varchar(n))
}
fn chars(name: &str, n: u32) -> Column {
    Column::new(name, ColType::Char(n))
}
fn money(name: &str, p: u8) -> Column {
    Column::new(name, ColType::Decimal(p, 2))
}
fn rate(name: &str) -> Column {
    Column::new(name, ColType::Decimal(4, 4))
}
fn date(name: &str) -> Column {
    Column::new(name, ColType::DateTime)
}

fn table(name: &str, columns: Vec<Column>, key: &[&str], indexes: Vec<Index>) -> KeyedTable {
    KeyedTable {
        name: name.into(),
        columns,
        key: key.iter().map(|k| k.to_string()).collect(),
        indexes,
    }
}

/// The address columns every warehouse, district and customer has.
fn address(p: &str) -> Vec<Column> {
    vec![
        varchar(&format!("{p}_street_1"), 20),
        varchar(&format!("{p}_street_2"), 20),
        varchar(&format!("{p}_city"), 20),
        chars(&format!("{p}_state"), 2),
        chars(&format!("{p}_zip"), 9),
    ]
}

pub fn warehouse() -> KeyedTable {
    let mut c = vec![int("w_id"), varchar("w_name", 10)];
    c.extend(address("w"));
    c.extend([rate("w_tax"), money("w_ytd", 12)]);
    table("warehouse", c, &["w_id"], vec![])
}

pub fn district() -> KeyedTable {
    let mut c = vec![int("d_id"), int("d_w_id"), varchar("d_name", 10)];
    c.extend(address("d"));
    c.extend([rate("d_tax"), money("d_ytd", 12), int("d_next_o_id")]);
    table("district", c, &["d_w_id", "d_id"], vec![])
}

pub fn customer() -> KeyedTable {
    let mut c = vec![
        int("c_id"),
        int("c_d_id"),
        int("c_w_id"),
        varchar("c_first", 16),
        chars("c_middle", 2),
        varchar("c_last", 16),
    ];
    c.extend(address("c"));
    c.extend([
        chars("c_phone", 16),
        date("c_since"),
        chars("c_credit", 2),
        money("c_credit_lim", 12),
        rate("c_discount"),
        money("c_balance", 12),
        money("c_ytd_payment", 12),
        int("c_payment_cnt"),
        int("c_delivery_cnt"),
        varchar("c_data", 500),
    ]);
    table(
        "customer",
        c,
        &["c_w_id", "c_d_id", "c_id"],
        vec![Index::new(
            "idx_customer_name",
            &["c_w_id", "c_d_id", "c_last", "c_first"],
        )],
    )
}

pub fn history() -> KeyedTable {
    table(
        "history",
        vec![
            int("h_c_id"),
            int("h_c_d_id"),
            int("h_c_w_id"),
            int("h_d_id"),
            int("h_w_id"),
            date("h_date"),
            money("h_amount", 6),
            varchar("h_data", 24),
        ],
        &[],
        vec![
            Index::new("idx_history_w", &["h_w_id", "h_d_id"]),
            Index::new("idx_history_c", &["h_c_w_id", "h_c_d_id", "h_c_id"]),
        ],
    )
}

pub fn new_order() -> KeyedTable {
    table(
        "new_order",
        vec![int("no_o_id"), int("no_d_id"), int("no_w_id")],
        &["no_w_id", "no_d_id", "no_o_id"],
        vec![],
    )
}

pub fn orders() -> KeyedTable {
    table(
        "orders",
        vec![
            int("o_id"),
            int("o_d_id"),
            int("o_w_id"),
            int("o_c_id"),
            date("o_entry_d"),
            Column::new("o_carrier_id", ColType::Int),
            int("o_ol_cnt"),
            int("o_all_local"),
        ],
        &["o_w_id", "o_d_id", "o_id"],
        vec![Index::new(
            "idx_orders_customer",
            &["o_w_id", "o_d_id", "o_c_id", "o_id"],
        )],
    )
}

pub fn order_line() -> KeyedTable {
    table(
        "order_line",
        vec![
            int("ol_o_id"),
            int("ol_d_id"),
            int("ol_w_id"),
            int("ol_number"),
            int("ol_i_id"),
            int("ol_supply_w_id"),
            date("ol_delivery_d"),
            int("ol_quantity"),
            money("ol_amount", 6),
            chars("ol_dist_info", 24),
        ],
        &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
        vec![],
    )
}

pub fn stock() -> KeyedTable {
    let mut c = vec![int("s_i_id"), int("s_w_id"), int("s_quantity")];
    c.extend((1..=10).map(|d| chars(&dist_column(d), 24)));
    c.extend([
        int("s_ytd"),
        int("s_order_cnt"),
        int("s_remote_cnt"),
        varchar("s_data", 50),
    ]);
    table("stock", c, &["s_w_id", "s_i_id"], vec![])
}

pub fn item() -> KeyedTable {
    table(
        "item",
        vec![
            int("i_id"),
            int("i_im_id"),
            varchar("i_name", 24),
            money("i_price", 5),
            varchar("i_data", 50),
        ],
        &["i_id"],
        vec![],
    )
}

/// `s_dist_01` .. `s_dist_10`: the stock's district information for district `d`.
pub fn dist_column(d: i64) -> String {
    format!("s_dist_{d:02}")
}

/// All nine, in the order they are created (and dropped in reverse).
pub fn all() -> Vec<KeyedTable> {
    vec![
        warehouse(),
        district(),
        customer(),
        history(),
        new_order(),
        orders(),
        order_line(),
        stock(),
        item(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_tables_with_their_keys() {
        let t = all();
        assert_eq!(t.len(), 9);
        assert_eq!(stock().columns.len(), 17);
        assert_eq!(customer().columns.len(), 21);
        assert!(history().key.is_empty());
        for t in &t {
            for k in &t.key {
                assert!(t.columns.iter().any(|c| &c.name == k), "{}.{k}", t.name);
            }
            for i in &t.indexes {
                for c in &i.columns {
                    assert!(t.columns.iter().any(|x| &x.name == c), "{}.{c}", i.name);
                }
            }
        }
        assert_eq!(dist_column(3), "s_dist_03");
    }
}
