#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| app_testkit::fuzz_apps::federation_from_bytes(data));
