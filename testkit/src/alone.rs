//! Timing-sensitive tests run alone in their test process. Every test that drives the
//! release binaries shares the machine: [`crate::release::bin_dir`] takes a read lock that
//! its thread holds until the test ends (libtest runs each test on a thread of its own).
//! A test whose assertions compare timings (a CPU quota against the bare machine) takes the
//! write lock with [`alone`] first, so that no other test's load is in its figures; a
//! waiting writer holds new readers back.

use std::cell::{Cell, RefCell};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    static SHARED: RefCell<Option<RwLockReadGuard<'static, ()>>> = const { RefCell::new(None) };
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// This test shares the machine with the others (taken once per test thread). A no-op on
/// a thread that runs alone, and on a thread a test spawned (libtest names its threads
/// after the test; a spawned one has no name), whose test holds the lock already and which
/// would otherwise wait behind a waiting writer for ever.
pub fn share() {
    let test_thread = std::thread::current().name().is_some_and(|n| n != "main");
    if !test_thread || ALONE.with(Cell::get) {
        return;
    }
    SHARED.with(|s| {
        if s.borrow().is_none() {
            let guard = MACHINE.read().unwrap_or_else(PoisonError::into_inner);
            *s.borrow_mut() = Some(guard);
        }
    });
}

/// Waits until no other test of this process is running and keeps the others out while
/// the guard lives.
pub fn alone() -> RwLockWriteGuard<'static, ()> {
    SHARED.with(|s| s.borrow_mut().take());
    ALONE.with(|a| a.set(true));
    MACHINE.write().unwrap_or_else(PoisonError::into_inner)
}
