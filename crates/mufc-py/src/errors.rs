//! The exceptions the package raises: one base, [`MufcError`], and a
//! subclass per concern, each carrying the Rust error's message. Bad
//! input (configuration, data, bytes) also subclasses `ValueError`, so
//! that code catching Python's usual exception for it keeps working.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    mufc,
    MufcError,
    PyException,
    "The base of every error the mufc package raises."
);
pyo3::create_exception!(
    mufc,
    ConfigError,
    MufcError,
    "An option or parameter no federation or sketch takes (also a ValueError)."
);
pyo3::create_exception!(
    mufc,
    DataError,
    MufcError,
    "Records or record ids that cannot be used (also a ValueError)."
);
pyo3::create_exception!(
    mufc,
    StoreError,
    MufcError,
    "The model store refused a request, or found itself damaged."
);
pyo3::create_exception!(
    mufc,
    DecodeError,
    MufcError,
    "A sum that does not decode: more keys than the capacity, or a wrong mask."
);
pyo3::create_exception!(
    mufc,
    WireError,
    MufcError,
    "Bytes that are not a message of this round and these parameters."
);
pyo3::create_exception!(
    mufc,
    ProtocolError,
    MufcError,
    "A message out of turn, a client named twice, too few clients."
);

/// Adds the exceptions to the module, each (but the protocol's and the
/// store's) also a `ValueError`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MufcError", py.get_type::<MufcError>())?;
    for (name, ty) in [
        ("ConfigError", py.get_type::<ConfigError>()),
        ("DataError", py.get_type::<DataError>()),
        ("WireError", py.get_type::<WireError>()),
    ] {
        // A ValueError as well: `class ConfigError(MufcError, ValueError)`.
        let bases = (py.get_type::<MufcError>(), py.get_type::<PyValueError>());
        ty.setattr("__bases__", bases)?;
        m.add(name, ty)?;
    }
    m.add("StoreError", py.get_type::<StoreError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("ProtocolError", py.get_type::<ProtocolError>())?;
    Ok(())
}

/// A command-line layer's error (configuration, data, store).
pub(crate) fn cli(e: mufc_cli::CliError) -> PyErr {
    use mufc_cli::CliError as E;
    let msg = e.to_string();
    match e {
        E::Store(_) | E::Refused(_) => StoreError::new_err(msg),
        E::InvalidParameter { .. }
        | E::KPrimeExceedsK { .. }
        | E::KExceedsPoints { .. }
        | E::ClientsExceedPoints { .. }
        | E::DropoutTooHigh { .. }
        | E::GammaOneBin { .. }
        | E::Mufc(mufc::MufcError::InvalidConfig { .. }) => ConfigError::new_err(msg),
        _ => DataError::new_err(msg),
    }
}

/// The model store's error.
pub(crate) fn store(e: mufc_store::StoreError) -> PyErr {
    use mufc_store::StoreError as E;
    let msg = e.to_string();
    match e {
        E::Dimension { .. }
        | E::NotFinite { .. }
        | E::UnknownRecords { .. }
        | E::AlreadyForgotten { .. }
        | E::Forgotten { .. }
        | E::RecordHeld { .. }
        | E::DuplicateRecord(_)
        | E::DuplicateClient(_)
        | E::InvalidName(_)
        | E::RecordCount { .. } => DataError::new_err(msg),
        _ => StoreError::new_err(msg),
    }
}

/// A sketch's error, by the group that names it.
pub(crate) fn sketch(e: syndrome_agg::SketchError) -> PyErr {
    use syndrome_agg::SketchError as E;
    let msg = e.to_string();
    match e {
        E::Params(_) => ConfigError::new_err(msg),
        E::Decode(_) => DecodeError::new_err(msg),
        E::Wire(_) => WireError::new_err(msg),
        _ => ProtocolError::new_err(msg),
    }
}
