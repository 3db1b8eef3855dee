//! The trust roots: the system's certificate store (as curl and wrk's OpenSSL use it; the
//! `SSL_CERT_FILE` and `SSL_CERT_DIR` variables point it elsewhere), read once per process.

use rustls::RootCertStore;
use std::sync::{Arc, OnceLock};

/// The system's roots that parse; an empty store when there are none (every verified
/// handshake then fails, and the error says why).
pub(crate) fn system_roots() -> Arc<RootCertStore> {
    static ROOTS: OnceLock<Arc<RootCertStore>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut store = RootCertStore::empty();
            store.add_parsable_certificates(found.certs);
            Arc::new(store)
        })
        .clone()
}
