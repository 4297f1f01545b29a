"""The whole system as docker compose runs it, on a real Docker engine: started from nothing, the story through the
containers' gateway, scaled, faults in containers under traffic, clear failures, HTTPS, and data kept across
`down` and `up`. The tests run in order on one stack, which is removed at the end."""

import re
import secrets
import socket
import ssl
import struct
import subprocess
import uuid
from datetime import datetime, timezone

import httpx
import pytest

from stack import ROOT, Stack, delivery_pairs, eventually, system_modules

SCALE = {"matching": 3, "chat": 2, "notifications": 2}


def scaled(counts):
    """`up`'s arguments for these replica counts."""
    return [f"--scale={service}={count}" for service, count in counts.items()]


@pytest.fixture(scope="module")
def stack():
    stack = Stack("tarrare-test")
    try:
        stack.compose("build", timeout=1800)
        stack.up()
        yield stack
    finally:
        stack.down()


@pytest.fixture(scope="module")
def system(stack):
    """The system tests' helpers, pointed at this stack."""
    return system_modules(stack)


def test_the_whole_system_starts_from_nothing_and_the_story_and_a_call_pass_through_its_gateway(stack):
    states = stack.compose("ps", "-a", "--format", "{{.Service}} {{.State}} {{.Health}} {{.ExitCode}}").stdout
    for line in states.splitlines():
        service, state, *rest = line.split()
        if service == "places-import":
            assert state == "exited" and rest[-1] == "0", line
        else:
            assert state == "running" and rest[0] == "healthy", line
    # The bundled places were imported (the story then finds them through the gateway), and the web client is served;
    # a call's media goes through the stack's coturn at the relay ports it publishes.
    assert "read 510" in stack.logs("places-import")
    page = httpx.get(f"{stack.gateway}/", timeout=10)
    assert page.status_code == 200 and "<script" in page.text
    stack.run_system_tests("test_story.py", "test_call_relay.py")


def test_the_image_holds_the_services_compiled_in_it_as_an_operator_builds_it(stack):
    # The Dockerfile's build, as `docker compose up --build` runs it: the services alone (no tool, no test support),
    # each with the Swift runtime linked in (--static-swift-stdlib), so the image needs no toolchain library.
    image = f"tarrare:{stack.env['TARRARE_TAG']}"
    run = lambda *command: subprocess.run(["docker", "run", "--rm", image, *command],
                                          capture_output=True, text=True, timeout=60, check=True).stdout
    executables = {name for name in run("ls", "/app").split() if not name.endswith(".resources")}
    assert executables == {"accounts", "places", "matching", "chat", "notifications", "media"}, executables
    libraries = run("sh", "-c", 'for file in /app/*; do [ -d "$file" ] || ldd "$file"; done')
    assert "libswiftCore" not in libraries and "libFoundation" not in libraries, libraries
    assert "not found" not in libraries and libraries.count("libpq.so.5 =>") == len(executables), libraries


def request_counts(text):
    """Requests a replica served (sockets opened included), health checks and metrics aside."""
    total = 0
    for line in text.splitlines():
        found = re.match(r'(?:http_requests_total|websocket_connections_total)(?:\{(.*)\})? (\d+)', line)
        if found and "/health" not in (found.group(1) or "") and "/metrics" not in (found.group(1) or ""):
            total += int(found.group(2))
    return total


def consumed_counts(text):
    return sum(int(value) for value in re.findall(r'^events_consumed_total\{[^}]*\} (\d+)', text, re.MULTILINE))


def test_scaled_services_share_requests_and_events_and_the_story_passes_again(stack):
    stack.up(*scaled(SCALE), "--no-recreate")
    for service, count in SCALE.items():
        assert len(stack.containers(service)) == count
    # The gateway was not restarted: it finds the new replicas by itself.
    stack.run_system_tests("test_story.py")
    for service, count in SCALE.items():
        for container in stack.containers(service):
            metrics = stack.metrics(container, service)
            assert request_counts(metrics) > 0, f"{container} served no request"
            assert consumed_counts(metrics) > 0, f"{container} consumed no event"


def test_replicas_removed_lose_their_traffic_without_a_failed_request(stack):
    client = httpx.Client(base_url=stack.gateway, timeout=30)
    stack.up(*scaled({service: 1 for service in SCALE}), "--no-recreate")
    # Within the resolver's two seconds the gateway may still pick a removed replica: it moves on to the next.
    statuses = [client.get("/v1/rides/current").status_code for _ in range(60)]
    assert set(statuses) == {401}, statuses
    stack.up(*scaled(SCALE), "--no-recreate")
    statuses = [client.get("/v1/rides/current").status_code for _ in range(60)]
    assert set(statuses) == {401}, statuses


def test_killed_replicas_and_restarted_servers_lose_and_repeat_nothing(stack, system):
    _, traffic = system
    pairs = delivery_pairs(stack)
    since = datetime.now(timezone.utc)
    with traffic.Traffic(pairs) as load:
        assert load.wait_for_deliveries(4, timeout=180), load.errors
        # One replica of each scaled service killed with work in hand; compose brings each back.
        for service in SCALE:
            victim = stack.containers(service)[-1]
            subprocess.run(["docker", "kill", "--signal", "KILL", victim], check=True, capture_output=True)
        assert load.wait_for_deliveries(4, timeout=180), load.errors
        stack.up(*scaled(SCALE), "--no-recreate")
        for server in ("rabbitmq", "postgres"):
            stack.compose("restart", server)
            assert load.wait_for_deliveries(4, timeout=240), load.errors
    assert load.errors == []
    traffic.verify(stack.system_env(), pairs, since, timeout=180)


def test_a_service_that_cannot_reach_its_database_says_so_once_and_is_unhealthy(stack):
    name = f"{stack.project}-lost"
    network = f"{stack.project}_default"
    try:
        subprocess.run([
            "docker", "run", "-d", "--name", name, "--network", network,
            "--health-cmd", "curl -fsS -o /dev/null http://127.0.0.1:8084/health/ready",
            "--health-interval", "1s", "--health-retries", "2", "--health-start-period", "0s",
            "-e", "ENVIRONMENT=production", "-e", "HTTP_HOST=0.0.0.0", "-e", "HTTP_PORT=8084",
            "-e", "POSTGRES_URL=postgres://chat:wrong@nowhere-db:5432/chat", "-e", "AMQP_URL=amqp://chat:x@rabbitmq:5672/%2F",
            "-e", "JWT_PUBLIC_KEY=unused", "-e", "DATABASE_WAIT_SECONDS=600",
            f"tarrare:{stack.env['TARRARE_TAG']}", "/app/chat"], check=True, capture_output=True)
        health = lambda: subprocess.run(["docker", "inspect", "-f", "{{.State.Health.Status}}", name],
                                        capture_output=True, text=True).stdout.strip()
        eventually(lambda: health() == "unhealthy", timeout=60, what="the replica to be unhealthy")
        logs = subprocess.run(["docker", "logs", name], capture_output=True, text=True)
        lines = (logs.stdout + logs.stderr).strip().splitlines()
        assert len(lines) == 1, lines
        assert "waiting for the database" in lines[0] and "nowhere-db" in lines[0], lines[0]
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


def test_a_service_without_its_token_key_names_it_in_one_line(stack):
    answer = subprocess.run([
        "docker", "run", "--rm", "--network", f"{stack.project}_default",
        "-e", "ENVIRONMENT=production", "-e", "POSTGRES_URL=postgres://chat:x@postgres:5432/chat",
        "-e", "AMQP_URL=amqp://chat:x@rabbitmq:5672/%2F", "-e", "JWT_PUBLIC_KEY_FILE=/run/secrets/jwt-public-key",
        f"tarrare:{stack.env['TARRARE_TAG']}", "/app/chat"], capture_output=True, text=True, timeout=60)
    assert answer.returncode == 1
    lines = (answer.stdout + answer.stderr).strip().splitlines()
    assert len(lines) == 1 and "JWT_PUBLIC_KEY" in lines[0], lines


def test_missing_secrets_and_a_taken_port_stop_compose_with_their_names(stack):
    # A password not made: compose names the variable and what to run.
    env_file = stack.folder / ".env"
    saved = env_file.read_text()
    try:
        env_file.write_text("\n".join(line for line in saved.splitlines() if not line.startswith("CHAT_DB_PASSWORD=")))
        answer = stack.compose("config", "-q", check=False)
        assert answer.returncode != 0
        assert "CHAT_DB_PASSWORD" in answer.stderr and "make-secrets.sh" in answer.stderr, answer.stderr
    finally:
        env_file.write_text(saved)
    # A secret file missing: compose names it.
    key = stack.secrets / "jwt-public.pem"
    saved_key = key.read_bytes()
    try:
        key.unlink()
        answer = stack.compose("up", "-d", "--no-deps", "--force-recreate", "chat", check=False)
        assert answer.returncode != 0 and "jwt-public.pem" in answer.stderr, answer.stderr
    finally:
        key.write_bytes(saved_key)
        stack.up()
    # The gateway's port taken by another program: compose says which.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        original = stack.env["GATEWAY_HTTP_PORT"]
        stack.env["GATEWAY_HTTP_PORT"] = str(port)
        try:
            answer = stack.compose("up", "-d", "--no-deps", "gateway", check=False)
            assert answer.returncode != 0 and str(port) in answer.stderr, answer.stderr
        finally:
            stack.env["GATEWAY_HTTP_PORT"] = original
    stack.up()


def test_https_with_a_certificate_and_plain_http_redirected(stack):
    subprocess.run([ROOT / "deploy" / "make-secrets.sh", "--tls", "tarrare.test", stack.folder],
                   check=True, capture_output=True)
    certificate = stack.secrets / "tls" / "cert.pem"
    stack.compose("restart", "gateway", "coturn")
    stack.up()
    secure = f"https://localhost:{stack.https_port}"
    answer = httpx.get(f"{secure}/v1/campuses", verify=str(certificate), timeout=10)
    assert answer.status_code == 200 and "helsinki.fi" in answer.text
    plain = httpx.get(f"{stack.gateway}/v1/campuses?x=1", timeout=10)
    assert plain.status_code == 308
    assert plain.headers["location"] == f"https://127.0.0.1:{stack.https_port}/v1/campuses?x=1"
    # coturn takes the same certificate for TURN over TLS: it answers a STUN binding request over it.
    with socket.create_connection(("127.0.0.1", stack.turn_tls_port), timeout=10) as connection:
        context = ssl.create_default_context(cafile=str(certificate))
        with context.wrap_socket(connection, server_hostname="localhost") as secure_connection:
            transaction = secrets.token_bytes(12)
            secure_connection.sendall(struct.pack("!HHI", 0x0001, 0, 0x2112A442) + transaction)
            answer = secure_connection.recv(2048)
    kind, _, cookie = struct.unpack("!HHI", answer[:8])
    assert (kind, cookie, answer[8:20]) == (0x0101, 0x2112A442, transaction), answer
    # And back to plain HTTP for the tests after this one.
    for name in ("cert.pem", "key.pem"):
        (stack.secrets / "tls" / name).unlink()
    stack.compose("restart", "gateway", "coturn")
    stack.up()


def test_down_then_up_keeps_accounts_matches_and_messages(stack, system):
    system_conftest, _ = system
    Student = system_conftest.Student
    course = f"KEEP-{uuid.uuid4().int % 100000}"
    aino, mikko = Student("Aino"), Student("Mikko")
    for student, role in ((aino, "student"), (mikko, "tutor")):
        assert student.http.put("/v1/tutoring/profile", json={"role": role, "courses": [course]}).status_code == 200
    aino.when_known("POST", "/v1/tutoring/swipes", {"userId": mikko.id, "like": True})
    match_id = mikko.when_known("POST", "/v1/tutoring/swipes", {"userId": aino.id, "like": True}).json()["matchId"]
    text = f"Still here after a restart {uuid.uuid4().hex[:6]}"
    aino.when_known("POST", f"/v1/conversations/{match_id}/messages", {"id": str(uuid.uuid4()), "text": text})
    photo = (ROOT / "Tests" / "MediaTests" / "Fixtures" / "phone-photo.jpg").read_bytes()
    uploaded = aino.http.post("/v1/media", content=photo, headers={"Content-Type": "image/jpeg"})
    assert uploaded.status_code == 201, uploaded.text
    image = aino.get(f"/v1/media/{uploaded.json()['id']}", size="small")
    assert image.status_code == 200

    stack.compose("down", "--timeout", "10")
    stack.up()

    client = httpx.Client(base_url=stack.gateway, timeout=30)
    login = client.post("/v1/auth/login", json={"email": mikko.email, "password": "correct horse battery"})
    assert login.status_code == 200, login.text
    client.headers["Authorization"] = f"Bearer {login.json()['accessToken']}"
    conversations = client.get("/v1/conversations").json()["conversations"]
    assert [c["id"].lower() for c in conversations] == [match_id.lower()]
    assert conversations[0]["otherMember"]["name"] == "Aino"
    messages = client.get(f"/v1/conversations/{match_id}/messages").json()["messages"]
    assert [message["text"] for message in messages] == [text]
    assert client.get("/v1/tutoring/matches").json()["matches"], "the match is gone"
    kept = client.get(f"/v1/media/{uploaded.json()['id']}", params={"size": "small"})
    assert kept.status_code == 200 and kept.content == image.content
