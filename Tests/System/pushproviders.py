"""Stand-ins for Apple's and Google's push services, for the system tests: one process listening on two ports.

APNs: the HTTP/2 provider API over TLS (ALPN h2, with the `h2` library), `POST /3/device/<token>`, its provider token
(an ES256 JWT of the team) and its apns-* headers checked and answered as Apple answers them. FCM: the HTTP v1 API over
HTTP/1.1, `POST /v1/projects/<project>/messages:send` with an access token that `POST /token` grants for a service
account's JWT (RS256), as Google's OAuth 2 endpoint does. The JWTs' signatures are checked with PyJWT, independent of
the backend's jwt-kit. Every request answered is kept as <dir>/received/<time_ns>-<random>.json (the provider: apns,
fcm, or fcm-token for the token endpoint; the token; the status and reason answered; the headers; the JSON body); the
tests read them with Tests/System/pushinbox.py.

    python3 Tests/System/pushproviders.py --host 127.0.0.1 --apns-port 2197 --fcm-port 2198 --dir DIR

Runs in the foreground until SIGTERM. Makes in DIR what the backend is given to reach it, each only when absent (a
restart keeps them): cert.pem and key.pem (a self-signed certificate for 127.0.0.1, the CA the backend trusts),
apns-key.p8 (the APNs signing key) and fcm-service-account.json (a service account's key file, whose token_uri is this
process's /token).

A device token says how a push to it is answered: `gone…` was unregistered (APNs 410 Unregistered, FCM 404
UNREGISTERED); `bad…` is malformed (APNs 400 BadDeviceToken, FCM 400 INVALID_ARGUMENT); each push to a `busy…` one
(the same body to the same token) is refused as too many (429) twice, then taken; any other token takes every push."""

import argparse
import asyncio
import hashlib
import ipaddress
import json
import os
import re
import secrets
import signal
import ssl
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import jwt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Apple: a provider token is good for an hour; both services allow for clocks a little apart.
PROVIDER_TOKEN_LIFETIME = 3600
CLOCK_SKEW = 60
# Apple: an alert's payload is at most 4 KB; a collapse id at most 64 bytes.
LARGEST_APNS_PAYLOAD = 4096
LONGEST_COLLAPSE_ID = 64
# Google: the JWT a service account trades for an access token lives an hour at most; so does the access token.
LONGEST_ASSERTION = 3600
ACCESS_TOKEN_LIFETIME = 3600
FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
FCM_ERROR = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
# How many times each push to a `busy…` device is refused before it is taken.
THROTTLED_TRIES = 2


def private_pem(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()


def write_secret(path, text):
    path.write_text(text)
    path.chmod(0o600)


def write_certificate(cert, key):
    """A self-signed certificate for 127.0.0.1 and localhost, for 30 days."""
    private_key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tarrare-test-push")])
    now = datetime.now(timezone.utc)
    public_key = private_key.public_key()
    # NB: its own CA, as `openssl req -x509` makes one (the mail server's): the backend trusts this very certificate.
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, crl_sign=False, encipher_only=False, decipher_only=False),
            critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public_key), critical=False)
        .sign(private_key, hashes.SHA256()))
    write_secret(key, private_pem(private_key))
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))


def make_files(folder, project, token_uri):
    """The certificate, the APNs signing key and the FCM service account in `folder`, each made when absent."""
    folder.mkdir(parents=True, exist_ok=True)
    if not ((folder / "cert.pem").exists() and (folder / "key.pem").exists()):
        write_certificate(folder / "cert.pem", folder / "key.pem")
    if not (folder / "apns-key.p8").exists():
        write_secret(folder / "apns-key.p8", private_pem(ec.generate_private_key(ec.SECP256R1())))
    if not (folder / "fcm-service-account.json").exists():
        write_secret(folder / "fcm-service-account.json", json.dumps({
            "type": "service_account", "project_id": project, "private_key_id": secrets.token_hex(20),
            "private_key": private_pem(rsa.generate_private_key(public_exponent=65537, key_size=2048)),
            "client_email": f"push@{project}.iam.gserviceaccount.com", "client_id": str(secrets.randbelow(10 ** 21)),
            "token_uri": token_uri,
        }, indent=2))


class RequestLog:
    """The folder where every request answered is kept, one JSON file each, whole or not at all."""

    def __init__(self, folder):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def keep(self, provider, token, status, reason, headers, payload):
        record = {"provider": provider, "token": token, "status": status, "reason": reason, "headers": headers,
                  "payload": payload, "at": datetime.now(timezone.utc).isoformat()}
        name = f"{time.time_ns()}-{secrets.token_hex(4)}.json"
        # NB: written under a name readers skip, then renamed: a reader never sees half a record.
        partial = self.folder / f".{name}.part"
        partial.write_text(json.dumps(record))
        os.replace(partial, self.folder / name)
        print(f"{provider} {status} {reason or ''} {token or ''}".rstrip(), flush=True)


class Devices:
    """How a push to a device is answered, from its token's first word; and how often each push to a `busy…` device
    has been refused."""

    def __init__(self):
        self._refused = {}
        self._lock = threading.Lock()

    def fate(self, provider, token, body):
        """`gone`, `bad`, `busy` (refused this time) or `taken`."""
        for word in ("gone", "bad"):
            if token.startswith(word):
                return word
        if token.startswith("busy"):
            push = (provider, token, hashlib.sha256(body).hexdigest())
            with self._lock:
                refused = self._refused.get(push, 0)
                if refused < THROTTLED_TRIES:
                    self._refused[push] = refused + 1
                    return "busy"
        return "taken"


def signed_claims(token, key, algorithm, key_id):
    """The claims of a JWT signed with `key` by `algorithm` under `key_id`; None, and why not, when it is not one."""
    try:
        signed = jwt.api_jws.decode_complete(token, key, algorithms=[algorithm])
        claims = json.loads(signed["payload"])
    except (jwt.PyJWTError, ValueError) as error:
        return None, f"not a valid {algorithm} JWT of the key: {error}"
    if signed["header"].get("kid") != key_id:
        return None, f"kid is {signed['header'].get('kid')!r}, not {key_id!r}"
    if not isinstance(claims, dict):
        return None, "the claims are not a JSON object"
    return claims, None


def seconds(claims, name):
    """A claim that is a time in whole seconds since 1970, as a number; None when it is not one."""
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            isinstance(value, float) and not value.is_integer()):
        return None
    return int(value)


def parsed_json(body):
    try:
        return json.loads(body)
    except ValueError:
        return None


APNS_PATH = re.compile(r"/3/device/(?P<token>[^/?]*)")
PUSH_TYPES = {"alert", "background"}
PRIORITIES = {"5", "10"}


class APNs:
    """Apple's provider API: the checks of one request and their answer, and the request kept."""

    def __init__(self, public_key, key_id, team_id, topic, received, devices):
        self.public_key, self.key_id, self.team_id, self.topic = public_key, key_id, team_id, topic
        self.received, self.devices = received, devices

    def provider_token_problem(self, authorization, now):
        """Apple's reason for refusing the `authorization` header; None when it carries a good provider token."""
        if not authorization:
            return "MissingProviderToken"
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return "InvalidProviderToken"
        claims, _ = signed_claims(token.strip(), self.public_key, "ES256", self.key_id)
        if claims is None or claims.get("iss") != self.team_id:
            return "InvalidProviderToken"
        issued = seconds(claims, "iat")
        if issued is None or issued > now + CLOCK_SKEW:
            return "InvalidProviderToken"
        if issued < now - PROVIDER_TOKEN_LIFETIME:
            return "ExpiredProviderToken"
        return None

    def check(self, headers, body, now):
        """The status and reason Apple answers a request with; (200, None) for a push it takes from the headers and
        body (the device is asked next)."""
        matched = APNS_PATH.fullmatch(unquote(headers.get(":path", "")))
        if headers.get(":method") != "POST":
            return 405, "MethodNotAllowed"
        if not matched:
            return 404, "BadPath"
        if not matched["token"]:
            return 400, "MissingDeviceToken"
        problem = self.provider_token_problem(headers.get("authorization"), now)
        if problem:
            return 403, problem
        if "apns-topic" not in headers:
            return 400, "MissingTopic"
        if headers["apns-topic"] != self.topic:
            return 400, "TopicDisallowed"
        if headers.get("apns-push-type") not in PUSH_TYPES:
            return 400, "InvalidPushType"
        priority = headers.get("apns-priority")
        # Apple: a background push goes at priority 5; 10 is an error.
        if priority is not None and (priority not in PRIORITIES
                                     or (priority == "10" and headers["apns-push-type"] == "background")):
            return 400, "BadPriority"
        if "apns-expiration" in headers and not re.fullmatch(r"[0-9]+", headers["apns-expiration"]):
            return 400, "BadExpirationDate"
        if len(headers.get("apns-collapse-id", "").encode()) > LONGEST_COLLAPSE_ID:
            return 400, "BadCollapseId"
        if "apns-id" in headers:
            try:
                uuid.UUID(headers["apns-id"])
            except ValueError:
                return 400, "BadMessageId"
        if len(body) > LARGEST_APNS_PAYLOAD:
            return 413, "PayloadTooLarge"
        if not body:
            return 400, "PayloadEmpty"
        payload = parsed_json(body)
        if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
            # NB: Apple names no reason for a body that is not a JSON object with `aps`: this one is the stand-in's.
            return 400, "InvalidPayload"
        return 200, None

    def answer(self, header_list, body):
        """The response to one request (its status, headers and body), the request kept."""
        names = [name.lower() for name, _ in header_list]
        headers = {name.lower(): value for name, value in header_list}
        matched = APNS_PATH.fullmatch(unquote(headers.get(":path", "")))
        token = matched["token"] if matched else None
        status, reason = (400, "DuplicateHeaders") if len(names) != len(set(names)) else \
            self.check(headers, body, time.time())
        content = {}
        if status == 200:
            fate = self.devices.fate("apns", token, body)
            if fate == "gone":
                status, reason = 410, "Unregistered"
                content["timestamp"] = int(time.time() * 1000)
            elif fate == "bad":
                status, reason = 400, "BadDeviceToken"
            elif fate == "busy":
                status, reason = 429, "TooManyRequests"
        self.received.keep("apns", token, status, reason, headers, parsed_json(body))
        response = [(":status", str(status)), ("apns-id", headers.get("apns-id") or str(uuid.uuid4()))]
        if reason is None:
            return response, b""
        return response + [("content-type", "application/json")], json.dumps({"reason": reason, **content}).encode()


class APNsConnection(asyncio.Protocol):
    """One client's HTTP/2 connection to the APNs stand-in: each request gathered on its stream, answered when the
    stream ends."""

    def __init__(self, apns):
        self.apns = apns
        self.connection = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.requests = {}
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        protocol = transport.get_extra_info("ssl_object").selected_alpn_protocol()
        if protocol != "h2":
            # Apple speaks HTTP/2 only.
            print(f"apns: a client offered no h2 in ALPN ({protocol}): closed", flush=True)
            transport.close()
            return
        self.connection.initiate_connection()
        transport.write(self.connection.data_to_send())

    def data_received(self, data):
        if self.transport.is_closing():
            return
        try:
            events = self.connection.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            print(f"apns: not HTTP/2 as it should be ({error}): closed", flush=True)
            self.transport.write(self.connection.data_to_send())
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                self.requests[event.stream_id] = (event.headers, bytearray())
            elif isinstance(event, h2.events.DataReceived):
                if event.stream_id in self.requests:
                    self.requests[event.stream_id][1].extend(event.data)
                self.connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id in self.requests:
                header_list, body = self.requests.pop(event.stream_id)
                headers, content = self.apns.answer(header_list, bytes(body))
                self.connection.send_headers(event.stream_id, headers, end_stream=not content)
                if content:
                    self.connection.send_data(event.stream_id, content, end_stream=True)
            elif isinstance(event, h2.events.StreamReset):
                self.requests.pop(event.stream_id, None)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.transport.close()
        self.transport.write(self.connection.data_to_send())


SEND_PATH = re.compile(r"/v1/projects/(?P<project>[^/]+)/messages:send")
TTL = re.compile(r"[0-9]+(\.[0-9]+)?s")
# The fields of FCM v1's Message that the stand-in knows, in their proto names (JSON may also spell them lowerCamel);
# Google refuses a name it does not know.
KNOWN_FIELDS = {
    "message": {"name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic",
                "condition"},
    "message.notification": {"title", "body", "image"},
    "message.android": {"collapse_key", "priority", "ttl", "restricted_package_name", "data", "notification",
                        "fcm_options", "direct_boot_ok"},
    "message.android.notification": {
        "title", "body", "icon", "color", "sound", "tag", "click_action", "body_loc_key", "body_loc_args",
        "title_loc_key", "title_loc_args", "channel_id", "ticker", "sticky", "event_time", "local_only",
        "notification_priority", "default_sound", "default_vibrate_timings", "default_light_settings",
        "vibrate_timings", "visibility", "notification_count", "light_settings", "image", "bypass_proxy_notification",
        "proxy"},
}


def proto_name(name):
    """`collapseKey` → `collapse_key`: JSON may spell a field either way."""
    return re.sub(r"[A-Z]", lambda upper: "_" + upper[0].lower(), name)


def fields(value, where):
    """`value` (a JSON object) keyed by proto names; raises ValueError, in Google's words, for a name FCM does not know
    or a value that is not an object."""
    if not isinstance(value, dict):
        raise ValueError(f"Invalid value at '{where}': not an object")
    named = {proto_name(name): field for name, field in value.items()}
    for name in value:
        if proto_name(name) not in KNOWN_FIELDS[where]:
            raise ValueError(f"Invalid JSON payload received. Unknown name \"{name}\" at '{where}': Cannot find field.")
    return named


def strings(value, where):
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise ValueError(f"Invalid value at '{where}' (map<string, string>): every value is a string")


def checked_message(body):
    """The message of a messages:send body, its token the one to push to; raises ValueError saying what FCM refuses."""
    if not isinstance(body, dict) or set(map(proto_name, body)) - {"message", "validate_only"}:
        raise ValueError("Invalid JSON payload received: expected {\"message\": {...}}")
    message = fields(body.get("message"), "message")
    if [name for name in ("token", "topic", "condition") if name in message] != ["token"]:
        raise ValueError("Exactly one of message.token, message.topic or message.condition: the stand-in takes a token")
    if not isinstance(message["token"], str) or not message["token"]:
        raise ValueError("The registration token is not a valid FCM registration token")
    if "notification" in message:
        notification = fields(message["notification"], "message.notification")
        if not all(isinstance(text, str) for text in notification.values()):
            raise ValueError("Invalid value at 'message.notification': its title, body and image are strings")
    if "data" in message:
        strings(message["data"], "message.data")
    if "android" in message:
        android = fields(message["android"], "message.android")
        if "ttl" in android and not (isinstance(android["ttl"], str) and TTL.fullmatch(android["ttl"])):
            raise ValueError(f"Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), "
                             f"{android['ttl']!r}")
        if "priority" in android and android["priority"] not in ("NORMAL", "HIGH"):
            raise ValueError(f"Invalid value at 'message.android.priority' (AndroidMessagePriority), "
                             f"{android['priority']!r}")
        if "collapse_key" in android and not isinstance(android["collapse_key"], str):
            raise ValueError("Invalid value at 'message.android.collapse_key' (TYPE_STRING)")
        if "data" in android:
            strings(android["data"], "message.android.data")
        if "notification" in android:
            count = fields(android["notification"], "message.android.notification").get("notification_count")
            if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
                raise ValueError(f"Invalid value at 'message.android.notification.notification_count' (TYPE_INT32), "
                                 f"{count!r}")
    return message


def google_error(code, status, message, error_code=None):
    error = {"code": code, "message": message, "status": status}
    if error_code:
        error["details"] = [{"@type": FCM_ERROR, "errorCode": error_code}]
    return {"error": error}


class FCM:
    """Google's OAuth 2 token endpoint for the service account, and FCM's v1 send for the project: the checks of one
    request and their answer, and the request kept."""

    def __init__(self, account, received, devices):
        self.account = account
        self.public_key = serialization.load_pem_private_key(account["private_key"].encode(), None).public_key()
        self.received, self.devices = received, devices
        self._granted = {}
        self._lock = threading.Lock()

    def grant(self, headers, body):
        """The token endpoint: the status and JSON answering a form `grant_type=…&assertion=<JWT>`."""
        form = parse_qs(body.decode(errors="replace"), keep_blank_values=True)
        grant_type, assertion = form.get("grant_type", [None])[0], form.get("assertion", [""])[0]
        claims, problem = signed_claims(assertion, self.public_key, "RS256", self.account["private_key_id"])
        now = time.time()
        if not headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            status, answer = 400, {"error": "invalid_request", "error_description": "Expected a form."}
        elif grant_type != JWT_BEARER:
            status, answer = 400, {"error": "unsupported_grant_type",
                                   "error_description": f"Invalid grant_type: {grant_type}"}
        elif claims is None:
            status, answer = 400, {"error": "invalid_grant", "error_description": f"Invalid JWT: {problem}"}
        else:
            problem = self.assertion_problem(claims, now)
            if problem:
                status, answer = 400, {"error": "invalid_grant", "error_description": problem}
            else:
                token = f"ya29.test-{secrets.token_urlsafe(24)}"
                with self._lock:
                    self._granted[token] = now + ACCESS_TOKEN_LIFETIME
                status, answer = 200, {"access_token": token, "expires_in": ACCESS_TOKEN_LIFETIME,
                                       "token_type": "Bearer"}
        self.received.keep("fcm-token", None, status, answer.get("error"), headers,
                           {"grant_type": grant_type, "claims": claims, "accessToken": answer.get("access_token")})
        return status, answer

    def assertion_problem(self, claims, now):
        """Why Google would refuse the claims of a service account's JWT; None when it grants a token for them."""
        scopes = claims.get("scope").split() if isinstance(claims.get("scope"), str) else []
        issued, expires = seconds(claims, "iat"), seconds(claims, "exp")
        if claims.get("iss") != self.account["client_email"]:
            return f"Invalid JWT: iss is not {self.account['client_email']}"
        if FCM_SCOPE not in scopes:
            return f"Invalid JWT: the scope does not hold {FCM_SCOPE}"
        audience = claims.get("aud")
        # RFC 7519: one audience is a string, several an array.
        if self.account["token_uri"] not in (audience if isinstance(audience, list) else [audience]):
            return f"Invalid JWT: aud is not {self.account['token_uri']}"
        if issued is None or expires is None or not (
                issued - CLOCK_SKEW <= now < expires + CLOCK_SKEW and issued < expires <= issued + LONGEST_ASSERTION):
            return ("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check "
                    "your iat and exp values in the JWT claim.")
        return None

    def is_granted(self, authorization):
        scheme, _, token = (authorization or "").partition(" ")
        with self._lock:
            return scheme.lower() == "bearer" and self._granted.get(token.strip(), 0) > time.time()

    def send(self, path, headers, body):
        """FCM's v1 send: the status and JSON answering one request."""
        payload = parsed_json(body)
        # NB: kept with its token even when refused, so that a test waiting for its device's pushes sees why.
        message = payload.get("message") if isinstance(payload, dict) else None
        token = message.get("token") if isinstance(message, dict) and isinstance(message.get("token"), str) else None
        matched = SEND_PATH.fullmatch(path)
        if not matched:
            status, answer = 404, google_error(404, "NOT_FOUND", f"{path} is not FCM's")
        elif not self.is_granted(headers.get("authorization")):
            status, answer = 401, google_error(
                401, "UNAUTHENTICATED", "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.")
        elif matched["project"] != self.account["project_id"]:
            status, answer = 403, google_error(403, "PERMISSION_DENIED", "SenderId mismatch", "SENDER_ID_MISMATCH")
        else:
            try:
                checked_message(payload)
            except ValueError as error:
                status, answer = 400, google_error(400, "INVALID_ARGUMENT", str(error), "INVALID_ARGUMENT")
            else:
                status, answer = self.pushed(matched["project"], token, body)
        error = answer.get("error", {})
        reason = (error.get("details") or [{}])[0].get("errorCode") or error.get("status")
        self.received.keep("fcm", token, status, reason, headers, payload)
        return status, answer

    def pushed(self, project, token, body):
        """The answer to a valid message, as its device makes it."""
        fate = self.devices.fate("fcm", token, body)
        if fate == "gone":
            return 404, google_error(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED")
        if fate == "bad":
            return 400, google_error(
                400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                "INVALID_ARGUMENT")
        if fate == "busy":
            return 429, google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for the device.", "QUOTA_EXCEEDED")
        return 200, {"name": f"projects/{project}/messages/{time.time_ns()}"}

    def handler(self):
        fcm = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                headers = {name.lower(): value for name, value in self.headers.items()}
                if "content-length" not in headers:
                    # NB: the backend sends a body of known length; a chunked one is not worth reading here.
                    self.close_connection = True
                    return self.answer(411, {"error": "a body of known length (Content-Length) is expected"})
                body = self.rfile.read(int(headers["content-length"]))
                path = unquote(self.path.split("?")[0])
                if path == "/token":
                    return self.answer(*fcm.grant(headers, body))
                self.answer(*fcm.send(path, headers, body))

            def answer(self, status, content):
                data = json.dumps(content).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Bearer realm="https://accounts.google.com/"')
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format, *args):
                pass

        return Handler


async def serve(arguments, apns, fcm):
    folder = Path(arguments.dir)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    context.set_alpn_protocols(["h2"])
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: APNsConnection(apns), arguments.host, arguments.apns_port, ssl=context)
    http = ThreadingHTTPServer((arguments.host, arguments.fcm_port), fcm.handler())
    http.daemon_threads = True
    threading.Thread(target=http.serve_forever, daemon=True).start()
    stopped = asyncio.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stopped.set)
    print(f"APNs on https://{arguments.host}:{arguments.apns_port}, FCM on http://{arguments.host}:"
          f"{arguments.fcm_port}, keeping what they receive in {folder / 'received'}", flush=True)
    await stopped.wait()
    server.close()
    http.shutdown()
    http.server_close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--apns-port", type=int, default=2197)
    parser.add_argument("--fcm-port", type=int, default=2198)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--apns-key-id", default="TESTKEY001")
    parser.add_argument("--apns-team-id", default="TESTTEAM01")
    parser.add_argument("--apns-topic", default="test.tarrare.app")
    parser.add_argument("--fcm-project", default="tarrare-test")
    arguments = parser.parse_args()
    folder = Path(arguments.dir)
    make_files(folder, arguments.fcm_project, f"http://{arguments.host}:{arguments.fcm_port}/token")
    received, devices = RequestLog(folder / "received"), Devices()
    signing_key = serialization.load_pem_private_key((folder / "apns-key.p8").read_bytes(), None)
    apns = APNs(signing_key.public_key(), arguments.apns_key_id, arguments.apns_team_id, arguments.apns_topic,
                received, devices)
    fcm = FCM(json.loads((folder / "fcm-service-account.json").read_text()), received, devices)
    asyncio.run(serve(arguments, apns, fcm))


if __name__ == "__main__":
    main()
