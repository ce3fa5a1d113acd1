//! The MySQL driver's execute path allocates nothing once warm: checked
//! against a scripted server on a loopback socket (no real server needed),
//! with a global allocator that counts the client thread's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

use rqps::engine::mysql::MysqlDriver;
use rqps::engine::{Outcome, Param, PsMode, SqlAccess};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; the counter is a plain
// thread-local cell with no destructor.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(|c| c.get())
}

fn pkt(out: &mut Vec<u8>, seq: u8, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(payload);
}

fn read_pkt(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).ok()?;
    let mut p = vec![0; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
    s.read_exact(&mut p).ok()?;
    Some(p)
}

const COL_DEF: &[u8] = b"\x03def\x06sbtest\x07sbtest1\x07sbtest1\x01c\x01c\x0c\x2d\x00\xe0\x01\x00\x00\xfe\x00\x00\x00\x00\x00";
const OK: &[u8] = &[0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];
const OK_END: &[u8] = &[0xfe, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00];

/// A server that accepts one connection: handshake (protocol 41,
/// DEPRECATE_EOF, mysql_native_password, any password), then answers every
/// prepare with a 1-parameter, 1-column statement and every execute or query
/// with one row.
fn scripted_server(l: TcpListener) {
    let (mut s, _) = l.accept().unwrap();
    let caps: u32 = 0x0100_0000 | 0x0020_0000 | 0x0008_0000 | 0x8000 | 0x2000 | 0x0200 | 0x0008;
    let mut hs = vec![10];
    hs.extend_from_slice(b"8.0.99-scripted\0");
    hs.extend_from_slice(&1u32.to_le_bytes());
    hs.extend_from_slice(b"abcdefgh\0");
    hs.extend_from_slice(&(caps as u16 | 1).to_le_bytes());
    hs.extend_from_slice(&[45, 2, 0]);
    hs.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    hs.push(21);
    hs.extend_from_slice(&[0; 10]);
    hs.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
    let mut out = Vec::new();
    pkt(&mut out, 0, &hs);
    s.write_all(&out).unwrap();
    read_pkt(&mut s).unwrap();
    out.clear();
    pkt(&mut out, 2, OK);
    s.write_all(&out).unwrap();
    while let Some(p) = read_pkt(&mut s) {
        out.clear();
        match p[0] {
            0x16 => {
                pkt(
                    &mut out,
                    1,
                    b"\x00\x01\x00\x00\x00\x01\x00\x01\x00\x00\x00\x00",
                );
                pkt(&mut out, 2, COL_DEF);
                pkt(&mut out, 3, COL_DEF);
            }
            0x17 => {
                pkt(&mut out, 1, b"\x01");
                pkt(&mut out, 2, COL_DEF);
                pkt(&mut out, 3, b"\x00\x00\x03abc");
                pkt(&mut out, 4, OK_END);
            }
            0x03 => {
                pkt(&mut out, 1, b"\x01");
                pkt(&mut out, 2, COL_DEF);
                pkt(&mut out, 3, b"\x03abc");
                pkt(&mut out, 4, OK_END);
            }
            _ => return,
        }
        s.write_all(&out).unwrap();
    }
}

#[test]
fn execute_allocates_nothing_when_warm() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let server = std::thread::spawn(move || scripted_server(l));
    let d = MysqlDriver::new(&format!("mysql://u:pw@127.0.0.1:{port}/sbtest")).unwrap();
    let at_start = allocs();
    let mut c = d.connect().unwrap();
    // The counter works: connecting allocates (buffers, statements).
    assert!(allocs() > at_start);
    let sel = c
        .prepare("SELECT c FROM sbtest1 WHERE id=?", PsMode::Auto)
        .unwrap();
    let text = c
        .prepare("SELECT c FROM sbtest1 WHERE c=?", PsMode::Disable)
        .unwrap();
    // Warm up: the buffers reach their size.
    for i in 0..10 {
        assert_eq!(c.execute(sel, &[Param::Int(i)]).unwrap(), Outcome::Rows(1));
        c.execute(text, &[Param::Text("some text")]).unwrap();
    }
    let before = allocs();
    for i in 0..1000 {
        assert_eq!(c.execute(sel, &[Param::Int(i)]).unwrap(), Outcome::Rows(1));
        assert_eq!(
            c.execute(text, &[Param::Text("other text")]).unwrap(),
            Outcome::Rows(1)
        );
    }
    assert_eq!(allocs() - before, 0, "allocations in 2000 executions");
    drop(c);
    server.join().unwrap();
}
