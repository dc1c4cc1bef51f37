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
//! The file: a version byte, postcard `(roster names, setup)`, then the
//! SHA-256 of both (a truncated or flipped file is refused, never taken).
//! It is replaced atomically (written aside, synced, renamed).

use std::io::Write;
use std::path::{Path, PathBuf};

use mufc::remote::RemoteSetup;
use sha2::{Digest, Sha256};

use crate::NetError;

/// The file's format version.
const VERSION: u8 = 1;

/// Where the setup of the server whose store is `store` is kept.
pub(super) fn path_of(store: &Path) -> PathBuf {
    suffixed(store, ".setup")
}

/// `path` with `suffix` added to its file name.
fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn checksum(body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"mufc-server-setup/");
    h.update(body);
    h.finalize().into()
}

fn bad(path: &Path, why: &str) -> NetError {
    NetError::Protocol(format!(
        "{} is not a server's setup ({why}); the clients that joined a round \
         refuse any other setup, so restore the file rather than delete it",
        path.display()
    ))
}

/// The file's bytes for `roster` and `setup`.
fn encode(roster: &[String], setup: &RemoteSetup) -> Result<Vec<u8>, NetError> {
    let body = postcard::to_allocvec(&(roster, setup))
        .map_err(|e| NetError::Protocol(format!("encoding the setup: {e}")))?;
    let mut out = Vec::with_capacity(1 + body.len() + 32);
    out.push(VERSION);
    out.extend_from_slice(&body);
    let sum = checksum(&out);
    out.extend_from_slice(&sum);
    Ok(out)
}

/// Parses the file's bytes.
fn decode(path: &Path, bytes: &[u8]) -> Result<(Vec<String>, RemoteSetup), NetError> {
    let split = bytes
        .len()
        .checked_sub(32)
        .ok_or_else(|| bad(path, "too short"))?;
    let (body, sum) = bytes.split_at(split);
    if checksum(body) != sum {
        return Err(bad(path, "its checksum does not match"));
    }
    let (&version, body) = body.split_first().ok_or_else(|| bad(path, "empty"))?;
    if version != VERSION {
        return Err(bad(
            path,
            &format!("format version {version}, this build reads {VERSION}"),
        ));
    }
    postcard::from_bytes(body).map_err(|e| bad(path, &e.to_string()))
}

/// Writes the setup (replacing the file atomically).
pub(super) fn write(path: &Path, roster: &[String], setup: &RemoteSetup) -> Result<(), NetError> {
    let bytes = encode(roster, setup)?;
    let aside = suffixed(path, ".new");
    let io = |e: std::io::Error| NetError::Protocol(format!("writing {}: {e}", path.display()));
    let mut file = std::fs::File::create(&aside).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    std::fs::rename(&aside, path).map_err(io)
}

/// The setup kept at `path`, if there is a file.
///
/// # Errors
///
/// A file that cannot be read or is not a setup of this version (see the
/// module docs): the server refuses to start rather than set up again.
pub(super) fn read(path: &Path) -> Result<Option<(Vec<String>, RemoteSetup)>, NetError> {
    match std::fs::read(path) {
        Ok(bytes) => decode(path, &bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(NetError::Protocol(format!(
            "reading {}: {e}",
            path.display()
        ))),
    }
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
            assert!(decode(&path, &bytes[..len]).is_err(), "truncated to {len}");
        }
        for i in (0..bytes.len()).step_by(3) {
            let mut b = bytes.clone();
            b[i] ^= 1 << (i % 8);
            let err = decode(&path, &b).unwrap_err().to_string();
            assert!(err.contains("not a server's setup"), "{err}");
        }
        remove(&path).unwrap();
        remove(&path).unwrap();
        assert!(read(&path).unwrap().is_none());
    }
}
