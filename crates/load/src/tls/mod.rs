//! HTTPS: one rustls client configuration per run, shared by every connection of every worker
//! so a reconnect can resume an earlier session; the server name from the URL; and the wording
//! of handshake failures, so a refused certificate or protocol reads as what it is.

mod blocking;
mod handshake;
mod roots;
mod tally;
mod verify;

pub(crate) use blocking::BlockingStream;
pub(crate) use handshake::check_handshake;
pub use tally::TlsReport;
pub(crate) use tally::{merge_reports, TlsTally};

use crate::url::Target;
use crate::LoadError;
use rustls::client::Resumption;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use std::sync::Arc;

/// The application protocol offered by ALPN for HTTP/1.1 (HTTP/2 offers only h2: a run
/// measures one protocol, never whichever the server prefers).
const ALPN_HTTP1: &[u8] = b"http/1.1";

/// What every TLS connection of a run shares: the configuration (and in it the session cache)
/// and the server's name.
pub(crate) struct TlsClient {
    pub config: Arc<ClientConfig>,
    pub name: ServerName<'static>,
    /// `insecure`: any certificate is accepted.
    pub insecure: bool,
    /// h2 is offered by ALPN (and must be chosen).
    pub http2: bool,
}

impl TlsClient {
    /// The client for `target`; `sessions` sizes the resumption cache (0: no resumption);
    /// `http2` offers h2 by ALPN instead of http/1.1.
    pub fn new(
        url: &str,
        target: &Target,
        insecure: bool,
        sessions: usize,
        http2: bool,
    ) -> Result<TlsClient, LoadError> {
        let name =
            ServerName::try_from(target.host.clone()).map_err(|_| LoadError::InvalidUrl {
                url: url.to_string(),
                reason: format!("`{}` is not a valid TLS server name", target.host),
            })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| LoadError::Tls {
                url: url.to_string(),
                reason: format!("the TLS configuration is invalid: {e}"),
            })?;
        let mut config = if insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verify::AcceptAnyCertificate(
                    provider.signature_verification_algorithms,
                )))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(roots::system_roots())
                .with_no_client_auth()
        };
        let alpn = if http2 {
            crate::h2::ALPN_H2
        } else {
            ALPN_HTTP1
        };
        config.alpn_protocols = vec![alpn.to_vec()];
        config.resumption = if sessions == 0 {
            Resumption::disabled()
        } else {
            Resumption::in_memory_sessions(sessions)
        };
        Ok(TlsClient {
            config: Arc::new(config),
            name,
            insecure,
            http2,
        })
    }

    /// A new client session for one connection.
    pub fn connection(&self) -> Result<ClientConnection, rustls::Error> {
        ClientConnection::new(self.config.clone(), self.name.clone())
    }
}

/// A handshake failure in words: what rustls says, and what usually causes it.
pub(crate) fn describe(e: &rustls::Error, insecure: bool) -> String {
    use rustls::{AlertDescription, Error};
    let hint = match e {
        Error::InvalidCertificate(_) if roots::system_roots().is_empty() => {
            " (no trust roots were found in the system's certificate store; `insecure` accepts \
             any certificate)"
                .to_string()
        }
        Error::InvalidCertificate(c) if !insecure => certificate_hint(c).to_string(),
        Error::AlertReceived(AlertDescription::NoApplicationProtocol) => {
            " (the server accepts none of the application protocols offered by ALPN: http/1.1 \
             for HTTP/1.1, h2 for HTTP/2)"
                .to_string()
        }
        Error::NoApplicationProtocol => {
            " (the server chose an application protocol that was not offered by ALPN: \
             http/1.1 for HTTP/1.1, h2 for HTTP/2)"
                .to_string()
        }
        Error::InvalidMessage(_) => {
            " (is the server speaking TLS on this port? an http:// server is not)".to_string()
        }
        _ => String::new(),
    };
    format!("{e}{hint}")
}

/// Why a certificate is usually refused, by what was wrong with it.
fn certificate_hint(c: &rustls::CertificateError) -> &'static str {
    use rustls::CertificateError as C;
    match c {
        C::UnknownIssuer | C::BadSignature | C::UnknownRevocationStatus => {
            " (a self-signed or private-CA certificate is refused unless its CA is in the \
             system's store or SSL_CERT_FILE; `insecure` accepts any certificate)"
        }
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            " (the certificate does not name the URL's host; `insecure` accepts any certificate)"
        }
        C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. } => {
            " (the certificate is outside its validity period; `insecure` accepts any \
             certificate)"
        }
        _ => " (`insecure` accepts any certificate)",
    }
}

/// The rustls error inside an I/O error, if that is what it carries.
pub(crate) fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
}
