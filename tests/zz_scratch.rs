use rqps::engine::{PsMode};
#[test]
fn scratch() {
    let d = rqps::engine::postgres::PostgresDriver::new("postgres://sa:sa@127.0.0.1:55435/compat").unwrap();
    use rqps::engine::SqlAccess;
    let mut c = d.connect().unwrap();
    for n in [1usize, 10, 100, 500, 1000, 2000, 4000, 8000] {
        let vals = vec!["(1, 'x')"; n].join(", ");
        let sql = format!("INSERT INTO zz (a, b) VALUES {vals} ON CONFLICT (a) DO UPDATE SET b = excluded.b");
        println!("{n} ({} bytes): {:?}", sql.len(), c.prepare(&sql, PsMode::Auto).err().map(|e| e.to_string().chars().take(100).collect::<String>()));
        if c.query("SELECT 1").is_err() { c = d.connect().unwrap(); }
    }
}
