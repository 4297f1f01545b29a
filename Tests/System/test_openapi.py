"""Bad input at scale: schemathesis drives each service's own /openapi.yaml against the running system.

For every operation it sends valid and invalid requests (coverage, fuzzing and stateful phases) and checks each
answer: no 5xx, the status is documented, the content type and the body match the description, invalid input is
refused with a 4xx, and methods the description does not name answer 405. Requests carry a fresh user's access
token; a delivery in progress (run, order, offer, match, conversation) gives the fuzzer ids that exist.

Run against the stack that `scripts/up` starts:  python3 -m pytest -q Tests/System/test_openapi.py
Knobs (environment): OPENAPI_MAX_EXAMPLES (per operation, default 40), OPENAPI_SEED (replay a reported seed),
OPENAPI_HOST (default 127.0.0.1).
"""

import json
import os
import random
import shutil
import subprocess
import sys
import time
import uuid

import httpx
import pytest

HOST = os.environ.get("OPENAPI_HOST", "127.0.0.1")
SERVICES = {"accounts": 8081, "places": 8082, "matching": 8083, "chat": 8084, "notifications": 8085, "media": 8086}
MAX_EXAMPLES = int(os.environ.get("OPENAPI_MAX_EXAMPLES", "40"))
SEED = os.environ.get("OPENAPI_SEED")
# Per service: the whole run must stay within the CI budget even on a slow, shared 2-core machine.
RUN_TIMEOUT_SECONDS = 300

# Ids of real resources (a run, an order, its offer, the match and its conversation), handed to the schemathesis
# process, whose hooks (below) mix them into the generated ids so that requests reach past 404.
KNOWN_IDS_VARIABLE = "OPENAPI_KNOWN_IDS"
# Which statuses count as refusing invalid input (413 among them).
CONFIG_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemathesis.toml")

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    # Invalid input must be refused with a 4xx, not ignored.
    "negative_data_rejection",
    "missing_required_header",
    "ignored_auth",
    "unsupported_method",
    "use_after_free",
    "ensure_resource_availability",
    # Left out: positive_data_acceptance (every schema-valid request answered 2xx). Rules that a JSON schema cannot
    # state refuse schema-valid input on purpose: an email outside the campus domains, one of the most common
    # passwords, a wrong verification code, lat without lon, a run at a restaurant that is not on the caller's campus.
]


def _schemathesis_command():
    executable = shutil.which("schemathesis")
    if executable:
        return [executable]
    return [sys.executable, "-m", "schemathesis.cli"]


def _url(service, path):
    return f"http://{HOST}:{SERVICES[service]}{path}"


def _sign_up(name, mode=None):
    """A fresh @helsinki.fi user: its access token and id."""
    email = f"openapi-{uuid.uuid4().hex[:12]}@helsinki.fi"
    password = f"Fuzz-{uuid.uuid4().hex}"
    response = httpx.post(
        _url("accounts", "/v1/auth/signup"), json={"email": email, "password": password, "name": name}, timeout=30
    )
    assert response.status_code == 201, f"sign-up failed: {response.status_code} {response.text}"
    if response.json().get("verificationRequired"):
        # NB: imported here: schemathesis also loads this file, as its hooks, where Tests/System is not on the path.
        from inbox import code_in, mail_to

        code = code_in(mail_to(email, "Confirm your email"))
        verified = httpx.post(_url("accounts", "/v1/auth/verify"), json={"email": email, "code": code}, timeout=30)
        assert verified.status_code == 200, verified.text
        response = httpx.post(_url("accounts", "/v1/auth/login"), json={"email": email, "password": password}, timeout=30)
        assert response.status_code == 200, f"login failed: {response.status_code} {response.text}"
    token = response.json()["accessToken"]
    headers = {"Authorization": f"Bearer {token}"}
    if mode:
        answer = httpx.patch(_url("accounts", "/v1/me"), json={"mode": mode}, headers=headers, timeout=30)
        assert answer.status_code == 200, answer.text
    return token, response.json()["user"]["id"]


def _until(attempt, what, timeout=60.0):
    """Repeats `attempt` until it returns something; the other services learn of new users through events."""
    deadline = time.monotonic() + timeout
    while True:
        result = attempt()
        if result is not None:
            return result
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.2)


@pytest.fixture(scope="module", autouse=True)
def openapi_services_running():
    """Refuses to fuzz a stack that is not up."""
    for service in SERVICES:
        try:
            httpx.get(_url(service, "/health/live"), timeout=10).raise_for_status()
        except httpx.HTTPError as error:
            pytest.fail(f"{service} is not running ({error}); start the stack with scripts/up")


@pytest.fixture(scope="module")
def openapi_access_token():
    """An access token of a fresh user, for accounts and places (whose fuzzing may change its profile)."""
    return _sign_up("OpenAPI Fuzzer")[0]


@pytest.fixture(scope="module")
def openapi_delivery():
    """A deliverer's access token and the ids of a delivery in progress: the deliverer's run at a restaurant, an
    orderer's order to a building, its offer accepted as a match, and a message in the match's conversation.
    With these the fuzzer's requests to matching, chat and notifications also reach resources that exist."""
    deliverer, _ = _sign_up("OpenAPI Deliverer", mode="delivering")
    orderer, _ = _sign_up("OpenAPI Orderer", mode="ordering")
    as_deliverer = httpx.Client(headers={"Authorization": f"Bearer {deliverer}"}, timeout=30)
    as_orderer = httpx.Client(headers={"Authorization": f"Bearer {orderer}"}, timeout=30)

    buildings = as_orderer.get(_url("places", "/v1/places"), params={"q": "porthania", "kind": "building"})
    assert buildings.status_code == 200 and buildings.json()["places"], buildings.text
    building = buildings.json()["places"][0]
    near = {"lat": building["latitude"], "lon": building["longitude"], "radius": 600, "limit": 50}
    restaurants = as_orderer.get(_url("places", "/v1/places/nearby"), params={**near, "kind": "restaurant"})
    assert restaurants.status_code == 200 and restaurants.json()["places"], restaurants.text
    restaurant = random.choice(restaurants.json()["places"])
    others = as_orderer.get(_url("places", "/v1/places/nearby"), params={**near, "kind": "building", "limit": 5})
    building_ids = [building["id"]] + [place["id"] for place in others.json()["places"]]

    def known(client, method, service, path, body=None, expected=(200, 201)):
        def attempt():
            answer = client.request(method, _url(service, path), json=body)
            if answer.status_code == 404:
                return None
            assert answer.status_code in expected, f"{method} {path}: {answer.status_code} {answer.text}"
            return answer.json()
        return _until(attempt, f"{method} {path}")

    run = known(as_deliverer, "POST", "matching", "/v1/runs", {
        "restaurantId": restaurant["id"], "destinationId": building["id"], "capacity": 4})
    order_body = {"restaurantId": restaurant["id"], "destinationId": building["id"], "items": "Soup", "runId": run["id"]}
    order = known(as_orderer, "POST", "matching", "/v1/orders", order_body)
    waiting = known(as_orderer, "POST", "matching", "/v1/orders", {**order_body, "items": "Salad"})

    def offers():
        feed = as_deliverer.get(_url("notifications", "/v1/notifications"), params={"limit": 500}).json()["entries"]
        found = {entry["data"].get("orderId"): entry["data"]["offerId"] for entry in feed if entry["type"] == "offer.made"}
        return found if order["id"] in found and waiting["id"] in found else None

    offer_ids = _until(offers, "the offers to the deliverer")
    match = as_deliverer.post(_url("matching", f"/v1/offers/{offer_ids[order['id']]}/accept"))
    assert match.status_code == 200, match.text
    match_id = match.json()["id"]
    message = known(as_deliverer, "POST", "chat", f"/v1/conversations/{match_id}/messages", {
        "id": str(uuid.uuid4()), "text": "On my way"})

    place_ids = [restaurant["id"], *building_ids]
    order_ids = [order["id"], waiting["id"]]
    return deliverer, {
        "paths": {
            "/v1/places/{id}": {"id": place_ids},
            "/v1/restaurants/{id}/runs": {"id": [restaurant["id"]]},
            "/v1/runs/{id}": {"id": [run["id"]]},
            "/v1/orders/{id}": {"id": order_ids},
            "/v1/orders/{id}/cancel": {"id": order_ids},
            "/v1/offers/{id}/accept": {"id": list(offer_ids.values())},
            "/v1/offers/{id}/decline": {"id": list(offer_ids.values())},
            "/v1/matches/{id}": {"id": [match_id]},
            "/v1/matches/{id}/cancel": {"id": [match_id]},
            "/v1/matches/{id}/complete": {"id": [match_id]},
            "/v1/conversations/{id}/messages": {"id": [match_id]},
            "/v1/conversations/{id}/read": {"id": [match_id]},
        },
        "body": {
            "restaurantId": [restaurant["id"]],
            "destinationId": building_ids,
            "runId": [run["id"]],
            "messageId": [message["id"]],
        },
    }


@pytest.fixture(scope="module")
def openapi_client_address():
    """A documentation-range address (RFC 5737) for this run's requests.

    The services trust the gateway's X-Forwarded-For; login failures that the fuzzer provokes are then throttled
    against this address instead of 127.0.0.1, which other tests log in from.
    """
    return f"198.51.100.{random.randint(1, 254)}"


@pytest.mark.parametrize("service", list(SERVICES))
def test_service_answers_as_its_openapi_description_says(
    service, openapi_access_token, openapi_delivery, openapi_client_address, tmp_path
):
    deliverer_token, known_ids = openapi_delivery
    # Accounts and places with a user of their own: fuzzing PATCH /v1/me must not change the deliverer.
    token = openapi_access_token if service in ("accounts", "places") else deliverer_token
    port = SERVICES[service]
    schema_url = f"http://{HOST}:{port}/openapi.yaml"
    try:
        httpx.get(schema_url, timeout=10).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"{service} does not serve its description at {schema_url} ({error}); is the stack up (scripts/up)?")

    command = _schemathesis_command() + [
        "--config-file",
        CONFIG_FILE,
        "--no-color",
        "run",
        schema_url,
        "--checks",
        ",".join(CHECKS),
        "--max-examples",
        str(MAX_EXAMPLES),
        "--header",
        f"Authorization: Bearer {token}",
        "--header",
        f"X-Forwarded-For: {openapi_client_address}",
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--report",
        "junit,har",
        "--report-dir",
        str(tmp_path),
    ]
    if SEED:
        command += ["--seed", SEED]
    environment = {**os.environ, "SCHEMATHESIS_HOOKS": os.path.abspath(__file__), KNOWN_IDS_VARIABLE: json.dumps(known_ids)}
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS, cwd=tmp_path, env=environment
        )
    except subprocess.TimeoutExpired as error:
        output = (error.stdout or b"").decode(errors="replace") if isinstance(error.stdout, bytes) else error.stdout
        pytest.fail(f"schemathesis against {service} took over {RUN_TIMEOUT_SECONDS}s\n{output or ''}")
    report = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"schemathesis found problems in {service} ({schema_url}):\n{report}"


@pytest.mark.parametrize(
    "service, method, path, body, field",
    [
        # Found by schemathesis: libpq cut the value short at U+0000 (a sign-up stored the email as "x"; a login with
        # one answered 500).
        ("accounts", "POST", "/v1/auth/signup", {"email": "x\u0000y@helsinki.fi", "password": "Fuzz-a1b2c3d4", "name": "X"}, "email"),
        ("accounts", "POST", "/v1/auth/login", {"email": "x\u0000y@helsinki.fi", "password": "Fuzz-a1b2c3d4"}, "email"),
        ("notifications", "POST", "/v1/devices", {"token": "a\u0000b", "platform": "apns"}, "token"),
        ("places", "GET", "/v1/places?q=a%00b", None, "q"),
        # Found by schemathesis: a null was read as "left out" and the request succeeded.
        ("accounts", "PATCH", "/v1/me", {"name": "Fuzz", "mode": None}, "mode"),
        ("notifications", "GET", "/v1/stream?after=-1", None, "after"),
    ],
)
def test_bad_input_found_by_fuzzing_is_a_problem_naming_the_field(service, method, path, body, field, openapi_access_token):
    answer = httpx.request(
        method, _url(service, path), json=body, headers={"Authorization": f"Bearer {openapi_access_token}"}, timeout=30
    )

    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["field"] == field


def test_a_method_a_path_does_not_answer_is_405_with_allow(openapi_access_token):
    answer = httpx.put(_url("accounts", "/v1/me"), headers={"Authorization": f"Bearer {openapi_access_token}"}, timeout=30)

    assert answer.status_code == 405, answer.text
    assert answer.headers["allow"] == "DELETE, GET, PATCH"
    assert answer.headers["content-type"] == "application/problem+json"


# Hooks of the schemathesis process, which loads this file through SCHEMATHESIS_HOOKS (as `_schemathesis_hooks`).
if __name__ == "_schemathesis_hooks":
    import schemathesis
    from hypothesis import strategies as st

    _KNOWN_IDS = json.loads(os.environ.get(KNOWN_IDS_VARIABLE) or '{"paths": {}, "body": {}}')

    def _is_uuid(value):
        try:
            uuid.UUID(value)
            return isinstance(value, str)
        except (TypeError, ValueError, AttributeError):
            return False

    def _with_known_ids(values, known):
        """`values`, or with each valid UUID among `known`'s fields replaced by a known id. Invalid ids stay."""
        if not isinstance(values, dict):
            return st.just(values)
        fields = sorted(name for name in known if _is_uuid(values.get(name)))
        if not fields:
            return st.just(values)
        choices = st.fixed_dictionaries({name: st.sampled_from([values[name], *known[name]]) for name in fields})
        return choices.map(lambda chosen: {**values, **chosen})

    @schemathesis.hook
    def flatmap_path_parameters(context, path_parameters):
        return _with_known_ids(path_parameters, _KNOWN_IDS["paths"].get(context.operation.path, {}))

    @schemathesis.hook
    def flatmap_body(context, body):
        return _with_known_ids(body, _KNOWN_IDS["body"])

    @schemathesis.hook
    def filter_failure(context, failure, case, response):
        # Where not_a_server_error does not apply: /health/ready answers a documented 503 by design while PostgreSQL
        # or RabbitMQ is unreachable (fault tests restart them). Its status and body are still checked.
        return not (failure.code == "ST101" and case.operation.path == "/health/ready" and response.status_code == 503)
