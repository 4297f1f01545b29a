"""The gateway's own answers: what nginx refuses before any service sees the request is a problem+json like the
services' ones, naming no server version, and access tokens never reach its access log."""

import http.client
import json
import uuid
from urllib.parse import urlsplit

import pytest

from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from conftest import GATEWAY, ROOT, Student, eventually

ADDRESS = urlsplit(GATEWAY)


def raw(method, path, headers=None, body=None):
    """One request sent as written (no client-side checks on the path or headers); the answer and its body."""
    connection = http.client.HTTPConnection(ADDRESS.hostname, ADDRESS.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders()
        if body is not None:
            try:
                connection.send(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # nginx answers before reading a body it refuses
        answer = connection.getresponse()
        return answer, answer.read()
    finally:
        connection.close()


def assert_problem(answer, body, status):
    assert answer.status == status, body
    assert answer.getheader("Content-Type") == "application/problem+json"
    assert answer.getheader("X-Content-Type-Options") == "nosniff"
    server = answer.getheader("Server") or ""
    assert "/" not in server, f"the gateway names its version: {server}"
    problem = json.loads(body)
    assert problem["status"] == status
    assert problem["title"] and problem["detail"]
    assert b"nginx" not in body
    return problem


@pytest.mark.parametrize("name, request_, status", [
    ("a body over the limit", dict(method="POST", path="/v1/auth/signup",
                                   headers={"Content-Type": "application/json"}, body=b"x" * (2 * 1024 * 1024)), 413),
    ("a long URI", dict(method="GET", path="/v1/places?q=" + "a" * 20000), 414),
    ("an image over 8 MiB", dict(method="POST", path="/v1/media",
                                 headers={"Content-Type": "image/jpeg"}, body=b"x" * (9 * 1024 * 1024)), 413),
    ("a huge header", dict(method="GET", path="/v1/campuses", headers={"X-Padding": "p" * 20000}), 400),
    ("a NUL in the path", dict(method="GET", path="/v1/places/%00"), 400),
    ("no route", dict(method="GET", path="/nowhere"), 404),
])
def test_the_gateways_own_errors_are_problems(system, name, request_, status):
    answer, body = raw(**request_)
    assert_problem(answer, body, status)


def test_the_services_answers_carry_one_nosniff(system):
    answer, body = raw("GET", "/v1/campuses")
    assert answer.status == 200, body
    assert answer.getheader("X-Content-Type-Options") == "nosniff"
    assert len([value for name, value in answer.getheaders() if name.lower() == "x-content-type-options"]) == 1


def test_an_access_token_in_the_query_belongs_to_the_stream_alone(system):
    student = Student("Quentin")
    answer, body = raw("GET", f"/v1/me?access_token={student.token}")
    problem = assert_problem(answer, body, 400)
    assert problem["field"] == "access_token"

    marker = uuid.uuid4().hex
    access_log = ROOT / ".local" / "logs" / "gateway-access.log"
    logged_before = access_log.stat().st_size
    url = GATEWAY.replace("http", "ws", 1) + f"/v1/stream?after=0&access_token={student.token}&marker={marker}"
    with connect(url, open_timeout=10):
        pass
    def logged_since():
        with access_log.open() as log:
            log.seek(logged_before)
            return log.read()
    assert eventually(lambda: "/v1/stream" in logged_since(), timeout=10)
    text = access_log.read_text()
    assert student.token not in text
    assert marker not in text, "the access log keeps queries"


@pytest.mark.parametrize("case", ["no token", "a forged token", "a bad after"])
def test_a_refused_upgrade_says_why_as_a_problem(system, case):
    student = Student("Ursula")
    token = {"no token": None, "a forged token": student.token[:-4] + "AAAA", "a bad after": student.token}[case]
    after = "x" if case == "a bad after" else "0"
    url = GATEWAY.replace("http", "ws", 1) + f"/v1/stream?after={after}"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"Authorization": f"Bearer {token}"} if token else {}, open_timeout=10)
    response = refused.value.response
    expected = 400 if case == "a bad after" else 401
    assert response.status_code == expected
    assert response.headers["Content-Type"] == "application/problem+json"
    problem = json.loads(response.body)
    assert problem["status"] == expected
    if expected == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    else:
        assert problem["field"] == "after"


def test_an_image_larger_than_other_bodies_reaches_media_and_is_served_with_its_etag(system):
    """The gateway takes up to media's own 8 MiB on /v1/media alone; the image comes back cacheable, then as 304."""
    mia = Student("Mia")
    photo = (ROOT / "Tests/MediaTests/Fixtures/phone-photo.jpg").read_bytes()
    # Bytes after the JPEG's end are ignored by decoders: a valid image of 3 MB, three times the gateway's usual limit.
    padded = photo + bytes(3 * 1024 * 1024 - len(photo))
    answer = mia.http.post("/v1/media", content=padded, headers={"Content-Type": "image/jpeg"})
    assert answer.status_code == 201, answer.text
    image = mia.get(f"/v1/media/{answer.json()['id']}", size="large")
    assert image.status_code == 200 and image.headers["Content-Type"] == "image/jpeg"
    assert image.headers["X-Content-Type-Options"] == "nosniff" and b"Exif" not in image.content
    again = mia.http.get(f"/v1/media/{answer.json()['id']}", params={"size": "large"},
                         headers={"If-None-Match": image.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""
