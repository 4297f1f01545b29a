"""A real SMTP server for the tests: STARTTLS required, then AUTH (LOGIN or PLAIN) with one user, and every message
accepted kept as <dir>/<time_ns>-<random>.eml. A `Received:` header it adds says how the message came ("with ESMTPSA":
over TLS and authenticated, RFC 3848) and `X-Envelope-To:` whom it was for. Tests/System/inbox.py reads them.

    python3 Tests/System/mailserver.py --host 127.0.0.1 --port 2525 --dir DIR --cert CERT --key KEY --user U --password P

Runs in the foreground until SIGTERM; makes a self-signed certificate when CERT and KEY do not exist."""

import argparse
import asyncio
import email.utils
import hmac
import logging
import os
import secrets
import signal
import ssl
import subprocess
import time
from pathlib import Path


def make_certificate(cert, key):
    """A self-signed certificate for the names the server is reached by here and in compose (`mail`)."""
    subprocess.run([
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "30",
        "-subj", "/CN=mail", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:mail",
        "-addext", "extendedKeyUsage=serverAuth", "-keyout", str(key), "-out", str(cert),
    ], check=True, capture_output=True)


class Inbox:
    """The aiosmtpd handler that writes each message to the folder, whole or not at all."""

    def __init__(self, folder):
        self.folder = Path(folder)

    async def handle_DATA(self, server, session, envelope):
        how = "ESMTP" + ("S" if session.ssl else "") + ("A" if session.authenticated else "")
        tls = session.ssl["ssl_object"].version() if session.ssl else "no TLS"
        user = session.auth_data.login.decode() if session.authenticated else "nobody"
        headers = (
            f"Received: from {session.host_name} ({session.peer[0]}) by tarrare-test-mail with {how}"
            f" ({tls}, user {user}); {email.utils.formatdate()}\r\n"
            f"X-Envelope-To: {', '.join(envelope.rcpt_tos)}\r\n"
        )
        name = f"{time.time_ns()}-{secrets.token_hex(4)}.eml"
        # NB: written under a name readers skip, then renamed: a reader never sees half a message.
        partial = self.folder / f".{name}.part"
        partial.write_bytes(headers.encode() + envelope.original_content)
        os.replace(partial, self.folder / name)
        return "250 OK"


def authenticator(user, password):
    from aiosmtpd.smtp import AuthResult, LoginPassword

    def check(server, session, envelope, mechanism, data):
        valid = isinstance(data, LoginPassword) and hmac.compare_digest(data.login, user.encode()) \
            and hmac.compare_digest(data.password, password.encode())
        return AuthResult(success=valid, auth_data=data if valid else None, handled=False)
    return check


async def serve(arguments):
    # NB: imported here, so that a test that only makes a certificate needs no aiosmtpd.
    from aiosmtpd.smtp import SMTP

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(arguments.cert, arguments.key)
    handler, check = Inbox(arguments.dir), authenticator(arguments.user, arguments.password)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(
        handler, hostname="tarrare-test-mail", tls_context=context, require_starttls=True, auth_required=True,
        auth_require_tls=True, authenticator=check), arguments.host, arguments.port)
    stopped = asyncio.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stopped.set)
    print(f"listening on {arguments.host}:{arguments.port}, keeping mail in {arguments.dir}", flush=True)
    await stopped.wait()
    server.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2525)
    for name in ("--dir", "--cert", "--key", "--user", "--password"):
        parser.add_argument(name, required=True)
    arguments = parser.parse_args()
    # NB: aiosmtpd warns of its own deprecated Session.login_data on every login.
    logging.getLogger("mail.log").setLevel(logging.ERROR)
    Path(arguments.dir).mkdir(parents=True, exist_ok=True)
    if not (Path(arguments.cert).exists() and Path(arguments.key).exists()):
        make_certificate(arguments.cert, arguments.key)
    asyncio.run(serve(arguments))


if __name__ == "__main__":
    main()
