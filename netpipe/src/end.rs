//! How a stream ended and what it did: the outcome its sample reports.

use crate::sock::TcpInfo;
use std::io;
use std::time::Duration;

/// How a stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// The peer closed its side: the normal end for a receiver.
    Eof,
    /// The byte budget or the time limit was reached: the normal end for a sender.
    Limit,
    /// Ctrl-C.
    Stopped,
    /// Nothing moved for the idle timeout.
    Idle(Duration),
    /// The peer reset or vanished.
    PeerGone(String),
    /// The peer stopped taking data: what it left unread when the sender's time was up.
    Stalled(String),
    Failed(String),
}

impl End {
    pub fn is_clean(&self) -> bool {
        matches!(self, End::Eof | End::Limit)
    }

    /// A short word for records.
    pub fn word(&self) -> &'static str {
        match self {
            End::Eof => "eof",
            End::Limit => "limit",
            End::Stopped => "interrupted",
            End::Idle(_) => "idle-timeout",
            End::PeerGone(_) => "peer-gone",
            End::Stalled(_) => "peer-stalled",
            End::Failed(_) => "error",
        }
    }

    /// The text people read.
    pub fn describe(&self) -> String {
        match self {
            End::Eof => "the peer closed the connection".into(),
            End::Limit => "the limit was reached".into(),
            End::Stopped => "interrupted".into(),
            End::Idle(d) => format!(
                "nothing arrived or left for {} (--idle-timeout)",
                measure::units::format_seconds(d.as_secs_f64())
            ),
            End::PeerGone(s) | End::Stalled(s) | End::Failed(s) => s.clone(),
        }
    }
}

/// What one stream did.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub end: End,
    pub bytes: u64,
    /// First and last byte moved, in nanoseconds after the session's base.
    pub first_ns: Option<u64>,
    pub end_ns: Option<u64>,
    /// The sender's view of the connection when it finished.
    pub tcp: Option<TcpInfo>,
    /// Whether the peer closed after the sender's half-close (all data consumed).
    pub peer_closed: bool,
    /// How the sender moved its bytes (`splice` or `copy`); empty for a receiver.
    pub method: &'static str,
    /// The peer's netpipe/1 hello, when the peer is a netpipe (agree.rs).
    pub peer_hello: Option<crate::agree::Hello>,
    /// What the peer said it moved on this stream: the receiver's count (to a sender), the
    /// sender's end mark (to a receiver).
    pub peer_count: Option<u64>,
}

impl Outcome {
    /// A stream that ended before it moved anything.
    pub fn nothing(end: End, method: &'static str) -> Outcome {
        Outcome {
            end,
            bytes: 0,
            first_ns: None,
            end_ns: None,
            tcp: None,
            peer_closed: false,
            method,
            peer_hello: None,
            peer_count: None,
        }
    }
}

pub fn classify(e: &io::Error) -> End {
    match e.raw_os_error() {
        Some(libc::ECONNRESET) => End::PeerGone("connection reset by peer".into()),
        Some(libc::EPIPE) => End::PeerGone("the peer closed the connection".into()),
        Some(libc::ETIMEDOUT) => End::PeerGone("the peer stopped answering (TCP timeout)".into()),
        Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) => {
            End::PeerGone(format!("the peer became unreachable: {e}"))
        }
        _ => End::Failed(e.to_string()),
    }
}
