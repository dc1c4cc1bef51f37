//! Criterion benches of the mufc crate (written below).

fn main() {}
