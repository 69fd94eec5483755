//! Running a trial against any HTTP endpoint: exchanges, transport, hosted-search fallback.
//! Encoding and decoding are the provider modules'; this layer sends, streams bytes into the
//! decoder, and feeds tool results back for the next round.

mod exchange;
mod hosted;
mod transport;
mod trial;

pub use exchange::{DecodedResponse, WatchedStep};
pub use exchange::{ExchangeRun, TrialRun};
pub(crate) use exchange::{OwnTime, Watch, exchange, watched};
pub use hosted::{SupportCache, Telemetry};
pub(crate) use hosted::{fallback_step, falls_back, set_variant, telemetry, trial_telemetry};
pub use transport::Timing;
pub(crate) use transport::client_per_request;
pub use transport::{Endpoint, client, send};
pub use trial::run_trial;
pub(crate) use trial::{continues_by_id, follow_up, refers_to_reasoning};
