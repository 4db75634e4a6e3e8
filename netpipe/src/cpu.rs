//! CPU time of this process (user + system), for the CPU cost of a transfer.

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;

/// User and system CPU seconds used by the process so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cpu {
    pub user_s: f64,
    pub sys_s: f64,
}

impl Cpu {
    pub fn now() -> Cpu {
        let Ok(ru) = getrusage(UsageWho::RUSAGE_SELF) else {
            return Cpu::default();
        };
        let tv = |t: TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        Cpu {
            user_s: tv(ru.user_time()),
            sys_s: tv(ru.system_time()),
        }
    }

    /// The CPU used since `earlier`.
    pub fn since(self, earlier: Cpu) -> Cpu {
        Cpu {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
        }
    }

    pub fn plus(self, o: Cpu) -> Cpu {
        Cpu {
            user_s: self.user_s + o.user_s,
            sys_s: self.sys_s + o.sys_s,
        }
    }

    pub fn total_s(self) -> f64 {
        self.user_s + self.sys_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_grows() {
        let a = Cpu::now();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        let d = Cpu::now().since(a);
        assert!(d.total_s() >= 0.0);
        assert_eq!(d.plus(Cpu::default()), d);
    }
}
