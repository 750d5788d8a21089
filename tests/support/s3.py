"""A real S3-compatible server (moto's standalone server) on 127.0.0.1 for tests.

The :func:`s3_server` fixture (session scope) starts ``moto.server.ThreadedMotoServer``
on a free port; each test gets a fresh state through :func:`s3_endpoint`, which resets
the server and yields ``http://127.0.0.1:PORT``. :func:`s3_client` is a boto3 client
pointed at it, with dummy credentials (no traffic leaves the machine).
"""

import sys
import urllib.request

import boto3
import pytest
from moto.server import ThreadedMotoServer

from tests.support.slowguard import SERVER_EVENT

ACCESS_KEY = "testing-key"
SECRET_KEY = "testing/secret+key"
REGION = "us-east-1"


@pytest.fixture(scope="session")
def s3_server():
    """The running moto server for the whole session; yields its base URL."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    sys.audit(SERVER_EVENT, "s3")  # its tests are slow (tests/support/slowguard.py)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_endpoint(s3_server, monkeypatch):
    """The moto server URL, its state reset (no buckets) for this test.

    Also removes AWS settings from the environment so that only what the test passes
    reaches boto3.
    """
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    reset = urllib.request.Request(f"{s3_server}/moto-api/reset", method="POST")
    with urllib.request.urlopen(reset, timeout=10) as response:
        assert response.status == 200
    return s3_server


@pytest.fixture
def s3_client(s3_endpoint):
    """A boto3 S3 client talking to the moto server."""
    return boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    )
