//! Small files the server keeps next to its store (the pending setup, the
//! clients' stores): a version byte, a postcard body, then the SHA-256 of
//! both under the file's own domain, so that a truncated or flipped file
//! is refused, never taken. A file is replaced atomically (written aside,
//! synced, renamed).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use crate::NetError;

/// One kind of sealed file.
pub(super) struct Sealed {
    /// Prefixes the checksum: a file of one kind never reads as another.
    pub(super) domain: &'static [u8],
    /// The format version this build writes and reads.
    pub(super) version: u8,
    /// What the file is, in an error ("a server's setup").
    pub(super) what: &'static str,
    /// What an operator should do with a damaged file.
    pub(super) advice: &'static str,
}

impl Sealed {
    fn checksum(&self, body: &[u8]) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.domain);
        h.update(body);
        h.finalize().into()
    }

    fn bad(&self, path: &Path, why: &str) -> NetError {
        NetError::Protocol(format!(
            "{} is not {} ({why}); {}",
            path.display(),
            self.what,
            self.advice
        ))
    }

    /// The file's bytes for `value`.
    pub(super) fn encode<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>, NetError> {
        let body = postcard::to_allocvec(value)
            .map_err(|e| NetError::Protocol(format!("encoding {}: {e}", self.what)))?;
        let mut out = Vec::with_capacity(1 + body.len() + 32);
        out.push(self.version);
        out.extend_from_slice(&body);
        let sum = self.checksum(&out);
        out.extend_from_slice(&sum);
        Ok(out)
    }

    /// Parses the file's bytes (read from `path`, named in errors).
    pub(super) fn decode<T: DeserializeOwned>(
        &self,
        path: &Path,
        bytes: &[u8],
    ) -> Result<T, NetError> {
        let split = bytes
            .len()
            .checked_sub(32)
            .ok_or_else(|| self.bad(path, "too short"))?;
        let (body, sum) = bytes.split_at(split);
        if self.checksum(body) != sum {
            return Err(self.bad(path, "its checksum does not match"));
        }
        let (&version, body) = body.split_first().ok_or_else(|| self.bad(path, "empty"))?;
        if version != self.version {
            return Err(self.bad(
                path,
                &format!(
                    "format version {version}, this build reads {}",
                    self.version
                ),
            ));
        }
        postcard::from_bytes(body).map_err(|e| self.bad(path, &e.to_string()))
    }

    /// Writes `value` at `path`, replacing the file atomically.
    pub(super) fn write<T: Serialize + ?Sized>(
        &self,
        path: &Path,
        value: &T,
    ) -> Result<(), NetError> {
        let bytes = self.encode(value)?;
        let aside = suffixed(path, ".new");
        let io = |e: std::io::Error| NetError::Protocol(format!("writing {}: {e}", path.display()));
        let mut file = std::fs::File::create(&aside).map_err(io)?;
        file.write_all(&bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&aside, path).map_err(io)
    }

    /// The value kept at `path`, if there is a file.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or is not of this kind and version.
    pub(super) fn read<T: DeserializeOwned>(&self, path: &Path) -> Result<Option<T>, NetError> {
        match std::fs::read(path) {
            Ok(bytes) => self.decode(path, &bytes).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(NetError::Protocol(format!(
                "reading {}: {e}",
                path.display()
            ))),
        }
    }
}

/// `path` with `suffix` added to its file name.
pub(super) fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}
