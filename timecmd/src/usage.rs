//! One run's measurement: wall time from CLOCK_MONOTONIC and the rest from wait4's rusage.
//!
//! The fields are GNU `time -v`'s that Linux fills in, in base units: max RSS in bytes (the
//! kernel counts KiB), block input and output as bytes (the kernel counts 512-byte units),
//! faults and context switches as counts.

use measure::parts::Values;

/// What one run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunUsage {
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_bytes: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub fs_read_bytes: u64,
    pub fs_write_bytes: u64,
}

fn tv_s(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6
}

fn count(v: libc::c_long) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl RunUsage {
    /// From the clock readings around the run and the rusage of its reaping.
    pub fn new(start_ns: u64, end_ns: u64, ru: &libc::rusage) -> RunUsage {
        RunUsage {
            wall_s: end_ns.saturating_sub(start_ns) as f64 / 1e9,
            user_s: tv_s(ru.ru_utime),
            sys_s: tv_s(ru.ru_stime),
            max_rss_bytes: count(ru.ru_maxrss).saturating_mul(1024),
            minor_faults: count(ru.ru_minflt),
            major_faults: count(ru.ru_majflt),
            voluntary_switches: count(ru.ru_nvcsw),
            involuntary_switches: count(ru.ru_nivcsw),
            fs_read_bytes: count(ru.ru_inblock).saturating_mul(512),
            fs_write_bytes: count(ru.ru_oublock).saturating_mul(512),
        }
    }

    /// CPU time over wall time; above 1 when the command kept several CPUs busy (GNU time's
    /// "Percent of CPU this job got" divided by 100).
    pub fn cpu_ratio(&self) -> f64 {
        if self.wall_s > 0.0 {
            (self.user_s + self.sys_s) / self.wall_s
        } else {
            0.0
        }
    }

    /// The sample record's values.
    pub fn values(&self) -> Values {
        Values::new()
            .with("wall_s", self.wall_s)
            .with("user_s", self.user_s)
            .with("sys_s", self.sys_s)
            .with("cpu_ratio", self.cpu_ratio())
            .with_count("max_rss_bytes", self.max_rss_bytes)
            .with_count("minor_faults_count", self.minor_faults)
            .with_count("major_faults_count", self.major_faults)
            .with_count("voluntary_switches_count", self.voluntary_switches)
            .with_count("involuntary_switches_count", self.involuntary_switches)
            .with_count("fs_read_bytes", self.fs_read_bytes)
            .with_count("fs_write_bytes", self.fs_write_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_rusage() {
        // A real rusage (timecmd's own), with the fields under test set.
        let mut ru = *nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
            .unwrap()
            .as_ref();
        ru.ru_utime.tv_sec = 1;
        ru.ru_utime.tv_usec = 500_000;
        ru.ru_stime.tv_sec = 0;
        ru.ru_stime.tv_usec = 250_000;
        ru.ru_maxrss = 2048;
        ru.ru_inblock = 8;
        ru.ru_oublock = 2;
        ru.ru_minflt = 10;
        let u = RunUsage::new(1_000_000_000, 2_000_000_000, &ru);
        assert_eq!(u.wall_s, 1.0);
        assert_eq!(u.user_s, 1.5);
        assert_eq!(u.sys_s, 0.25);
        assert_eq!(u.max_rss_bytes, 2 * 1024 * 1024);
        assert_eq!(u.fs_read_bytes, 4096);
        assert_eq!(u.fs_write_bytes, 1024);
        assert_eq!(u.cpu_ratio(), 1.75);
        let v = u.values();
        assert_eq!(v.0["minor_faults_count"], 10);
        assert!(v.0.keys().all(|k| measure::record::has_unit_suffix(k)));
    }
}
