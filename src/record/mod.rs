//! Recording: one trial against a live provider or the simulator into a redacted, scanned
//! cassette (retries, refusal on truncation), a whole selection of trials at once, and a model
//! server's own exchanges on tape (recorded, replayed).

mod suite;
mod tape;
mod trial;

pub use suite::{
    Endpoints, Refresh, SIMULATOR_KEY, Summary, dry_run_listing, endpoints, in_ci, record_all_with,
    select,
};
pub use tape::{Finished, Recorded, Tape, cassette_place};
pub use trial::{
    RecordOptions, RetryPolicy, backoff, cassette_from_run, record_trial, server_hint,
    write_cassette,
};
