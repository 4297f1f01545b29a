"""A stand-in Web Push service on loopback (RFC 8030) for the system tests. Each push it receives has its VAPID
authorization checked (RFC 8292, the signature with `cryptography`) and its aes128gcm payload decrypted (RFC 8291,
with PyPI's `http_ece`): implementations independent of the backend's. It answers 201, or as a test tells it to for
an endpoint (410 Gone; 429 a number of times first), and keeps every push it heard, in order."""

import base64
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

# RFC 8292: a JWT whose exp is more than 24 hours after the request is refused; the slack allows for an exp rounded up.
LONGEST_EXPIRY = 24 * 3600
SLACK = 2
# RFC 8030 §7.2: a push service need not take a payload over 4096 bytes.
LARGEST_BODY = 4096
AUTHORIZATION = re.compile(r"vapid\s+(?P<params>.*)", re.IGNORECASE | re.DOTALL)


def base64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_base64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def uncompressed(public_key):
    return public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


@dataclass
class Keys:
    """What a browser keeps of one subscription: its P-256 private key and its 16-byte auth secret."""

    private_key: ec.EllipticCurvePrivateKey
    auth_secret: bytes


def new_subscription(endpoint):
    """A subscription to `endpoint` as a browser makes one: the JSON the backend takes, and the keys that decrypt."""
    keys = Keys(ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
    body = {"endpoint": endpoint, "keys": {
        "p256dh": base64url(uncompressed(keys.private_key.public_key())), "auth": base64url(keys.auth_secret)}}
    return body, keys


@dataclass
class Push:
    """One request the service received: what it answered, the JWT's claims, the decrypted payload (a JSON object), and
    every way the request broke the RFCs (none when it is a valid push)."""

    path: str
    status: int
    headers: dict
    payload: dict | None
    claims: dict | None
    errors: list = field(default_factory=list)

    @property
    def is_valid(self):
        return not self.errors


def vapid_claims(authorization, audience, published_key, now):
    """The claims of a `vapid t=<JWT>, k=<key>` authorization (RFC 8292), and the errors found checking it against the
    endpoint's origin and the public key the backend publishes (base64url)."""
    matched = AUTHORIZATION.fullmatch((authorization or "").strip())
    if not matched:
        return None, [f"Authorization is not vapid t=…, k=…: {authorization!r}"]
    params = {}
    for part in matched["params"].split(","):
        name, _, value = part.strip().partition("=")
        params[name.strip().lower()] = value.strip()
    if "t" not in params or "k" not in params:
        return None, [f"Authorization lacks t or k: {authorization!r}"]
    errors = []
    try:
        key_bytes = from_base64url(params["k"])
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key_bytes)
    except ValueError as error:
        return None, [f"k is not a P-256 point: {error}"]
    if len(key_bytes) != 65:
        errors.append("k is not an uncompressed point")
    if published_key is None or key_bytes != from_base64url(published_key):
        errors.append(f"k {params['k']} is not the published key {published_key}")
    try:
        encoded_header, encoded_claims, encoded_signature = params["t"].split(".")
        header = json.loads(from_base64url(encoded_header))
        claims = json.loads(from_base64url(encoded_claims))
        signature = from_base64url(encoded_signature)
    except ValueError as error:
        return None, errors + [f"t is not a JWT: {error}"]
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None, errors + ["the JWT's header or claims are not JSON objects"]
    if header.get("alg") != "ES256":
        errors.append(f"JWT alg is {header.get('alg')!r}, not ES256")
    if len(signature) != 64:
        errors.append(f"ES256 signature is {len(signature)} bytes, not r||s in 64")
    else:
        r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
        try:
            key.verify(encode_dss_signature(r, s), f"{encoded_header}.{encoded_claims}".encode(),
                       ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            errors.append("JWT signature does not verify with k")
    if claims.get("aud") != audience:
        errors.append(f"aud is {claims.get('aud')!r}, not the endpoint's origin {audience!r}")
    expiry = claims.get("exp")
    if not isinstance(expiry, (int, float)) or isinstance(expiry, bool):
        errors.append(f"exp is not a number: {expiry!r}")
    elif not now < expiry <= now + LONGEST_EXPIRY + SLACK:
        errors.append(f"exp is {expiry - now:.0f} s from now, not within 24 h ahead")
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject.startswith(("mailto:", "https:")):
        errors.append(f"sub is {subject!r}, not a mailto: or https: URL")
    return claims, errors


class PushService:
    """The stand-in, on 127.0.0.1 at a port of its own, serving while the `with` block runs. `published_key` is the
    VAPID public key the backend publishes (GET /v1/push/web); every push must carry it."""

    def __init__(self, published_key=None):
        self.published_key = published_key
        self._keys = {}
        self._plans = {}
        self._pushes = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self):
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def subscription(self, path):
        """A new subscription for the endpoint at `path` (its keys kept here to decrypt), as the backend takes it."""
        path = path.strip("/")
        body, keys = new_subscription(f"{self.origin}/{path}")
        with self._lock:
            self._keys[path] = keys
        return body

    def gone(self, path):
        """The endpoint at `path` answers 410 Gone: the subscription has expired."""
        with self._lock:
            self._plans[path.strip("/")] = {"status": 410}

    def throttle(self, path, times, only=None):
        """The endpoint at `path` answers 429 to its first `times` pushes (those whose payload satisfies `only`, when
        given), then 201."""
        with self._lock:
            self._plans[path.strip("/")] = {"status": 429, "left": times, "only": only}

    def pushes(self, path=None):
        """Every push received, or those to `path`, oldest first."""
        with self._lock:
            return [push for push in self._pushes if path is None or push.path == path.strip("/")]

    def wait_for(self, predicate, path=None, timeout=60.0):
        """The first push (to `path`) that satisfies `predicate`, waiting up to `timeout` s for it; None if none came."""
        deadline = time.monotonic() + timeout
        while True:
            found = next((push for push in self.pushes(path) if predicate(push)), None)
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def _receive(self, path, headers, body):
        """Checks and records one request; answers the status planned for its path."""
        errors = []
        claims, vapid_errors = vapid_claims(headers.get("authorization"), self.origin, self.published_key, time.time())
        errors += vapid_errors
        ttl = headers.get("ttl")
        if ttl is None or not re.fullmatch(r"[0-9]+", ttl.strip()):
            errors.append(f"TTL is {ttl!r}, not an integer ≥ 0")
        if headers.get("content-encoding", "").strip().lower() != "aes128gcm":
            errors.append(f"Content-Encoding is {headers.get('content-encoding')!r}, not aes128gcm")
        if len(body) > LARGEST_BODY:
            errors.append(f"the body is {len(body)} bytes, over {LARGEST_BODY}")
        with self._lock:
            keys = self._keys.get(path)
        payload = None
        if keys is None:
            errors.append(f"no subscription was made for /{path}")
        else:
            try:
                plain = http_ece.decrypt(
                    body, private_key=keys.private_key, auth_secret=keys.auth_secret, version="aes128gcm")
                payload = json.loads(plain)
                if not isinstance(payload, dict):
                    errors.append(f"the payload is not a JSON object: {plain!r}")
                    payload = None
            except Exception as error:  # NB: whatever the body, the push is recorded with what broke.
                errors.append(f"the payload does not decrypt to JSON: {error!r}")
        with self._lock:
            status = self._planned(path, payload)
            self._pushes.append(Push(path, status, headers, payload, claims, errors))
            return status, len(self._pushes)

    def _planned(self, path, payload):
        plan = self._plans.get(path)
        if plan is None:
            return 201
        if plan["status"] == 410:
            return 410
        if plan["left"] > 0 and (plan["only"] is None or (payload is not None and plan["only"](payload))):
            plan["left"] -= 1
            return 429
        return 201


def _handler(service):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self._body()
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, number = service._receive(self.path.split("?")[0].strip("/"), headers, body)
            self.send_response(status)
            if status == 201:
                self.send_header("Location", f"{service.origin}/messages/{number}")
            if status == 429:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _body(self):
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        while self.rfile.readline().strip():
                            pass
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size + 2)[:size])
            return self.rfile.read(int(self.headers.get("Content-Length", 0)))

        def log_message(self, format, *args):
            pass

    return Handler
