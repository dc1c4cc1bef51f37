//! A party's task, running until it is asked to stop or fails: what the
//! server's and the client's handles share.

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::NetError;

/// A running task and the signal that stops it.
#[derive(Debug)]
pub(crate) struct Running {
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), NetError>>,
    what: &'static str,
}

impl Running {
    /// `task` (the `what`), stopped when `shutdown` fires.
    pub(crate) fn new(
        what: &'static str,
        shutdown: oneshot::Sender<()>,
        task: JoinHandle<Result<(), NetError>>,
    ) -> Self {
        Self {
            shutdown: Some(shutdown),
            task,
            what,
        }
    }

    /// Asks the task to stop and waits for it.
    pub(crate) async fn stop(mut self) -> Result<(), NetError> {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        self.join().await
    }

    async fn join(self) -> Result<(), NetError> {
        let what = self.what;
        self.task
            .await
            .map_err(|e| NetError::Transport(format!("the {what} task failed: {e}")))?
    }
}

/// Runs `work` on `value` on tokio's blocking threads and gives both back:
/// a party's protocol steps (Shamir shares, masks, decoding, K-means) are
/// CPU work that would otherwise hold a runtime thread, starving the
/// connections' keep-alives when many parties share a process.
pub(crate) async fn off_runtime<T, R>(
    value: T,
    work: impl FnOnce(&mut T) -> R + Send + 'static,
) -> (T, R)
where
    T: Send + 'static,
    R: Send + 'static,
{
    let task = tokio::task::spawn_blocking(move || {
        let mut value = value;
        let r = work(&mut value);
        (value, r)
    });
    match task.await {
        Ok(out) => out,
        // The work panicked: the panic goes on here.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}
