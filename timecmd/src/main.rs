//! The timecmd binary: parses nothing itself, see the library. It starts at the C entry
//! point, skipping std's start-up, because a single `timecmd -- true` is timed as a whole
//! against /usr/bin/time (see measure::cli::c_main). Test builds keep the test harness's main.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    measure::cli::c_main("timecmd", timecmd::status)
}
