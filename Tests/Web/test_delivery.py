"""Delivery in the page, both sides in two browsers: a deliverer checks in found by typing, an orderer orders from
their run, the offer is accepted against its countdown, the orderer follows the deliverer on the map, they chat, and
both complete."""

import random
import re

import httpx
from selenium.webdriver.common.by import By

from conftest import GATEWAY


def api_of(browser):
    """The API as the browser's person, with the page's own token (once the page is logged in)."""
    browser.wait_live()
    session = browser.js("return JSON.parse(localStorage.getItem('tarrare.session'))")
    return httpx.Client(base_url=GATEWAY, timeout=30, headers={"Authorization": f"Bearer {session['accessToken']}"})


def place(client, query, kind):
    answer = client.get("/v1/places", params={"q": query, "kind": kind, "limit": 5})
    assert answer.status_code == 200, answer.text
    return answer.json()["places"][0]


def free_restaurant(client, near):
    """A restaurant near `near` where nobody has a run (the system may be in use), with the first letters of its name
    that find it among the page's suggestions."""
    busy = {entry["restaurant"]["id"] for entry in client.get("/v1/restaurants").json()["restaurants"]}
    nearby = client.get("/v1/places/nearby", params={
        "lat": near["latitude"], "lon": near["longitude"], "radius": 600, "kind": "restaurant", "limit": 50})
    candidates = [entry for entry in nearby.json()["places"] if entry["id"] not in busy and len(entry["name"]) >= 6]
    random.shuffle(candidates)
    for candidate in candidates:
        typed = candidate["name"][:6].lower()
        found = client.get("/v1/places", params={"q": typed, "kind": "restaurant", "limit": 8}).json()["places"]
        if candidate["id"] in [entry["id"] for entry in found]:
            return candidate, typed
    raise AssertionError("no free restaurant near Porthania")




def pick(browser, label, typed, place_id):
    """Types into a place field and picks the suggestion of `place_id`."""
    browser.type(label, typed)
    browser.press(browser.find(f"button.suggestion[data-place-id='{place_id.lower()}']"))


def seconds_left(browser):
    minutes, seconds = browser.text_of("section.offer .countdown").split(":")
    return int(minutes) * 60 + int(seconds)




def shown_messages(browser):
    return [element.text.split("\n")[0] for element in browser.all("ol.messages li")]


def test_a_deliverer_and_an_orderer_from_check_in_to_a_completed_delivery(browsers):
    dina = browsers("Dina").sign_up()
    dina_api = api_of(dina)
    porthania = place(dina_api, "porthania", "building")
    kaisa = place(dina_api, "kaisa-talo", "building")
    restaurant, typed = free_restaurant(dina_api, porthania)
    try:
        # The deliverer finds the restaurant and Porthania by typing, and checks in.
        dina.click("Delivering")
        dina.find("form[aria-label='Check in']")
        dina.accessible("delivery: the check-in form")
        pick(dina, "Restaurant", typed, restaurant["id"])
        pick(dina, "Heading to", "porthan", porthania["id"])
        dina.click("Check in")
        run = dina.find("div.run")
        assert restaurant["name"] in run.text and "Porthania" in run.text
        dina.accessible("delivery: the deliverer's open run")
        # Switching sides saved it as the person's mode.
        assert dina_api.get("/v1/me").json()["mode"] == "delivering"

        # The orderer sees the restaurant with a deliverer, and the run's distance from the building they choose.
        olli = browsers("Olli").sign_up()
        olli.wait_live()
        listed = f"li[data-restaurant-id='{restaurant['id'].lower()}']"
        olli.wait(lambda: "deliverer" in olli.text_of(listed))
        olli.accessible("delivery: the orderer's restaurants")
        olli.wait(lambda: olli.press(olli.find(listed).find_element(By.CSS_SELECTOR, "button")) or True)
        assert olli.field("Restaurant").get_attribute("value") == restaurant["name"]
        pick(olli, "Deliver to", "kaisa", kaisa["id"])
        run_id = run.get_attribute("data-run-id")
        # The runs are listed again with distances once the building is chosen.
        choice = olli.wait(lambda: next((element for element in olli.all(f"label.choice[data-run-id='{run_id}']")
                                         if re.search(r"heading to Porthania · \d+ m from Kaisa-talo", element.text)), None))
        assert "Dina" in choice.text
        olli.accessible("delivery: the order form with its deliverers")
        olli.press(choice)
        olli.type("What to bring", "Falafel wrap and a coffee")
        olli.click("Order")
        olli.find("section.order p.notice[data-status='offered'], section.order p.notice[data-status='waiting']")
        olli.sees("Finding a deliverer")
        olli.accessible("delivery: the order waiting")
        olli.screenshot("pending")

        # The deliverer's offer shows with a countdown that runs; they accept in time.
        offer = dina.find("section.offer")
        assert "Olli" in offer.text and "Falafel wrap and a coffee" in offer.text and restaurant["name"] in offer.text
        first = seconds_left(dina)
        assert 0 < first <= 25
        dina.wait(lambda: seconds_left(dina) < first, timeout=5)
        dina.accessible("delivery: the offer")
        dina.screenshot("offer")
        dina.click("Accept")
        dina.find("section.match")
        dina.sees("You bring Olli's order.")
        dina.accessible("delivery: the deliverer's match")

        # The orderer's pending screen turns into the match by itself.
        olli.sees("Dina brings your order.")
        assert "#/delivery/match/" in olli.driver.current_url
        match_id = olli.find("section.match").get_attribute("data-match-id")
        # The map shows the restaurant and the building (once it has fitted them in).
        olli.wait(lambda: olli.all("section.match path.marker-restaurant") and olli.all("section.match path.marker-building"))
        olli.accessible("delivery: the orderer's match")
        olli.screenshot("matched")

        # The deliverer's browser does not tell where it is: they share a position by clicking the map; the orderer's
        # map shows the marker, and it moves.
        dina.click("Share my position")
        dina.sees("Your browser does not tell your position")
        dina.click_map("section.match .map", 40, -30)
        first_place = olli.find("section.match path.marker-driver").get_attribute("d")
        dina.click_map("section.match .map", -60, 50)
        olli.wait(lambda: olli.find("section.match path.marker-driver").get_attribute("d") != first_place)
        olli.sees("Dina was here at")
        dina.accessible("delivery: the deliverer's match, sharing a position")
        olli.screenshot("map")
        # A reload comes back to the match with the latest position.
        olli.driver.refresh()
        olli.find("section.match path.marker-driver")

        # They chat through the Chats screens, each seeing the other's message live.
        dina.click("Chat with Olli")
        olli.click("Chat with Dina")
        for browser in (dina, olli):
            browser.find("form.composer")
            browser.wait_live()
        dina.type("Message", "At the counter, five minutes")
        dina.click("Send")
        olli.wait(lambda: shown_messages(olli) == ["At the counter, five minutes"])
        olli.type("Message", "Kiitos! Kaisa-talo lobby")
        olli.click("Send")
        dina.wait(lambda: shown_messages(dina) == ["At the counter, five minutes", "Kiitos! Kaisa-talo lobby"])

        # Back on the Delivery tab both are on the match, which the server says is under way (the page keeps none of
        # it); both complete and both see it completed.
        for browser in (olli, dina):
            browser.tab("delivery")
            browser.find(f"section.match[data-match-id='{match_id}']")
            assert browser.js("return Object.keys(localStorage).filter((key) => key.startsWith('tarrare.delivery'))") == []
        olli.click("Complete")
        olli.sees("You marked it complete. Waiting for Dina.")
        dina.click("Complete")
        for browser in (olli, dina):
            browser.find("section.match p.notice[data-status='completed']")
            browser.sees("Delivery complete")
        olli.accessible("delivery: the match completed")
        # The chat leaves both lists.
        for browser in (olli, dina):
            browser.tab("chats")
            browser.sees("No open chats")
            assert not browser.all(f"a.conversation[data-id='{match_id}']")
        dina.accessible("the chats, none open")

        # The deliverer is still checked in, and checks out.
        dina.tab("delivery")
        dina.find(f"div.run[data-run-id='{run_id}']")
        dina.click("Check out")
        dina.find("form[aria-label='Check in']")
        runs = dina_api.get(f"/v1/restaurants/{restaurant['id']}/runs").json()["runs"]
        assert run_id not in [entry["id"].lower() for entry in runs]
    finally:
        for entry in dina_api.get(f"/v1/restaurants/{restaurant['id']}/runs").json().get("runs", []):
            if entry["delivererName"] == "Dina":
                dina_api.delete(f"/v1/runs/{entry['id']}")


def findable_building(client, near, at_least):
    """A building at least `at_least` meters from `near` with the first letters of its name that find it."""
    buildings = client.get("/v1/places/nearby", params={
        "lat": near["latitude"], "lon": near["longitude"], "radius": 1500, "kind": "building", "limit": 50}).json()["places"]
    for candidate in sorted(buildings, key=lambda entry: -entry.get("distanceMeters", 0)):
        if candidate.get("distanceMeters", 0) < at_least or len(candidate["name"]) < 6:
            continue
        typed = candidate["name"][:6].lower()
        found = client.get("/v1/places", params={"q": typed, "kind": "building", "limit": 8}).json()["places"]
        if candidate["id"] in [entry["id"] for entry in found]:
            return candidate, typed
    raise AssertionError(f"no building {at_least} m from {near['name']}")


def test_an_order_from_two_restaurants_to_my_position_is_taken_from_the_open_requests(browsers):
    olli = browsers("Olli").sign_up()
    olli_api = api_of(olli)
    porthania = place(olli_api, "porthania", "building")
    first, typed_first = free_restaurant(olli_api, porthania)
    second, typed_second = free_restaurant(olli_api, porthania)
    while second["id"] == first["id"]:
        second, typed_second = free_restaurant(olli_api, porthania)
    # The order's point is where the map centres on the first restaurant; the deliverer heads far from it, so that the
    # order is not offered to them: they find it listed.
    far, typed_far = findable_building(olli_api, first, 450)
    dina = browsers("Dina").sign_up()
    dina_api = api_of(dina)
    try:
        # The orderer names two restaurants and their position: the browser does not tell it, so a click on the map.
        pick(olli, "Restaurant", typed_first, first["id"])
        olli.click("Another restaurant would do too")
        pick(olli, "Or from (2)", typed_second, second["id"])
        olli.click("Deliver to my position")
        olli.sees("Your browser does not tell where you are")
        olli.click_map("section.delivery .map", 0, 0)
        olli.sees("Delivered to your position")
        olli.accessible("delivery: an order from two restaurants to a position")
        olli.type("What to bring", "Two cinnamon buns")
        olli.click("Order")
        olli.sees("Finding a deliverer")
        order_id = olli.find("section.order").get_attribute("data-order-id")
        assert f"{first['name']} or {second['name']}" in olli.find("section.order").text

        # The deliverer checks in at the second restaurant and finds the order among the open requests.
        dina.click("Delivering")
        pick(dina, "Restaurant", typed_second, second["id"])
        pick(dina, "Heading to", typed_far, far["id"])
        dina.click("Check in")
        # NB: looked up again each time: the list is drawn again whenever the open requests change.
        listed = f"ul.open-orders li[data-order-id='{order_id}']"
        dina.wait(lambda: "Olli: Two cinnamon buns" in dina.text_of(listed) and "Near " in dina.text_of(listed))
        dina.accessible("delivery: the open requests")
        dina.screenshot("open-requests")
        dina.wait(lambda: dina.press(dina.find(listed).find_element(By.CSS_SELECTOR, "button")) or True)
        dina.find("section.match")
        dina.sees("You bring Olli's order.")

        # The orderer's waiting screen turns into the match by itself.
        olli.sees("Dina brings your order.")
        assert "#/delivery/match/" in olli.driver.current_url
        # Taken, the order leaves everyone's open requests.
        assert order_id not in [entry["id"].lower() for entry in dina_api.get("/v1/orders/open").json()["orders"]]
    finally:
        for entry in dina_api.get("/v1/delivery/current").json().get("runs", []):
            dina_api.delete(f"/v1/runs/{entry['id']}")


def test_a_deliverer_checked_in_nowhere_takes_an_open_request_in_one_tap(browsers):
    olli = browsers("Olli").sign_up()
    olli_api = api_of(olli)
    porthania = place(olli_api, "porthania", "building")
    restaurant, typed = free_restaurant(olli_api, porthania)
    # Headed far from anyone's run, so that it waits in the open requests rather than going out as an offer.
    far, typed_far = findable_building(olli_api, restaurant, 450)
    dina = browsers("Dina").sign_up()
    dina_api = api_of(dina)
    order_id = None
    try:
        pick(olli, "Restaurant", typed, restaurant["id"])
        pick(olli, "Deliver to", typed_far, far["id"])
        olli.type("What to bring", "A bowl of soup")
        olli.click("Order")
        olli.sees("Finding a deliverer")
        order_id = olli.find("section.order").get_attribute("data-order-id")

        # Dina is checked in nowhere: the campus's open requests show under the check-in form, and Take is one tap.
        dina.click("Delivering")
        listed = f"ul.open-orders li[data-order-id='{order_id}']"
        dina.wait(lambda: "Olli: A bowl of soup" in dina.text_of(listed) and restaurant["name"] in dina.text_of(listed))
        dina.accessible("delivery: the open requests before checking in")
        dina.screenshot("open-requests-not-checked-in")
        dina.wait(lambda: dina.press(dina.find(listed).find_element(By.CSS_SELECTOR, "button")) or True)
        dina.find("section.match")
        dina.sees("You bring Olli's order.")
        olli.sees("Dina brings your order.")

        # The take checked her in at the order's restaurant, heading to its destination.
        runs = dina_api.get("/v1/delivery/current").json()["runs"]
        assert [(entry["restaurant"]["id"], entry["destination"]["id"]) for entry in runs] == [
            (restaurant["id"], far["id"])]
    finally:
        for entry in dina_api.get("/v1/delivery/current").json().get("runs", []):
            dina_api.delete(f"/v1/runs/{entry['id']}")
        if order_id:
            olli_api.post(f"/v1/orders/{order_id}/cancel")
