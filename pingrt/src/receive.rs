//! The receive side of a run: replies, ICMP errors and kernel transmit stamps, read from
//! the socket and its error queue, classified by the tracker and written as samples.

use crate::clock::now_ns;
use crate::packet::{self, Family, IcmpError, Incoming};
use crate::records::ReplyEvent;
use crate::session::{DRAIN_BATCH, Prober, out_err};
use crate::socket::{Kind, Received};
use crate::tracker::Outcome;
use crate::tracker::TxStamp;
use measure::Failure;
use pnet_packet::icmp::{IcmpCode, IcmpType};
use pnet_packet::icmpv6::{Icmpv6Code, Icmpv6Type};
use serde_json::json;
use std::io;
use std::net::IpAddr;

impl<'s, 'r: 's> Prober<'s, 'r> {
    /// Reads replies (and, on a raw socket, ICMP errors) until the queue is empty.
    pub(crate) fn drain(&mut self) -> Result<(), Failure> {
        for _ in 0..DRAIN_BATCH {
            let mut buf = std::mem::take(&mut self.buf);
            let r = self.sock.recv(&mut buf, false);
            let res = match r {
                Ok(r) => self.incoming(&buf, &r),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.buf = buf;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
                // A datagram socket reports an ICMP error once through recv as well; the
                // details are on the error queue.
                Err(_) => self.drain_errqueue(DRAIN_BATCH),
            };
            self.buf = buf;
            res?;
            if self.cfg.flood && self.tracker.waiting() == 0 {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Reads the error queue: kernel transmit stamps, and ICMP errors on datagram sockets.
    pub(crate) fn drain_errqueue(&mut self, max: usize) -> Result<(), Failure> {
        for _ in 0..max {
            let mut buf = std::mem::take(&mut self.errbuf);
            let r = self.sock.recv(&mut buf, true);
            let res = match r {
                Ok(r) => self.queued_error(&buf, &r),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
                Err(e) => {
                    self.errbuf = buf;
                    if e.kind() != io::ErrorKind::WouldBlock {
                        let _ = self.sock.take_error();
                    }
                    return Ok(());
                }
            };
            self.errbuf = buf;
            res?;
        }
        Ok(())
    }

    fn queued_error(&mut self, buf: &[u8], r: &Received) -> Result<(), Failure> {
        let Some(ee) = r.ext_err else {
            return Ok(());
        };
        match ee.origin {
            libc::SO_EE_ORIGIN_TIMESTAMPING => {
                if let (Some(ts), Some(kind)) = (r.stamp_ns, TxStamp::from_ee_info(ee.info)) {
                    self.tracker.tx_stamp(ts, kind);
                }
                Ok(())
            }
            libc::SO_EE_ORIGIN_ICMP | libc::SO_EE_ORIGIN_ICMP6 => {
                let data = &buf[..r.len.min(buf.len())];
                let (req_type, err) = match self.cfg.family {
                    Family::V4 => (
                        8,
                        packet::describe_v4(IcmpType(ee.icmp_type), IcmpCode(ee.icmp_code)),
                    ),
                    Family::V6 => (
                        128,
                        packet::describe_v6(Icmpv6Type(ee.icmp_type), Icmpv6Code(ee.icmp_code)),
                    ),
                };
                match (packet::echo_id_seq(data, req_type), err) {
                    (Some((_, seq)), Some(err)) => self.icmp_error(seq, &err, ee.offender),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn icmp_error(
        &mut self,
        seq: u16,
        err: &IcmpError,
        from: Option<IpAddr>,
    ) -> Result<(), Failure> {
        let from_s = from.map(|a| a.to_string()).unwrap_or_else(|| "?".into());
        if matches!(err.kind, "redirect" | "source_quench") {
            // Advice, not a loss: the request went on (a redirect) or may still be answered.
            self.human.error(&from_s, seq, &err.text);
            return Ok(());
        }
        if let Outcome::Error { probe } = self.tracker.error(seq) {
            self.human.error(&from_s, seq, &err.text);
            let mut i = self.probe_info(&probe);
            i.insert("from".into(), json!(from.map(|a| a.to_string())));
            i.insert("icmp_type".into(), json!(err.icmp_type));
            i.insert("icmp_code".into(), json!(err.icmp_code));
            i.insert("detail".into(), json!(err.text));
            self.failed_sample(err.kind, i)?;
        }
        Ok(())
    }

    fn incoming(&mut self, buf: &[u8], r: &Received) -> Result<(), Failure> {
        let data = &buf[..r.len.min(buf.len())];
        let rx_kernel = r.stamp_ns.is_some();
        let rx_ns = r.stamp_ns.unwrap_or_else(now_ns);
        let raw = self.sock.kind == Kind::Raw;
        let inc = match self.cfg.family {
            Family::V4 => packet::parse_v4(data, raw),
            Family::V6 => packet::parse_v6(data),
        };
        match inc {
            Incoming::Reply {
                id,
                seq,
                payload,
                icmp_len,
                checksum_ok,
                ttl,
            } => {
                if raw && id != self.id {
                    return Ok(()); // another process's echo
                }
                if r.from != Some(self.cfg.target.ip()) {
                    self.tracker.counts.foreign += 1;
                    return Ok(());
                }
                let ttl = ttl.or(r.ttl);
                let outcome = self.tracker.reply(seq, payload, checksum_ok, rx_ns);
                self.reply_outcome(outcome, ttl, icmp_len, rx_kernel)
            }
            Incoming::Error {
                err,
                id,
                seq,
                dst,
                checksum_ok,
            } => {
                // Ours only if it quotes our identifier and our target.
                if (raw && id != self.id) || !checksum_ok || dst != self.cfg.target.ip() {
                    return Ok(());
                }
                self.icmp_error(seq, &err, r.from)
            }
            Incoming::Other => Ok(()),
        }
    }

    fn reply_outcome(
        &mut self,
        o: Outcome,
        ttl: Option<u8>,
        bytes: usize,
        rx_kernel: bool,
    ) -> Result<(), Failure> {
        let from = &self.target_text;
        match o {
            Outcome::Reply {
                probe,
                rtt_s,
                out_of_order,
            } => {
                self.rtts.push(rtt_s);
                self.human.reply(bytes, from, probe.seq, ttl, rtt_s);
                let ev = ReplyEvent {
                    seq: probe.seq,
                    number: probe.number,
                    ttl,
                    bytes,
                    rtt_s,
                    tx: probe.kernel_tx,
                    rx_kernel,
                    out_of_order,
                };
                match self.records.as_mut() {
                    Some(r) => r.reply(ev).map_err(|e| out_err(&e)),
                    None => Ok(()),
                }
            }
            Outcome::Duplicate { probe, rtt_s } => {
                self.human.duplicate(bytes, from, probe.seq, ttl, rtt_s);
                Ok(())
            }
            Outcome::Late { seq, rtt_s, .. } => {
                if let Some(rtt) = rtt_s {
                    self.human.note(&format!(
                        "late reply for icmp_seq={seq} after {} ms (not counted)",
                        crate::human::ms(rtt)
                    ));
                }
                Ok(())
            }
            Outcome::Corrupt { seq, why } => {
                self.human
                    .note(&format!("icmp_seq={seq}: {why} (not counted)"));
                Ok(())
            }
            Outcome::Foreign | Outcome::Error { .. } | Outcome::Ignored => Ok(()),
        }
    }
}
