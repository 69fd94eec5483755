//! Server mode: the case suite run against a server that runs the model (llama.cpp's
//! `llama-server`, vLLM), the engine's third way through. Such a server has no upstream: it is
//! the model, so what it answers is judged against the contract the caller set (`tool_choice`
//! honoured, calls of tools in force with arguments their schemas accept, finish, ids, the
//! stream assembling to the buffered answer, the next round accepted), never against a scripted
//! answer. `profile` reads `servers/NAME.toml` (install, the model file a registry package
//! ships, start, the determinism settings, routes); `way` the server as a system under test
//! (its way is `gateway::Http` straight to it);
//! `scores` the table a vendor reads; `skeleton` the profile `tooltape init server` writes; `sweep`
//! every tool of the corpus forced alone (`--schemas`).

mod profile;
mod scores;
mod skeleton;
mod sweep;
mod way;

pub use profile::{LoadedServer, ServerProfile, ServerRoute, load_server};
pub use scores::{Scores, scores};
pub use skeleton::skeleton;
pub use sweep::{SWEEP_PREFIX, Sweep};
pub use way::scripted;
