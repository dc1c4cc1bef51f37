//! Generic test logic for `syndrome-agg`: property suites run over every
//! field ([`props`]), and the bodies of its fuzz targets ([`fuzz`]).

pub mod fuzz;
pub mod props;
