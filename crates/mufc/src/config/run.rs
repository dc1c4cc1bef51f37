//! The run options: switches of the process that runs a federation,
//! which change no model, no mask and no message a client sends.

/// How a federation runs in this process ([`FederationConfig::run`](crate::FederationConfig::run)):
/// whether the clients of one process train, encode and join rounds in
/// parallel, and whether the driver keeps the messages the server
/// received. Neither changes a bit of any model or message: a
/// federation run sequentially equals the parallel one, and a restored
/// one serves alike whatever its options were.
///
/// # Example
///
/// ```
/// use mufc::{FederationConfig, RunOptions};
///
/// let options = RunOptions::new().parallel(false).record_messages(true);
/// let c = FederationConfig::new(2).run(options).validate()?;
/// assert!(!c.run().is_parallel() && c.run().records_messages());
/// // By default: parallel, nothing recorded.
/// assert_eq!(FederationConfig::new(2).validate()?.run(), RunOptions::default());
/// assert!(RunOptions::default().is_parallel());
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunOptions {
    // Serialized as the two flags that stood in `FederationConfig`, in
    // this order: a saved federation reads as it always did.
    parallel: bool,
    record_messages: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl RunOptions {
    /// The defaults: parallel, nothing recorded.
    pub fn new() -> Self {
        Self {
            parallel: true,
            record_messages: false,
        }
    }

    /// Whether the clients of one process run in parallel (with the
    /// `parallel` feature; default `true`). The results are the same bits
    /// either way.
    #[must_use]
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// Whether the driver keeps every message the server received in a
    /// request's rounds, masked as sent, for inspection
    /// ([`Federation::last_messages`](crate::Federation::last_messages);
    /// default `false`).
    #[must_use]
    pub fn record_messages(mut self, record: bool) -> Self {
        self.record_messages = record;
        self
    }

    /// Whether the clients run in parallel.
    pub fn is_parallel(&self) -> bool {
        self.parallel
    }

    /// Whether the server's received messages are kept.
    pub fn records_messages(&self) -> bool {
        self.record_messages
    }
}
