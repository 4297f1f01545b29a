"""The web client in a real browser: Debian's headless Chromium, driven by Selenium, on the page the gateway serves
(the system as scripts/up started it). Each test's browsers are people on phones; screenshots of the screens they
reach are saved in .local/artifacts/web/."""

import math
import os
import re
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
GATEWAY = os.environ.get("TARRARE_GATEWAY", "http://127.0.0.1:8080")
ARTIFACTS = ROOT / ".local" / "artifacts" / "web"
PASSWORD = "correct horse battery"
CONFIRM_FORM = "form[aria-label='Confirm your email']"
TABS = "nav#tabs a[data-tab='delivery']"
# NB: the axe-core that axe-selenium-python bundles (3.1) predates the HTML standard's `one-time-code` token, which the
# pages of the mailed codes use so that phones offer the code; its check is told of that token, and of nothing else.
AXE_CONFIGURATION = {"checks": [{"id": "autocomplete-valid", "options": {"standaloneTerms": ["one-time-code"]}}]}

# What the focused control is called: its label's text, else its own text (a link's, a button's).
FOCUSED_NAME = """
const focused = document.activeElement;
if (!focused || focused === document.body) return "";
const label = focused.labels && focused.labels[0];
return (label ? label.textContent : focused.innerText || "").trim();
"""
# Whether the focused control shows an outline, as a person at a keyboard sees where they are.
FOCUS_SHOWN = """
const style = getComputedStyle(document.activeElement);
return style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
"""

# The mail the system sends, read as the system tests read it.
sys.path.append(str(ROOT / "Tests" / "System"))
from inbox import code_in, mail_to  # noqa: E402


def signed_up(http, email, name):
    """Signs up through the API as another app would, proving the address with the mailed code where the system asks
    for it; answers the session (user, accessToken, refreshToken)."""
    answer = http.post("/v1/auth/signup", json={"email": email, "password": PASSWORD, "name": name})
    assert answer.status_code == 201, answer.text
    if answer.json().get("verificationRequired"):
        code = code_in(mail_to(email, "Confirm your email"))
        verified = http.post("/v1/auth/verify", json={"email": email, "code": code})
        assert verified.status_code == 200, verified.text
        answer = http.post("/v1/auth/login", json={"email": email, "password": PASSWORD})
        assert answer.status_code == 200, answer.text
    return answer.json()


def describe_violations(violations):
    """axe-core's violations as lines a person reads: the rule, its impact and help, and each element's selector."""
    lines = []
    for violation in violations:
        lines.append(f"- {violation['id']} ({violation.get('impact')}): {violation.get('help')}")
        lines += [f"    {' '.join(node['target'])}" for node in violation["nodes"]]
    return "\n".join(lines)


@pytest.fixture(scope="session")
def gateway():
    """The page's address, once the gateway serves it."""
    try:
        httpx.get(f"{GATEWAY}/", timeout=5).raise_for_status()
        httpx.get(f"{GATEWAY}/v1/campuses", timeout=5).raise_for_status()
    except httpx.HTTPError as error:
        pytest.fail(f"the gateway does not serve the web client ({error}); start the system with scripts/up")
    return GATEWAY


class Browser:
    """One person's phone: a headless Chromium window 412 px wide, with helpers that act as a person does (by labels
    and button texts, through the keyboard where it matters). The person's email is at `domain`, their campus's."""

    def __init__(self, name, gateway, request, domain="helsinki.fi"):
        self.name = name
        self.gateway = gateway
        self.test = re.sub(r"[^A-Za-z0-9_]+", "_", request.node.name)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=412,915",
                         "--disable-gpu", "--no-first-run", "--disable-extensions", "--lang=en-GB",
                         # Calls: a camera and a microphone of Chromium's own making, granted without asking.
                         "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
        self.driver.set_script_timeout(30)
        # Headless Chromium would grant the position and then fail to find one offline: here, as for a person who
        # said no, the page must work from the map.
        self.driver.execute_cdp_cmd(
            "Browser.setPermission", {"permission": {"name": "geolocation"}, "setting": "denied", "origin": gateway})
        self.email = f"{name.lower()}.{uuid.uuid4().hex[:10]}@{domain}"
        self.shots = 0

    # --- Finding things ----------------------------------------------------------------------------------------------

    def wait(self, condition, timeout=30, message=""):
        """The first truthy answer of `condition()`, waiting for it (stale elements are looked up again)."""
        def attempt(_):
            try:
                return condition()
            except StaleElementReferenceException:
                return None
        return WebDriverWait(self.driver, timeout, poll_frequency=0.1).until(attempt, message or "condition not met")

    def find(self, css, timeout=30):
        """The first visible element matching `css`."""
        def visible():
            return next((e for e in self.driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), None)
        return self.wait(visible, timeout, f"{self.name}: nothing visible matches {css}")

    def all(self, css):
        return [e for e in self.driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]

    def field(self, label, timeout=30):
        """The visible control labelled `label` (exact text of its <label>)."""
        def control():
            # NB: by the label's text content: a label may be there for screen readers only.
            for element in self.driver.find_elements(By.TAG_NAME, "label"):
                if (element.get_attribute("textContent") or "").strip() == label and element.get_attribute("for"):
                    found = self.driver.find_element(By.ID, element.get_attribute("for"))
                    if found.is_displayed() or found.get_attribute("type") == "file":
                        return found
            return None
        return self.wait(control, timeout, f"{self.name}: no field labelled {label!r}")

    def button(self, text, timeout=30, within=None):
        """The visible, enabled button (or link) whose text is `text`."""
        def enabled():
            scope = within or self.driver
            for element in scope.find_elements(By.CSS_SELECTOR, "button, a"):
                if element.is_displayed() and element.is_enabled() and element.text.strip() == text:
                    return element
            return None
        return self.wait(enabled, timeout, f"{self.name}: no button {text!r}")

    def text_of(self, css):
        return self.find(css).text

    def sees(self, text, timeout=30):
        """Waits until `text` is shown somewhere on the page."""
        return self.wait(lambda: text in self.driver.find_element(By.TAG_NAME, "body").text, timeout,
                         f"{self.name}: {text!r} never showed")

    # --- Acting -----------------------------------------------------------------------------------------------------

    def open(self, path="/"):
        self.driver.get(self.gateway + path)

    def type(self, label, text, clear=True):
        control = self.field(label)
        if clear:
            control.clear()
        control.send_keys(text)
        return control

    def choose(self, label, value):
        """Selects the option whose value or visible text is `value` in the select labelled `label`."""
        from selenium.webdriver.support.ui import Select
        select = Select(self.field(label))
        try:
            select.select_by_value(value)
        except Exception:
            select.select_by_visible_text(value)

    def click(self, text, within=None):
        self.press(self.button(text, within=within))

    def press(self, element):
        """Clicks an element as a person does, scrolled into the middle of the screen first."""
        self.scroll_to(element)
        element.click()

    def scroll_to(self, element):
        """Scrolls `element` into the middle of the screen: the fixed tab bar covers its bottom, and a plain click
        only scrolls what is out of view."""
        self.js("arguments[0].scrollIntoView({block: 'center'})", element)

    def click_map(self, css, dx, dy):
        """Clicks the visible map `css` `dx`, `dy` pixels from its centre, or at the nearest spot clear of its markers
        and controls (a click on a marker is the marker's, not the map's)."""
        element = self.find(css)
        self.scroll_to(element)
        left, top, width, height = self.js(
            "const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.width, r.height];", element)
        markers = self.js(
            "return [...arguments[0].querySelectorAll('path.leaflet-interactive')].map((p) => {"
            " const r = p.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; });", element)

        def clear(x, y):
            inside = 60 < x - left < width - 20 and 20 < y - top < height - 30
            return inside and all(math.dist((x, y), marker) > 30 for marker in markers)

        centre_x, centre_y = left + width / 2, top + height / 2
        spots = [(dx, dy)] + [(dx + 40 * math.cos(angle / 4) * ring, dy + 40 * math.sin(angle / 4) * ring)
                              for ring in (1, 2) for angle in range(25)]
        x, y = next((centre_x + sx, centre_y + sy) for sx, sy in spots if clear(centre_x + sx, centre_y + sy))
        ActionChains(self.driver).move_to_element_with_offset(element, int(x - centre_x), int(y - centre_y)).click().perform()

    def tab(self, name):
        self.find(f'nav a[data-tab="{name}"]').click()

    def keys(self, *keys):
        """Presses keys (Keys.TAB, Keys.ENTER, or text typed) into whatever has the focus, as at a keyboard."""
        ActionChains(self.driver).send_keys(*keys).perform()

    def focused(self):
        """The name of the control that has the focus (see FOCUSED_NAME)."""
        return self.js(FOCUSED_NAME)

    def tab_to(self, name, presses=80):
        """Presses Tab until the focus is on the control called `name`, and checks that the focus shows there; fails when
        `presses` presses never reach it."""
        for _ in range(presses):
            self.keys(Keys.TAB)
            if self.focused() == name:
                assert self.js(FOCUS_SHOWN), f"{self.name}: the focus on {name!r} does not show"
                return
        raise AssertionError(f"{self.name}: {presses} presses of Tab never reached {name!r}")

    def sign_up(self, display_name=None):
        """Signs up through the page and waits for the app's tabs."""
        self.open("/")
        self.click("Sign up")
        self.type("Name", display_name or self.name)
        self.type("Campus email", self.email)
        self.type("Password", PASSWORD)
        since = time.time_ns()
        self.click("Sign up")
        self.confirm_email(since)
        return self

    def confirm_email(self, since=None):
        """After "Sign up" (clicked at `since`, time.time_ns(), when the address had mail before): types the mailed
        code when the page asks for it (the system sends mail), then waits for the app's tabs."""
        screen = self.wait(lambda: "confirm" if self.all(CONFIRM_FORM) else "tabs" if self.all(TABS) else None,
                           message=f"{self.name}: neither the email's confirmation nor the app showed after sign-up")
        if screen == "confirm":
            self.type("Code", code_in(mail_to(self.email, "Confirm your email", after=since)))
            self.click("Confirm", within=self.find(CONFIRM_FORM))
        self.find(TABS)

    def accessible(self, screen):
        """Runs axe-core at its default rules (WCAG 2 A and AA, and best practices) on the page as it shows now, and
        fails naming `screen` and each violation when there is any."""
        violations = self.axe_violations()
        assert not violations, (f"{self.name}: {len(violations)} accessibility violation(s) on {screen}:\n"
                                + describe_violations(violations))

    def axe_violations(self):
        """What axe-core finds wrong on the page now (injected again after each load)."""
        if not self.js("return typeof window.axe === 'object'"):
            Axe(self.driver).inject()
            self.js("axe.configure(arguments[0])", AXE_CONFIGURATION)
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document).then((results) => done(results.violations), (error) => done([{id: 'axe-failed',"
            " impact: 'critical', help: String(error), nodes: []}]));")

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def connection(self):
        return self.find("#connection").get_attribute("data-state")

    def wait_live(self, timeout=30):
        self.wait(lambda: self.connection() == "live", timeout, f"{self.name}: the socket never came up")

    def screenshot(self, what):
        """Saves the screen as .local/artifacts/web/<test>-<n>-<who>-<what>.png."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.shots += 1
        self.driver.save_screenshot(str(ARTIFACTS / f"{self.test}-{self.shots:02d}-{self.name.lower()}-{what}.png"))

    def errors(self):
        """What the page logged as errors (uncaught exceptions, refused by the CSP), leaving out the API's expected 4xx
        answers (and the tiles a campus's map has none of) and connections tried while a test has cut the network."""
        try:
            entries = self.driver.get_log("browser")
        except WebDriverException:
            return []
        return [
            entry["message"] for entry in entries
            if entry["level"] == "SEVERE"
            and "the server responded with a status of 4" not in entry["message"]
            and "ERR_INTERNET_DISCONNECTED" not in entry["message"]
        ]

    def close(self):
        self.driver.quit()


@pytest.fixture
def browsers(gateway, request):
    """Opens browsers for a test: `alice = browsers("Alice")`, a student of helsinki.fi, or of another campus with
    `browsers("Aino", domain="aalto.fi")`. Each is screenshot and closed at the end; the test fails if the page logged
    an error."""
    opened = []

    def open_browser(name, domain="helsinki.fi"):
        browser = Browser(name, gateway, request, domain)
        opened.append(browser)
        return browser

    yield open_browser
    problems = []
    for browser in opened:
        try:
            browser.screenshot("end")
            problems += [f"{browser.name}: {message}" for message in browser.errors()]
        finally:
            browser.close()
    assert not problems, "the page logged errors:\n" + "\n".join(problems)
