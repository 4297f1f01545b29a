"""What the APNs and FCM stand-ins (pushproviders.py) received, as the tests read it: the JSON file that
TARRARE_PUSH_PROVIDERS names (scripts/test writes it) says where they listen and keep each request they answered, one
<time_ns>-<random>.json file a request."""

import json
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


def providers():
    """How scripts/test started the stand-ins (their command line, pid file, log, ports, folders and the settings the
    backend was given); None when it did not."""
    path = os.environ.get("TARRARE_PUSH_PROVIDERS")
    return json.loads(Path(path).read_text()) if path else None


@dataclass(frozen=True)
class Received:
    """One request a stand-in answered: `provider` is apns, fcm, or fcm-token (the token endpoint); `token` the device's
    (None for fcm-token); `status` and `reason` (APNs' reason, FCM's errorCode or status, the OAuth error) what it
    answered; `headers` lower-cased; `payload` the JSON body (for fcm-token its grant_type, the JWT's claims and the
    access token granted, if any)."""

    provider: str
    token: str | None
    status: int
    reason: str | None
    headers: dict
    payload: dict | None
    at: datetime

    @property
    def said(self):
        """What the push says, whichever service carried it: its title, body, type, seq, what to open and the badge
        (None where it has none); None when the body is not a push of either."""
        payload = self.payload if isinstance(self.payload, dict) else {}
        if self.provider == "apns" and isinstance(payload.get("aps"), dict):
            aps = payload["aps"]
            alert = aps.get("alert") if isinstance(aps.get("alert"), dict) else {}
            return {"title": alert.get("title"), "body": alert.get("body"), "type": payload.get("type"),
                    "seq": payload.get("seq"), "open": payload.get("open"), "badge": aps.get("badge")}
        message = payload.get("message")
        if self.provider == "fcm" and isinstance(message, dict):
            notification, data = message.get("notification") or {}, message.get("data") or {}
            number = (lambda text: int(text) if isinstance(text, str) and text.isdigit() else text)
            return {"title": notification.get("title"), "body": notification.get("body"), "type": data.get("type"),
                    "seq": number(data.get("seq")), "open": data.get("open"), "badge": number(data.get("badge"))}
        return None


# A record never changes once it has its name: each is read once.
_read = {}


def _record(path):
    if path not in _read:
        record = json.loads(path.read_text())
        _read[path] = Received(record["provider"], record["token"], record["status"], record["reason"],
                               record["headers"], record["payload"], datetime.fromisoformat(record["at"]))
    return _read[path]


def received(provider=None, token=None):
    """Every request the stand-ins answered (for `provider`, to the device `token`), oldest first."""
    described = providers()
    assert described, "TARRARE_PUSH_PROVIDERS names no stand-ins: scripts/test starts them and points the system there"
    folder = Path(described["received"])
    found = []
    for _, path in sorted((int(path.name.split("-")[0]), path) for path in folder.glob("*.json")):
        record = _record(path)
        if (provider is None or record.provider == provider) and (token is None or record.token == token):
            found.append(record)
    return found


def wait_for(predicate, provider=None, token=None, timeout=60.0):
    """The first request (for `provider`, to `token`) that satisfies `predicate`, waiting up to `timeout` s for it;
    None if none came."""
    deadline = time.monotonic() + timeout
    while True:
        found = next((record for record in received(provider, token) if predicate(record)), None)
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)
