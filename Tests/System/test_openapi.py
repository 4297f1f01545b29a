"""Bad input at scale: schemathesis drives each service's own /openapi.yaml against the running system.

For every operation it sends valid and invalid requests (coverage, fuzzing and stateful phases) and checks each
answer: no 5xx, the status is documented, and the content type and body match the description.

Run against the stack that `scripts/up` starts:  python3 -m pytest -q Tests/System/test_openapi.py
Knobs (environment): OPENAPI_MAX_EXAMPLES (per operation, default 40), OPENAPI_SEED (replay a reported seed),
OPENAPI_HOST (default 127.0.0.1).
"""

import os
import random
import shutil
import subprocess
import sys
import uuid

import httpx
import pytest

HOST = os.environ.get("OPENAPI_HOST", "127.0.0.1")
SERVICES = {"accounts": 8081, "places": 8082, "matching": 8083, "chat": 8084, "notifications": 8085}
MAX_EXAMPLES = int(os.environ.get("OPENAPI_MAX_EXAMPLES", "40"))
SEED = os.environ.get("OPENAPI_SEED")
# Per service: the whole run must stay within the CI budget even on a slow, shared 2-core machine.
RUN_TIMEOUT_SECONDS = 300

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
]


def _schemathesis_command():
    executable = shutil.which("schemathesis")
    if executable:
        return [executable]
    return [sys.executable, "-m", "schemathesis.cli"]


@pytest.fixture(scope="module")
def openapi_access_token():
    """An access token of a fresh @helsinki.fi user, for the operations that need a bearer token."""
    email = f"openapi-{uuid.uuid4().hex[:12]}@helsinki.fi"
    response = httpx.post(
        f"http://{HOST}:{SERVICES['accounts']}/v1/auth/signup",
        json={"email": email, "password": f"Fuzz-{uuid.uuid4().hex}", "name": "OpenAPI Fuzzer"},
        timeout=30,
    )
    assert response.status_code == 201, f"sign-up failed: {response.status_code} {response.text}"
    token = response.json().get("accessToken")
    assert token, f"sign-up answered no access token (is email verification required?): {response.text}"
    return token


@pytest.fixture(scope="module")
def openapi_client_address():
    """A documentation-range address (RFC 5737) for this run's requests.

    The services trust the gateway's X-Forwarded-For; login failures that the fuzzer provokes are then throttled
    against this address instead of 127.0.0.1, which other tests log in from.
    """
    return f"198.51.100.{random.randint(1, 254)}"


@pytest.mark.parametrize("service", list(SERVICES))
def test_service_answers_as_its_openapi_description_says(
    service, openapi_access_token, openapi_client_address, tmp_path
):
    port = SERVICES[service]
    schema_url = f"http://{HOST}:{port}/openapi.yaml"
    try:
        httpx.get(schema_url, timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"{service} does not serve its description at {schema_url} ({error}); is the stack up (scripts/up)?")

    command = _schemathesis_command() + [
        "--no-color",
        "run",
        schema_url,
        "--checks",
        ",".join(CHECKS),
        "--max-examples",
        str(MAX_EXAMPLES),
        "--header",
        f"Authorization: Bearer {openapi_access_token}",
        "--header",
        f"X-Forwarded-For: {openapi_client_address}",
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--report",
        "junit",
        "--report-dir",
        str(tmp_path),
    ]
    if SEED:
        command += ["--seed", SEED]
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, cwd=tmp_path
        )
    except subprocess.TimeoutExpired as error:
        output = (error.stdout or b"").decode(errors="replace") if isinstance(error.stdout, bytes) else error.stdout
        pytest.fail(f"schemathesis against {service} took over {RUN_TIMEOUT_SECONDS}s\n{output or ''}")
    report = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"schemathesis found problems in {service} ({schema_url}):\n{report}"
