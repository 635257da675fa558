"""TLS: the emulator serves HTTPS with a certificate made at start, written
to emulator.certificate; clients verify against exactly that file."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request

import pytest
from azure.cosmos import CosmosClient, PartitionKey, SSLConfiguration

import cosmos_emulator
from conftest import unique


@pytest.fixture(scope="module")
def tls_emulator():
    with cosmos_emulator.start(tls=True) as emulator:
        yield emulator


def test_the_certificate_is_a_pem_file_and_the_endpoint_https(tls_emulator):
    assert tls_emulator.endpoint.startswith("https://localhost:")
    with open(tls_emulator.certificate) as f:
        assert f.read().startswith("-----BEGIN CERTIFICATE-----")


def test_the_client_verifies_against_the_certificate(tls_emulator):
    client = tls_emulator.client()
    policy = client.client_connection.connection_policy
    assert policy.SSLConfiguration.SSLCaCerts == tls_emulator.certificate
    db = client.create_database(unique("tls"))
    container = db.create_container("c", PartitionKey("/pk"))
    container.create_item({"id": "1", "pk": "a"})
    assert container.read_item("1", "a")["id"] == "1"
    assert tls_emulator.advance(1) > 0  # control requests over TLS too


def test_verification_is_on_another_certificate_is_refused(tls_emulator):
    # Trusting exactly the emulator's certificate works; trusting the
    # system's CAs, or another emulator's certificate, does not.
    url = tls_emulator.endpoint + "_explorer/emulator.pem"
    with urllib.request.urlopen(url, context=ssl.create_default_context(cafile=tls_emulator.certificate), timeout=30):
        pass
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(url, context=ssl.create_default_context(), timeout=30)
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)

    with cosmos_emulator.start(tls=True) as other:
        ssl_config = SSLConfiguration()
        ssl_config.SSLCaCerts = other.certificate
        with pytest.raises(Exception) as sdk_refused:
            CosmosClient(
                tls_emulator.endpoint,
                tls_emulator.key,
                connection_verify=other.certificate,
                ssl_config=ssl_config,
                retry_total=0,
                connection_retry_policy=None,
            ).create_database(unique("never"))
        assert "CERTIFICATE_VERIFY_FAILED" in repr(sdk_refused.value) or "certificate verify failed" in str(
            sdk_refused.value
        )
