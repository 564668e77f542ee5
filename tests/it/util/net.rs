//! Loopback ports for the servers the tests start (`git daemon`, `SoapySDRServer`).
//!
//! All the tests share one process and run in parallel threads, so a port found free
//! is remembered and never handed out twice: two tests of this binary never race for
//! one port (another process still may; the callers retry or fail naming it).
use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::{Mutex, PoisonError};

/// Ports handed out so far in this process.
static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A loopback TCP port that was free just now and that no other caller in this
/// process has been given (for a server that a child process will bind).
pub fn free_port() -> u16 {
    let l = listener();
    l.local_addr()
        .unwrap_or_else(|e| panic!("no local address: {e}"))
        .port()
}

/// A loopback listener whose port no other caller in this process has been given
/// (held by the test itself, e.g. a server that never answers).
pub fn listener() -> TcpListener {
    let mut given = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
    let given = given.get_or_insert_with(HashSet::new);
    // Hold every listener until a new port turns up, so the kernel cannot offer
    // one of them again within this loop.
    let mut held = Vec::new();
    for _ in 0..64 {
        let l = TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("no free loopback port: {e}"));
        let port = l
            .local_addr()
            .unwrap_or_else(|e| panic!("no local address: {e}"))
            .port();
        if given.insert(port) {
            return l;
        }
        held.push(l);
    }
    panic!("no loopback port that this process has not handed out already");
}
