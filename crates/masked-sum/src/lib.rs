#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

// Modules import from the module that defines an item, never from this
// root: the use graph between files has no circle.
#[macro_use]
mod hazmat;
mod context;
mod error;
pub mod masking;
pub mod secagg;
mod step;
pub mod wire;

pub use context::{ClientId, RoundContext, SessionId};
pub use error::{ProtocolError, SumError, SumResult, WireError};
pub use step::Step;
