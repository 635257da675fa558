"""HTTPS: the certificate is verified (never disabled) and obtainable like Microsoft's emulator's."""

import ssl
import urllib.request

import pytest
from azure.core.exceptions import ServiceRequestError
from azure.cosmos import CosmosClient, SSLConfiguration

from emulator import KEY


pytestmark = pytest.mark.https_only


@pytest.fixture
def https(emulator):
    assert emulator.tls
    return emulator


def test_explorer_pem_is_the_certificate_written(https):
    # Fetched over a connection that trusts the --cert-out file: verification stays on.
    with urllib.request.urlopen(https.endpoint + "_explorer/emulator.pem", context=https.ssl_context(),
                                timeout=10) as resp:
        served = resp.read().decode()
    assert "-----BEGIN CERTIFICATE-----" in served
    assert served.strip() == https.cert_path.read_text().strip()


def test_certificate_covers_localhost(https):
    port = https.endpoint.rstrip("/").rsplit(":", 1)[1]
    client = CosmosClient(f"https://localhost:{port}/", KEY, **https.client_kwargs())
    assert isinstance(list(client.list_databases()), list)


def test_untrusted_certificate_is_refused(https):
    """Trusting only the system store, the client refuses the server: the same code path that the
    other tests use with the emulator's certificate really verifies."""
    system_store = SSLConfiguration()
    system_store.SSLCaCerts = True
    with pytest.raises((ServiceRequestError, ssl.SSLError)) as e:
        CosmosClient(https.endpoint, KEY, ssl_config=system_store, retry_total=0)
    assert "certificate verify failed" in str(e.value).lower()
