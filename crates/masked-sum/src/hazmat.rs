//! The `hazmat` feature: protocol internals (Shamir sharing, the raw
//! derivations of pairwise seeds and share keys, the wide-key hash) are
//! public only with it, for tests, fuzzing and independent
//! implementations. Without it they are `pub(crate)`: the default surface
//! is what a federated-learning system needs to aggregate.

/// Marks an item as a protocol internal: `pub` with the `hazmat` feature,
/// `pub(crate)` without it.
macro_rules! hazmat {
    ($(#[$m:meta])* pub $($item:tt)*) => {
        #[cfg(feature = "hazmat")]
        $(#[$m])*
        pub $($item)*

        #[cfg(not(feature = "hazmat"))]
        $(#[$m])*
        #[allow(dead_code, unreachable_pub)]
        pub(crate) $($item)*
    };
}
