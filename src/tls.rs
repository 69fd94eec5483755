//! Installs rustls' ring crypto provider once (reqwest is built without a default provider to
//! keep the build cheap).

use std::sync::Once;

pub(crate) fn install_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err means another provider is already installed: fine either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
