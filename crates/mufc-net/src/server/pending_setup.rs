//! The setup of a server that has not trained yet, kept next to its store
//! (`<store>.setup`) from the moment the roster has registered until the
//! store exists.
//!
//! Why: the setup (the configuration resolved for the registered points,
//! the roster) is fixed by the first round, and a client refuses any
//! round of another setup. With groups, training is one round per group,
//! and a removal may already have run in a trained group: a server that
//! stopped before every group trained, set up again from the clients' new
//! registrations (fewer points), would announce another setup, which the
//! clients that trained refuse, for ever. So the setup is written before
//! the first round and read back on a restart; the store supersedes it.
//!
//! The file: postcard `(roster names, setup)`, sealed (`sealed.rs`: a
//! version byte, the body and their SHA-256; a truncated or flipped file
//! is refused, never taken; replaced atomically).

use std::path::{Path, PathBuf};

use mufc::remote::RemoteSetup;

use super::sealed::{Sealed, suffixed};
use crate::NetError;

/// The file's kind: its checksum's domain and format version.
const SETUP: Sealed = Sealed {
    domain: b"mufc-server-setup/",
    version: 1,
    what: "a server's setup",
    advice: "the clients that joined a round refuse any other setup, so restore \
             the file rather than delete it",
};

/// Where the setup of the server whose store is `store` is kept.
pub(super) fn path_of(store: &Path) -> PathBuf {
    suffixed(store, ".setup")
}

/// Writes the setup (replacing the file atomically).
pub(super) fn write(path: &Path, roster: &[String], setup: &RemoteSetup) -> Result<(), NetError> {
    SETUP.write(path, &(roster, setup))
}

/// The setup kept at `path`, if there is a file.
///
/// # Errors
///
/// A file that cannot be read or is not a setup of this version (see the
/// module docs): the server refuses to start rather than set up again.
pub(super) fn read(path: &Path) -> Result<Option<(Vec<String>, RemoteSetup)>, NetError> {
    SETUP.read(path)
}

/// Removes the file once the store holds the federation (an error is
/// only reported: the store wins over the file on the next start).
pub(super) fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use mufc::remote::Registration;
    use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};

    use super::*;

    fn setup() -> RemoteSetup {
        let config = FederationConfig::new(2)
            .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
            .validate()
            .unwrap();
        let regs: Vec<Registration> = (0..3)
            .map(|i| Registration {
                id: ClientId(i),
                points: 10 + i,
                dim: 2,
                scale: 1,
            })
            .collect();
        RemoteSetup::new(&config, &regs).unwrap()
    }

    #[test]
    fn a_setup_reads_back_and_every_damage_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(&dir.path().join("server.db"));
        assert!(read(&path).unwrap().is_none());
        let names = vec!["a".to_string(), "b".into(), "c".into()];
        write(&path, &names, &setup()).unwrap();
        assert_eq!(read(&path).unwrap(), Some((names, setup())));
        let bytes = std::fs::read(&path).unwrap();
        // Every truncation and every flipped bit (of a sample) is refused.
        for len in 0..bytes.len() {
            let r: Result<(Vec<String>, RemoteSetup), _> = SETUP.decode(&path, &bytes[..len]);
            assert!(r.is_err(), "truncated to {len}");
        }
        for i in (0..bytes.len()).step_by(3) {
            let mut b = bytes.clone();
            b[i] ^= 1 << (i % 8);
            let r: Result<(Vec<String>, RemoteSetup), _> = SETUP.decode(&path, &b);
            let err = r.unwrap_err().to_string();
            assert!(err.contains("not a server's setup"), "{err}");
        }
        remove(&path).unwrap();
        remove(&path).unwrap();
        assert!(read(&path).unwrap().is_none());
    }
}
