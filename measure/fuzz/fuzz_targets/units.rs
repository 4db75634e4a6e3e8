//! Fuzz target: arbitrary text through the size and duration parsers and the human
//! formats. Errors are expected; panics (overflow, slicing) are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use measure::units;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let _ = units::parse_size(s);
    let _ = units::parse_duration(s);
    let _ = units::parse_seconds(s);
    if data.len() >= 8 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&data[..8]);
        let v = f64::from_le_bytes(b);
        for suffix in ["_s", "_bytes", "_bits_per_s", "_bytes_per_s", "_per_s", "_ratio", "_count"] {
            let _ = units::choose_scale(suffix, v).apply(v);
        }
        let _ = units::format_seconds(v);
        let _ = units::sig3(v);
    }
});
