//! The operator's additions (issue 29) in a client's store: records to
//! add, recorded with the records in their request's row.

use seeding::{Dataset, PointId};

use super::ClientStore;
use super::requests::Asked;
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
    /// [`NetError::ClientStore`] for no record, an id the client holds or
    /// that a pending addition names, another dimension, or if writing
    /// fails.
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
        let refuse = |why: String| Err(self.error("recording a request", why));
        if records.is_empty() {
            return refuse("it adds no record".into());
        }
        let held = self.data()?;
        if records.dim() != held.dim() {
            return refuse(format!(
                "its records have {} coordinates, the client's points {}",
                records.dim(),
                held.dim()
            ));
        }
        let mut asked: Vec<PointId> = held.ids().to_vec();
        for (_, a) in self.pending()? {
            if let Asked::Add(more) = a {
                asked.extend_from_slice(more.ids());
            }
        }
        let asked: std::collections::HashSet<PointId> = asked.into_iter().collect();
        if let Some(id) = records.ids().iter().find(|id| asked.contains(id)) {
            return refuse(format!(
                "record id {id} is held by the client or named by a pending addition"
            ));
        }
        let blob =
            postcard::to_allocvec(records).map_err(|e| self.error("recording a request", e))?;
        self.record(records.ids(), Some(blob))
    }
}
