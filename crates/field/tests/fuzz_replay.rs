//! The fuzz targets' bodies (`field_testkit::fuzz`), replayed on stable Rust over
//! deterministic pseudo-random inputs so that CI exercises every target.

#[test]
fn field_bytes() {
    field_testkit::fuzz::replay(
        "fuzz/field_bytes",
        3000,
        40,
        field_testkit::fuzz::field_bytes,
    );
}

#[test]
fn bm() {
    field_testkit::fuzz::replay("fuzz/bm", 1500, 160, field_testkit::fuzz::bm);
}

#[test]
fn find_roots() {
    field_testkit::fuzz::replay("fuzz/find_roots", 600, 160, field_testkit::fuzz::find_roots);
}

#[test]
fn poly_kernels() {
    field_testkit::fuzz::replay(
        "fuzz/poly_kernels",
        150,
        12,
        field_testkit::fuzz::poly_kernels,
    );
}
