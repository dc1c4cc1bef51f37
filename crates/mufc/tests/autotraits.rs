//! The public types can be shared across threads.

fn shareable<T: Send + Sync + Unpin>() {}

#[test]
fn public_types_are_send_sync_unpin() {
    shareable::<mufc::Federation>();
    shareable::<mufc::Client>();
    shareable::<mufc::Server>();
    shareable::<mufc::ValidConfig>();
    shareable::<mufc::RemovalReport>();
    shareable::<mufc::MufcError>();
}
