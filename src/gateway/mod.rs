//! Gateway mode: the case suite run black-box through an LLM gateway, as the engine's first way
//! through. tooltape plays both ends: the engine's recording upstream and the client. `http` is
//! how a trial reaches the gateway (and a gateway profile as the engine's system under test);
//! `profile` reads `gateways/NAME.toml`; `process` owns the gateway's lifecycle; `compare` puts
//! several gateways' runs side by side (timing paired per request, memory); `skeleton` is the
//! commented profile `tooltape init gateway` writes.

mod compare;
mod direct;
mod http;
mod process;
mod profile;
mod skeleton;

pub use compare::{
    BEGIN as COMPARE_BEGIN, CompareMeta, CompareRow, END as COMPARE_END, GatewayRun, common_routes,
    markdown as compare_markdown, percentile, replace_region, rewrite_region, row as compare_row,
    terminal as compare_terminal, version,
};
pub(crate) use direct::{Direct, Settings};
pub use http::Http;
pub(crate) use process::{Launch, launch};
pub use process::{Running, start};
pub(crate) use profile::check_start;
pub use profile::{GatewayProfile, LoadedGateway, Start, load_gateway};
pub use skeleton::{DEFAULT_UPSTREAM, base_urls, skeleton};
