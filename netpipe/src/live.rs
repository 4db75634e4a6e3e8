//! The live streams of a session: one thread each, and what they have moved by now.

use crate::agree::Pre;
use crate::ctl::{Ctl, Progress};
use crate::end::Outcome;
use crate::plan::{Plan, Role, SendMethod};
use crate::sock;
use crate::source::Source;
use crate::stream;
use measure::Exit;
use measure::Failure;
use socket2::Socket;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

/// One live stream of a session.
pub struct Live {
    pub sock: Arc<Socket>,
    pub prog: Arc<Progress>,
    pub handle: JoinHandle<Outcome>,
    pub local: Option<SocketAddr>,
    pub peer: SocketAddr,
}

/// Sets the stream's options and starts its thread;
/// `index` is the stream's place in its session.
pub fn spawn(
    plan: &Plan,
    ctl: &Arc<Ctl>,
    s: Socket,
    peer: SocketAddr,
    index: usize,
    pre: Pre,
) -> Result<Live, Failure> {
    plan.opts
        .apply_stream(&s)
        .map_err(|e| Failure::new(Exit::Cannot, "socket options", e))?;
    let local = s.local_addr().ok().and_then(|a| a.as_socket());
    let sock = Arc::new(s);
    let prog = Arc::new(Progress::new());
    let (s2, p2, c2) = (Arc::clone(&sock), Arc::clone(&prog), Arc::clone(ctl));
    let role = plan.role;
    let block = plan.block;
    let random = plan.random;
    let method = plan.method;
    let index = index.min(usize::from(u16::MAX)) as u16;
    let handle = std::thread::Builder::new()
        .name("netpipe-stream".into())
        .spawn(move || match role {
            Role::Send => {
                let mut src = match method {
                    SendMethod::Splice => Source::splice(block, random),
                    SendMethod::Sendfile => Source::sendfile(block, random),
                    SendMethod::Copy => None,
                }
                .unwrap_or_else(|| Source::copy(block, random));
                stream::send(&s2, &c2, &p2, &mut src, index, pre)
            }
            Role::Recv => {
                // Never initialised: with MSG_TRUNC the kernel writes nothing to it.
                let len = block.max(4 << 20);
                let mut buf = Vec::<u8>::with_capacity(len);
                stream::recv(
                    &s2,
                    &c2,
                    &p2,
                    &mut buf.spare_capacity_mut()[..len],
                    index,
                    pre,
                )
            }
        })
        .map_err(|e| Failure::new(Exit::Cannot, "starting a stream thread", e))?;
    Ok(Live {
        sock,
        prog,
        handle,
        local,
        peer,
    })
}

/// The sum of TCP_INFO retransmits, mean RTT and summed cwnd over live streams.
pub fn tcp_now(live: &[Live]) -> (u64, Option<f64>, u64) {
    let mut retr = 0u64;
    let mut rtt = 0.0;
    let mut n = 0u32;
    let mut cwnd = 0u64;
    for l in live {
        if let Some(ti) = sock::tcp_info(&l.sock) {
            retr += u64::from(ti.total_retrans);
            rtt += ti.rtt_s;
            n += 1;
            cwnd += ti.cwnd_bytes();
        }
    }
    (retr, (n > 0).then(|| rtt / f64::from(n)), cwnd)
}

/// The bytes a stream has moved by now, for intervals and the end of --omit. A receiver reads
/// in gulps of up to a millisecond's worth (lowat::Lowat), so while it runs (and `queued`:
/// before a --time limit, after which it reads nothing more) what the kernel holds for it
/// unread (SIOCINQ) counts as arrived. The count read comes first, so that a read between the
/// two can only be missed (and made up later), never counted twice.
pub fn moved(plan: &Plan, l: &Live, queued: bool) -> u64 {
    let read = l.prog.bytes();
    if plan.role != Role::Recv || !queued || l.prog.is_done() {
        return read;
    }
    read + sock::unread_bytes(&l.sock)
}

/// When the last byte of a session moved, once all its streams have ended.
pub fn last_byte(live: &[Live]) -> Option<u64> {
    if !live.iter().all(|l| l.prog.is_done()) {
        return None;
    }
    live.iter().filter_map(|l| l.prog.end_ns()).max()
}
