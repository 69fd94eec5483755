//! What tooltape does to a system under test that is not the trial engine: the shipped gateway
//! and client profiles with their drivers (`shipped`, embedded at build time and written out into
//! the install cache), installing a profile's pinned release or another one (`install`), the
//! process groups it started (`groups`, stopped together when a signal ends tooltape), a process
//! group's peak memory and the machine note (`memory`), and one suite across releases with the
//! bisection over a registry's releases (`releases`).

pub(crate) mod groups;
pub(crate) mod install;
pub(crate) mod memory;
mod releases;
pub(crate) mod shipped;

pub use groups::stop_started;
pub use install::{COMPLETE, Install, Pinned, at_release, fill, install_into, install_pinned};
pub use memory::{PeakSampler, machine_note};
pub use releases::{
    Bisection, Package, Presence, ReleaseTable, between, bisect, pinned_package, presence,
    registry_releases, release_table,
};
pub use shipped::{
    SHIPPED, builtin, builtin_names, install_cache, shipped_dir, write_out as write_shipped,
};

pub(crate) use install::tail;
