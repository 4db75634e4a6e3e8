//! Waiting for the kernel to turn receive stamping on, checked with a datagram to ourselves.

use super::recvmsg::recv_msg;
use nix::sys::socket::{TimestampingFlag, setsockopt, sockopt};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

/// Waits until the kernel stamps the packets it receives, at most `limit`; whether it does.
///
/// The first socket that asks for receive stamps turns stamping on for the whole stack a
/// moment later, from a work queue (a deferred static key); packets that arrive before that
/// carry no stamp. A datagram sent to ourselves on 127.0.0.1 shows when stamping is on: it
/// comes back with a software receive stamp. Without a usable loopback (down in a network
/// namespace) this waits the whole `limit`, as a plain sleep would.
pub fn wait_for_rx_stamps(limit: Duration) -> bool {
    let start = Instant::now();
    let check = LoopbackCheck::open().ok();
    loop {
        if check.as_ref().is_some_and(LoopbackCheck::stamped) {
            return true;
        }
        let left = limit.saturating_sub(start.elapsed());
        if left.is_zero() {
            return false;
        }
        let pause = if check.is_some() {
            Duration::from_micros(200)
        } else {
            left
        };
        std::thread::sleep(left.min(pause));
    }
}

/// A UDP socket bound to 127.0.0.1 that sends itself a byte and looks at its receive stamp.
struct LoopbackCheck {
    sock: std::net::UdpSocket,
    addr: SocketAddr,
}

impl LoopbackCheck {
    fn open() -> io::Result<LoopbackCheck> {
        let sock = std::net::UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
        sock.set_nonblocking(true)?;
        let flags = TimestampingFlag::SOF_TIMESTAMPING_RX_SOFTWARE
            | TimestampingFlag::SOF_TIMESTAMPING_SOFTWARE;
        setsockopt(&sock, sockopt::Timestamping, &flags).map_err(io::Error::from)?;
        let addr = sock.local_addr()?;
        Ok(LoopbackCheck { sock, addr })
    }

    /// Whether a datagram sent now comes back stamped (false when it does not come back).
    fn stamped(&self) -> bool {
        if self.sock.send_to(&[0], self.addr).is_err() {
            return false;
        }
        let mut buf = [0u8; 8];
        let mut stamped = false;
        // Read what is queued (an earlier datagram may have come late): the last one counts.
        for _ in 0..64 {
            match recv_msg(&self.sock, &mut buf, false) {
                Ok(r) => stamped = r.stamp_ns.is_some(),
                Err(_) => break,
            }
        }
        stamped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receive_stamps_are_seen_on_loopback() {
        if LoopbackCheck::open().is_err() {
            testkit::skip("no usable 127.0.0.1");
            return;
        }
        // The check's own socket asks for stamps, so stamping comes on if it was off.
        assert!(wait_for_rx_stamps(Duration::from_secs(5)));
    }

    #[test]
    fn without_loopback_the_wait_is_a_plain_sleep() {
        if !testkit::need_root("a network namespace without loopback") {
            return;
        }
        let got = std::thread::spawn(|| {
            // Only this thread moves into a new network namespace (whose loopback is down),
            // which goes away with the thread.
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).ok()?;
            let no_loopback = LoopbackCheck::open().map_or(true, |c| !c.stamped());
            Some((no_loopback, wait_for_rx_stamps(Duration::from_millis(20))))
        })
        .join()
        .expect("thread");
        match got {
            Some((no_loopback, stamped)) => {
                assert!(no_loopback);
                assert!(!stamped);
            }
            None => testkit::skip("unshare(CLONE_NEWNET) refused"),
        }
    }
}
