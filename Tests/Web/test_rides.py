"""My Driver in the browser: a rider asks for a ride on the map, a driver nearby hears of it and accepts, and the rider
watches the driver's marker move until the ride ends."""

import math
import random
import re
import uuid

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

CAR = "Blue Toyota Yaris, ABC-123"


def signed_up(browser, name):
    """conftest's sign_up, made sure of: the sign-up form can be drawn again under the typing when the campuses
    arrive late (web/js/views/auth.js), and the tabs show even while logged out, so sign_up alone may not notice."""
    for _ in range(3):
        browser.sign_up(name)
        outcome = browser.wait(lambda: "in" if browser.js("return localStorage.getItem('tarrare.session') !== null")
                               else "refused" if browser.all("section.auth [role='alert']:not(:empty)") else None)
        if outcome == "in":
            return browser
    raise AssertionError(f"{browser.name} could not sign up")


def press(browser, text, within=None):
    """Clicks a button once it is scrolled clear of the fixed tab bar (a plain click can land on the bar)."""
    button = browser.button(text, within=within)
    browser.js("arguments[0].scrollIntoView({block: 'center'})", button)
    button.click()


def without_location(browser):
    """A person who does not share their location: the page falls back to clicks on the map (and headless Chromium
    does not ask a network location service that an offline machine cannot reach)."""
    browser.driver.execute_cdp_cmd("Browser.setPermission", {
        "permission": {"name": "geolocation"}, "setting": "denied", "origin": browser.gateway})
    return browser


def click_map(browser, dx, dy):
    """Clicks the visible ride map `dx`, `dy` pixels from its centre, or at the nearest spot clear of its markers and
    controls (a click on a marker is the marker's, not the map's)."""
    element = browser.find(".ride-map")
    browser.js("arguments[0].scrollIntoView({block: 'center'})", element)
    box = browser.js("const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.width, r.height];", element)
    markers = browser.js(
        "return [...arguments[0].querySelectorAll('path.leaflet-interactive')].map((p) => {"
        " const r = p.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; });", element)
    left, top, width, height = box

    def clear(x, y):
        inside = 60 < x - left < width - 20 and 20 < y - top < height - 30
        return inside and all(math.dist((x, y), marker) > 30 for marker in markers)

    centre_x, centre_y = left + width / 2, top + height / 2
    spots = [(dx, dy)] + [(dx + 40 * math.cos(angle / 4) * ring, dy + 40 * math.sin(angle / 4) * ring)
                          for ring in (1, 2) for angle in range(25)]
    x, y = next((centre_x + sx, centre_y + sy) for sx, sy in spots if clear(centre_x + sx, centre_y + sy))
    ActionChains(browser.driver).move_to_element_with_offset(element, int(x - centre_x), int(y - centre_y)).click().perform()


def point_of(browser, css):
    """The point a screen shows in the data attributes of `css`, or None."""
    element = browser.find(css)
    lat, lon = element.get_attribute("data-lat"), element.get_attribute("data-lon")
    return (float(lat), float(lon)) if lat and lon else None


def near(a, b):
    return a is not None and b is not None and abs(a[0] - b[0]) < 1e-6 and abs(a[1] - b[1]) < 1e-6


def test_the_rider_watches_the_driver_come_on_the_map_until_the_ride_ends(browsers):
    suffix = uuid.uuid4().hex[:6]
    ville = signed_up(without_location(browsers("Ville")), f"Ville {suffix}")
    rosa = signed_up(without_location(browsers("Rosa")), f"Rosa {suffix}")

    ville.tab("rides")
    ville.click("Drive")
    ville.type("Car", CAR)
    ville.type("Seats", "3")
    press(ville, "Save driver profile")
    press(ville, "Go online")
    click_map(ville, 0, 0)
    ville.sees("You are online")
    online_at = point_of(ville, ".my-position")
    ville.wait_live()

    # A pickup a random step from the driver, so that this ride is not another test's.
    rosa.tab("rides")
    rosa.wait_live()
    click_map(rosa, random.randint(-90, 90), random.randint(-70, 70))
    rosa.wait(lambda: point_of(rosa, "p.spot"))
    rosa.type("Note for the driver (optional)", "By the main door")
    rosa.screenshot("request-form")
    press(rosa, "Ask for a ride")
    rosa.find("section.ride[data-status='open']")
    rosa.sees("Looking for a driver")
    ride_id = rosa.wait(lambda: re.search(r"#/rides/([0-9a-fA-F-]{36})$", rosa.driver.current_url)).group(1).lower()
    rosa.screenshot("waiting")

    # The socket's offer brings the request to the driver's list before its 15 s refresh would.
    request = ville.find(f"li[data-ride-id='{ride_id}']", timeout=12)
    assert f"Rosa {suffix}" in request.text and "By the main door" in request.text
    away = re.fullmatch(r"(\d+) m away", request.find_element(By.CSS_SELECTOR, ".distance").text)
    assert away and 0 <= int(away.group(1)) < 300
    ville.screenshot("requests")
    press(ville, "Accept", within=request)
    ville.find("section.ride[data-side='driver'][data-status='accepted']")

    rosa.find("section.ride[data-side='rider'][data-status='accepted']")
    rosa.sees(CAR)
    rosa.wait(lambda: near(point_of(rosa, ".driver-position"), online_at), message="the driver's marker never showed")
    assert re.search(r"Driver is (\d+ m|[\d.]+ km) away|Driver is at the pickup", rosa.text_of(".driver-position"))

    # The driver moves twice; the rider's map follows (positions reach the rider at most once a second).
    for dx, dy in ((70, -50), (-60, 60)):
        before = point_of(ville, ".driver-position")
        click_map(ville, dx, dy)
        moved = ville.wait(lambda: (lambda point: point if point and not near(point, before) else None)(
            point_of(ville, ".driver-position")))
        rosa.wait(lambda: near(point_of(rosa, ".driver-position"), moved), timeout=10,
                  message="the rider's map never showed the driver's new position")
        assert rosa.find(".ride-map path.marker-driver")
    rosa.screenshot("driver-coming")
    ville.screenshot("driver-ride")
    chat = rosa.button(f"Chat with Ville {suffix}")
    assert re.search(r"#/chats/[0-9a-fA-F-]{36}$", chat.get_attribute("href"))

    for button, status, shown in (("Mark arrived", "arrived", "has arrived"), ("Mark started", "started", "On your way"),
                                  ("Mark completed", "completed", "Ride completed")):
        press(ville, button)
        ville.find(f"section.ride[data-status='{status}']")
        rosa.find(f"section.ride[data-status='{status}']")
        rosa.sees(shown)
    assert not rosa.all(".ride-map path.marker-driver")

    press(ville, "Back to driving")
    press(ville, "Go offline")
    ville.sees("You are offline")
