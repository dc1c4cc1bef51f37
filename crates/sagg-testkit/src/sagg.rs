//! Generic test logic for `syndrome-agg`: property suites run over every
//! field ([`props`]), the aggregator's properties run for every sketch
//! type ([`aggregator`]), and the bodies of its fuzz targets ([`fuzz`],
//! and [`fuzz_large`] for the decoders' fast paths).

pub mod aggregator;
pub mod fuzz;
pub mod fuzz_large;
pub mod props;
