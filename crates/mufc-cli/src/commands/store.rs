//! The model-store commands (`fit`, `forget`, `add`, `verify`,
//! `predict`, `export`, `inspect`): thin layers over `mufc_store`, which does the work; these
//! read the options, call it, and print what it reports.

mod add;
mod fit;
mod forget;
mod inspect;
mod read;
mod show;
mod verify;

pub use add::add;
pub use fit::{fit, fit_config_for_parties, fit_table};
pub use forget::forget;
pub use forget::report_json;
pub use inspect::inspect;
pub use read::{export, predict};
pub use verify::{verification_json, verify};
