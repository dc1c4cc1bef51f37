#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| app_testkit::fuzz_remote::parties_snapshot(data));
