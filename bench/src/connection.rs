//! One keep-alive HTTP/1.1 connection to a target: plain TCP, or TLS that
//! trusts the authority the emulator wrote (`--cert-out`), or that accepts
//! any certificate (only for the peer emulator's self-signed one); its
//! responses read whole, and `expect_success` to want a 2xx of one.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::net::TcpStream;

use crate::cosmos::Body;

/// Where a target listens: `http://HOST:PORT` or `https://HOST:PORT`; over
/// TLS, the authority it is trusted by (`None`: any certificate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub roots: Option<TrustedRoots>,
}

/// A TLS client configuration trusting the certificates of one PEM file
/// alone (the emulator's `--cert-out`).
#[derive(Clone)]
pub struct TrustedRoots {
    pem: PathBuf,
    config: Arc<rustls::ClientConfig>,
}

impl TrustedRoots {
    pub fn from_pem(pem: &Path) -> Result<TrustedRoots, String> {
        let mut roots = RootCertStore::empty();
        for cert in
            CertificateDer::pem_file_iter(pem).map_err(|e| format!("{}: {e}", pem.display()))?
        {
            let cert = cert.map_err(|e| format!("{}: {e}", pem.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("{}: {e}", pem.display()))?;
        }
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TrustedRoots {
            pem: pem.to_path_buf(),
            config: Arc::new(config),
        })
    }
}

impl PartialEq for TrustedRoots {
    fn eq(&self, other: &Self) -> bool {
        self.pem == other.pem
    }
}

impl Eq for TrustedRoots {}

impl std::fmt::Debug for TrustedRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TrustedRoots({})", self.pem.display())
    }
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else {
            return Err(format!("{url:?} is not an http:// or https:// URL"));
        };
        let authority = rest.trim_end_matches('/');
        let (host, port) = authority
            .rsplit_once(':')
            .ok_or_else(|| format!("{url:?} has no port"))?;
        let port = port
            .parse()
            .map_err(|_| format!("{url:?} has no valid port"))?;
        Ok(Endpoint {
            tls,
            host: host.to_string(),
            port,
            roots: None,
        })
    }

    /// The same endpoint, trusting the certificates in `pem` alone.
    pub fn trusting(mut self, pem: &Path) -> Result<Endpoint, String> {
        self.roots = Some(TrustedRoots::from_pem(pem)?);
        Ok(self)
    }

    /// The TLS client configuration: the trusted roots, or any certificate.
    pub fn tls_config(&self) -> Arc<rustls::ClientConfig> {
        match &self.roots {
            Some(roots) => roots.config.clone(),
            None => insecure_tls(),
        }
    }

    /// Opens TCP (no Nagle) and, for an `https` endpoint, TLS over it.
    pub async fn open_tls(&self) -> io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let tcp = TcpStream::connect((self.host.as_str(), self.port)).await?;
        tcp.set_nodelay(true)?;
        let name = ServerName::try_from(self.host.clone()).map_err(io::Error::other)?;
        tokio_rustls::TlsConnector::from(self.tls_config())
            .connect(name, tcp)
            .await
    }

    /// `HOST:PORT`, for the `host` header.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.authority())
    }
}

/// A response, its body read whole.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

/// A response that is a 2xx, or a message naming what came instead.
pub fn expect_success(result: Result<Response, hyper::Error>) -> Result<Response, String> {
    let response = result.map_err(|e| format!("request failed: {e}"))?;
    if response.status.is_success() {
        Ok(response)
    } else {
        Err(format!(
            "answered {}: {:.300}",
            response.status,
            String::from_utf8_lossy(&response.body)
        ))
    }
}

/// One connection; requests go one at a time.
pub struct Connection {
    sender: SendRequest<Body>,
}

impl Connection {
    pub async fn open(endpoint: &Endpoint) -> io::Result<Connection> {
        let sender = if endpoint.tls {
            handshake(TokioIo::new(endpoint.open_tls().await?)).await?
        } else {
            let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port)).await?;
            tcp.set_nodelay(true)?;
            handshake(TokioIo::new(tcp)).await?
        };
        Ok(Connection { sender })
    }

    /// Sends a request and reads the whole response.
    pub async fn send(&mut self, request: Request<Body>) -> Result<Response, hyper::Error> {
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let (parts, body) = response.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
}

async fn handshake<T>(io: TokioIo<T>) -> io::Result<SendRequest<Body>>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, connection) = http1::handshake(io).await.map_err(io::Error::other)?;
    tokio::spawn(async move {
        // Ends when the sender is dropped or the server closes; either is fine.
        let _ = connection.await;
    });
    Ok(sender)
}

/// A TLS client configuration that trusts any certificate.
fn insecure_tls() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_safe_default_protocol_versions()
                .expect("the provider supports the default protocol versions")
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth();
            Arc::new(config)
        })
        .clone()
}

/// Accepts any server certificate; handshake signatures are still checked.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("http://127.0.0.1:8081", false, "127.0.0.1", 8081)]
    #[case("https://localhost:443/", true, "localhost", 443)]
    fn endpoints(#[case] url: &str, #[case] tls: bool, #[case] host: &str, #[case] port: u16) {
        let endpoint = Endpoint::parse(url).unwrap();
        assert_eq!(
            endpoint,
            Endpoint {
                tls,
                host: host.into(),
                port,
                roots: None,
            }
        );
        assert_eq!(endpoint.url(), url.trim_end_matches('/'));
    }

    #[rstest]
    #[case("ftp://x:1")]
    #[case("http://x")]
    #[case("http://x:port")]
    fn bad_endpoints(#[case] url: &str) {
        assert!(Endpoint::parse(url).is_err());
    }
}
