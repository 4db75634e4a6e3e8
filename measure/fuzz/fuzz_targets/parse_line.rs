//! Fuzz target: arbitrary bytes through the strict record reader; whatever it accepts must
//! write back to a line that it reads back the same. Errors are expected; panics are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(record) = measure::parse_line(line) {
        let again = measure::parse_line(&record.to_line()).expect("a written record reads back");
        assert_eq!(again, record);
    }
});
