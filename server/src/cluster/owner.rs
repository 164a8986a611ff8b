//! The owner's side: answers the requests other nodes send to the games
//! this node owns, by asking the local actor the same [`Ask`].

use futures_util::StreamExt;

use super::wire::{command_subject, WireReply};
use super::Cluster;
use crate::live::actor::GameHandle;
use crate::live::error::LiveError;
use crate::live::messages::Ask;

/// Answers the requests other nodes send to game `handle` (owned here),
/// until its actor leaves memory. Subscribed before this returns, so a
/// proxy that learns of the lease finds the owner listening.
pub async fn serve_commands(cluster: &Cluster, handle: GameHandle) -> Result<(), LiveError> {
    let mut requests = cluster
        .inner
        .client
        .subscribe(command_subject(handle.id))
        .await
        .map_err(|err| LiveError::internal(format!("NATS subscribe: {err}")))?;
    let client = cluster.inner.client.clone();
    tokio::spawn(async move {
        loop {
            let message = tokio::select! {
                message = requests.next() => match message {
                    Some(message) => message,
                    None => break,
                },
                () = handle.closed() => break,
            };
            let ask: Ask = match serde_json::from_slice(&message.payload) {
                Ok(ask) => ask,
                Err(err) => {
                    tracing::warn!(game = %handle.id, %err, "unreadable cluster command dropped");
                    continue;
                }
            };
            if let Ask::Presence { .. } | Ask::NodePresence { .. } = ask {
                // In order, and without a reply.
                if handle.tell(ask).await.is_err() {
                    break;
                }
                continue;
            }
            let Some(reply_to) = message.reply else {
                continue;
            };
            let handle = handle.clone();
            let client = client.clone();
            tokio::spawn(async move {
                // An actor gone meanwhile: the game moved (or is moving).
                let answer: WireReply = handle.ask(ask).await.map_err(|_| LiveError::Moved);
                let payload = serde_json::to_vec(&answer).unwrap_or_default();
                if let Err(err) = client.publish(reply_to, payload.into()).await {
                    tracing::debug!(%err, "cluster reply not sent");
                }
            });
        }
        // Dropping the subscription unsubscribes: later requests find no
        // responder and their senders look for the new owner.
        let _ = requests.unsubscribe().await;
    });
    Ok(())
}
