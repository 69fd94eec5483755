//! Recording: one trial against a live provider or the simulator into a redacted, scanned
//! cassette (retries, refusal on truncation), and a whole selection of trials at once.

mod suite;
mod trial;

pub use suite::{
    Endpoints, Refresh, SIMULATOR_KEY, Summary, dry_run_listing, endpoints, in_ci, record_all_with,
    select,
};
pub use trial::{
    RecordOptions, RetryPolicy, backoff, cassette_from_run, record_trial, server_hint,
    write_cassette,
};
