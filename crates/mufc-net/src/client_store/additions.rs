//! The operator's additions (issue 29) in a client's store: records to
//! add, recorded with the records in their request's row.

use std::collections::HashSet;

use seeding::{Dataset, PointId};

use super::ClientStore;
use crate::NetError;

impl ClientStore {
    /// Records the operator's request to add `records` (issue 29; pending
    /// until the running client applies it: it learns them, and the next
    /// round carries its new histogram). Returns its number. The records
    /// must be in the model's box already (`mufc client add` maps them as
    /// the client's first start mapped its data), and their ids new to the
    /// client.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] for no record, an id the store ever
    /// named (a point the client holds or forgot, a pending addition's),
    /// another dimension, or if writing fails. The checks read the store
    /// in the request's own write, so that two requests at once cannot
    /// both take an id.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_net::client_store::{Asked, ClientStore};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let data = Dataset::new(DMatrix::from_element(2, 3, 0.25))?;
    /// let store = ClientStore::create(dir.path().join("c0.db"), "c0", &data)?;
    /// let more = Dataset::with_ids(DMatrix::from_element(2, 1, -0.25), vec![PointId(9)])?;
    /// let request = store.request_records(&more)?;
    /// assert_eq!(store.pending()?, vec![(request, Asked::Add(more.clone()))]);
    /// assert!(store.request_records(&more).is_err()); // id 9 is asked for already
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_records(&self, records: &Dataset) -> Result<u64, NetError> {
        let (number, _) = self.record(|conn| {
            let named = Self::checked_records(conn, records)?;
            if let Some(id) = records.ids().iter().find(|id| named.contains(id)) {
                return Err(format!(
                    "record id {id} is held by the client, was forgotten by it, or is named \
                     by a pending addition"
                ));
            }
            Ok((records.ids().to_vec(), Some(blob(records)?)))
        })?;
        Ok(number)
    }

    /// Records the operator's request to add the points of `points`,
    /// numbered on from the largest id the store has ever named (the ids
    /// `points` has are not kept), as [`Self::request_records`] records
    /// them. The numbers are drawn in the request's own write: two
    /// requests at once, from two processes, get distinct ids. Returns
    /// the request's number and the records' ids.
    ///
    /// # Errors
    ///
    /// As [`Self::request_records`]; an id past `u64::MAX`.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_net::client_store::ClientStore;
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let data = Dataset::new(DMatrix::from_element(2, 3, 0.25))?; // ids 0, 1, 2
    /// let store = ClientStore::create(dir.path().join("c0.db"), "c0", &data)?;
    /// let more = Dataset::new(DMatrix::from_element(2, 2, -0.25))?;
    /// let (_, ids) = store.request_new_records(&more)?;
    /// assert_eq!(ids, [PointId(3), PointId(4)]);
    /// let (_, ids) = store.request_new_records(&more)?;
    /// assert_eq!(ids, [PointId(5), PointId(6)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_new_records(&self, points: &Dataset) -> Result<(u64, Vec<PointId>), NetError> {
        self.record(|conn| {
            let named = Self::checked_records(conn, points)?;
            let first = match named.iter().map(|p| p.0).max() {
                None => 0,
                Some(top) => top.checked_add(1).ok_or("an id is u64::MAX")?,
            };
            let ids = (0..points.len() as u64)
                .map(|i| first.checked_add(i).map(PointId).ok_or("ids past u64::MAX"))
                .collect::<Result<Vec<_>, _>>()?;
            let m = points.points().clone();
            let records = if points.is_weighted() {
                Dataset::with_weights(m, ids.clone(), points.weights().to_vec())
            } else {
                Dataset::with_ids(m, ids.clone())
            }
            .map_err(|e| e.to_string())?;
            Ok((ids, Some(blob(&records)?)))
        })
    }

    /// Checks records against the store as `conn` reads it (not empty, of
    /// the points' dimension) and gives the ids the store ever named: an
    /// addition may take none of them.
    fn checked_records(
        conn: &rusqlite::Connection,
        records: &Dataset,
    ) -> Result<HashSet<PointId>, String> {
        if records.is_empty() {
            return Err("it adds no record".into());
        }
        let dim = Self::state_in(conn)?.data.dim();
        if records.dim() != dim {
            return Err(format!(
                "its records have {} coordinates, the client's points {dim}",
                records.dim()
            ));
        }
        Ok(Self::named_ids(conn)?.into_iter().collect())
    }
}

/// An addition's records as its row keeps them.
fn blob(records: &Dataset) -> Result<Vec<u8>, String> {
    postcard::to_allocvec(records).map_err(|e| e.to_string())
}
