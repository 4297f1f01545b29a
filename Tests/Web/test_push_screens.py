"""Push in the page: an installable app (a manifest the gateway serves), a service worker that shows what is pushed and
opens the screen a notification is about, and Me → "Notifications on this device", which says why it cannot turn them
on. Headless Chromium cannot reach its push service: pushes are handed to the service worker through the DevTools
protocol (`ServiceWorker.deliverPushMessage`), as DESIGN.md's "Push: reaching a phone in a pocket" says."""

import json
import re
import time
import uuid
from urllib.parse import urljoin

import httpx
import websocket  # websocket-client, which Selenium itself depends on
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import GATEWAY


class DevTools:
    """A second DevTools connection to a test's browser, for what Selenium's `execute_cdp_cmd` cannot do: hear the
    protocol's events (the service worker's registration id comes in one) and speak to the service worker itself."""

    def __init__(self, driver):
        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        url = httpx.get(f"http://{address}/json/version", timeout=10).json()["webSocketDebuggerUrl"]
        # NB: without an Origin header: Chromium refuses DevTools sockets from origins it was not told to allow.
        self.socket = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.last_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        """Sends a command (to the target attached as `session`) and answers its result."""
        self.last_id += 1
        message = {"id": self.last_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") != self.last_id:
                self.events.append(answer)
            elif "error" in answer:
                raise AssertionError(f"{method}: {answer['error']}")
            else:
                return answer.get("result", {})

    def event(self, method, matches, timeout=30, since=0):
        """The parameters of the first event `method` that `matches` (of those heard since the `since`-th), waiting for
        it."""
        deadline = time.monotonic() + timeout
        while True:
            heard = (e["params"] for e in self.events[since:] if e.get("method") == method)
            found = next((params for params in heard if matches(params)), None)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"no {method} event as expected within {timeout} s")
            self.socket.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                self.events.append(json.loads(self.socket.recv()))
            except websocket.WebSocketTimeoutException:
                pass

    def attach(self, kind, url, timeout=30):
        """A session on the target of `kind` ("page", "service_worker") at `url`, waiting for it to be there."""
        deadline = time.monotonic() + timeout
        while True:
            targets = self.send("Target.getTargets")["targetInfos"]
            target = next((t for t in targets if t["type"] == kind and t["url"].startswith(url)), None)
            if target:
                attached = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
                return attached["sessionId"]
            if time.monotonic() > deadline:
                raise AssertionError(f"no {kind} target at {url}: {targets}")
            time.sleep(0.2)

    def close(self):
        self.socket.close()


def allow_notifications(browser):
    """As a person who allowed the site's notifications (headless Chromium denies any prompt)."""
    browser.driver.execute_cdp_cmd(
        "Browser.grantPermissions", {"origin": browser.gateway, "permissions": ["notifications"]})


def active_worker(browser):
    """Waits until the page's service worker is active and controls the page; answers its scope."""
    def active():
        worker = browser.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "navigator.serviceWorker.ready.then((r) => done({scope: r.scope, state: r.active?.state,"
            " controlled: Boolean(navigator.serviceWorker.controller)}), (e) => done({error: String(e)}));")
        return worker if worker.get("state") == "activated" and worker.get("controlled") else None
    return browser.wait(active, message=f"{browser.name}: the service worker never became active")["scope"]


def notifications(browser):
    """The notifications the service worker shows, as {title, body, tag, open}."""
    return browser.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((shown) => done(shown.map((n) =>"
        " ({title: n.title, body: n.body, tag: n.tag, open: n.data?.open ?? null}))), (e) => done([String(e)]));")


def test_the_page_links_a_manifest_that_the_gateway_serves_and_a_service_worker_never_cached(gateway):
    with httpx.Client(base_url=gateway, timeout=30) as http:
        page = http.get("/").text
        assert re.search(r'<meta name="theme-color" content="#[0-9a-f]{6}">', page)
        link = re.search(r'<link rel="manifest" href="([^"]+)">', page)
        assert link, "the page links no manifest"

        answer = http.get(urljoin(gateway + "/", link[1]))
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/manifest+json")
        manifest = answer.json()
        assert manifest["name"] == "Tarrare" and manifest["short_name"]
        assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
        assert manifest["theme_color"] and manifest["background_color"]
        icon = next(icon for icon in manifest["icons"] if icon["type"] == "image/svg+xml")
        assert icon["sizes"] == "any"
        image = http.get(urljoin(str(answer.url), icon["src"]))
        assert image.status_code == 200 and image.headers["content-type"].startswith("image/svg+xml")

        # At the root, so that its scope is the whole app; revalidated at each load, so that a new one is installed.
        worker = http.get("/sw.js")
        assert worker.status_code == 200
        assert worker.headers["content-type"].startswith("text/javascript")
        assert "no-cache" in worker.headers["cache-control"]


def test_a_pushed_message_shows_a_notification_per_chat_that_opens_the_chat(browsers):
    pia = browsers("Pia")
    allow_notifications(pia)
    pia.sign_up()
    assert active_worker(pia) == pia.gateway + "/"

    devtools = DevTools(pia.driver)
    try:
        page = devtools.attach("page", pia.gateway)
        devtools.send("ServiceWorker.enable", session=page)
        for command in ("BackgroundService.startObserving", "BackgroundService.setRecording"):
            devtools.send(command, {"service": "notifications", "shouldRecord": True}, session=page)
        scope = pia.gateway + "/"
        registrations = devtools.event("ServiceWorker.workerRegistrationUpdated", lambda params: any(
            r["scopeURL"] == scope and not r["isDeleted"] for r in params["registrations"]))["registrations"]
        registration = next(r["registrationId"] for r in registrations if r["scopeURL"] == scope)

        def push(data, tag):
            """Delivers `data` as the push service would, and waits until Chromium has displayed its notification.
            NB: Chromium drops a notification from what `getNotifications()` answers when that is asked while the
            notification is still being displayed; a person never asks that fast, the test would."""
            since = len(devtools.events)
            devtools.send("ServiceWorker.deliverPushMessage",
                          {"origin": pia.gateway, "registrationId": registration, "data": data}, session=page)
            devtools.event("BackgroundService.backgroundServiceEventReceived", lambda params: (
                params["backgroundServiceEvent"]["eventName"] == "Notification displayed"
                and params["backgroundServiceEvent"]["instanceId"] == tag), since=since)

        chat = f"#/chats/{uuid.uuid4()}"
        push(json.dumps({"type": "message.sent", "seq": 1, "title": "Olli", "body": "Hei!", "open": chat}), chat)
        shown = pia.wait(lambda: notifications(pia) or None, message="the push showed no notification")
        assert shown == [{"title": "Olli", "body": "Hei!", "tag": chat, "open": chat}]

        # The chat's next push replaces its notification; a payload that cannot be read still tells that something came.
        push(json.dumps({"type": "message.sent", "seq": 2, "title": "Olli", "body": "Hei taas!", "open": chat}), chat)
        pia.wait(lambda: [n["body"] for n in notifications(pia) if n["tag"] == chat] == ["Hei taas!"],
                 message="the chat's second push did not replace its notification")
        push("not JSON", "tarrare")
        pia.wait(lambda: any(n["title"] == "Tarrare" and n["body"] == "Something new" for n in notifications(pia)),
                 message="an unreadable push showed no notification")
        pia.screenshot("notified")

        # Clicking it: headless Chromium shows no notification to click and the protocol cannot click one, so the
        # worker's `notificationclick` handling (openScreen) is run on the shown notification's own route.
        pia.tab("me")
        pia.find("section.device-notifications")
        pia.accessible("Me with notifications on this device")
        worker = devtools.attach("service_worker", pia.gateway + "/sw.js")
        clicked = devtools.send("Runtime.evaluate", {
            "expression": f"self.registration.getNotifications({{tag: {json.dumps(chat)}}})"
                          ".then(([shown]) => openScreen(shown.data.open)).then(() => 'opened')",
            "awaitPromise": True, "userGesture": True, "returnByValue": True}, session=worker)
        assert clicked["result"].get("value") == "opened", clicked
        pia.wait(lambda: pia.js("return location.hash") == chat, message="the notification did not open its chat")
        pia.find("nav#tabs a[data-tab='chats'][aria-current='page']")
        # That chat is not one of hers: the screen says so once chat has been asked long enough.
        pia.find("section.chat p.notice:not([hidden])")
        pia.accessible("a chat a notification opened")
        pia.screenshot("opened")
    finally:
        devtools.close()


def test_turning_on_notifications_where_the_browser_cannot_subscribe_says_why_and_registers_nothing(browsers):
    noa = browsers("Noa")
    allow_notifications(noa)
    noa.sign_up()
    active_worker(noa)
    noa.tab("me")
    noa.find("section.device-notifications")
    status = noa.driver.find_element(By.CSS_SELECTOR, "section.device-notifications [role='status']")
    assert status.get_attribute("textContent") == ""

    # By keyboard: the button is focused and pressed with Enter.
    button = noa.button("Turn on notifications")
    noa.scroll_to(button)
    button.send_keys(Keys.ENTER)
    def told():
        text = status.text
        return text if text and not text.startswith("Turning") else None
    # The push service out of reach (or, on a server without a key, the server's refusal), said in a sentence.
    said = noa.wait(told, timeout=60, message="the failure was never told")
    assert "push service" in said or "does not send notifications" in said, said
    assert noa.button("Turn on notifications").is_displayed()
    assert noa.js("return localStorage.getItem('tarrare.pushDevice')") is None
    noa.accessible("Me with notifications refused")
    noa.screenshot("refused")

    session = noa.js("return JSON.parse(localStorage.getItem('tarrare.session'))")
    headers = {"Authorization": f"Bearer {session['accessToken']}"}
    with httpx.Client(base_url=GATEWAY, timeout=30, headers=headers) as api:
        devices = api.get("/v1/devices")
        assert devices.status_code == 200, devices.text
        assert devices.json()["devices"] == []
