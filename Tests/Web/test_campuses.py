"""Two campuses on one system: the sign-up page names every campus it serves, and a student of the second one, Aalto
University at Otaniemi (Tests/TestSupport/campuses.json, which scripts/up passes on), sees their campus named and
every map on it, not on Helsinki's."""

# Aalto University's box at Otaniemi: min lat, min lon, max lat, max lon.
OTANIEMI = (60.180, 24.815, 60.192, 24.840)

# Keeps every Leaflet map the page makes from now on, through the same Leaflet module the page imports.
WATCH_MAPS = """
const done = arguments[arguments.length - 1];
import("/vendor/leaflet/leaflet.esm.js").then((L) => {
  window.shownMaps = [];
  L.Map.addInitHook(function () { window.shownMaps.push(this); });
  done(true);
}, (error) => done(String(error)));
"""

# The centres ([lat, lon]) of the maps on the screen now.
MAP_CENTRES = """
return (window.shownMaps || []).filter((map) => map.getContainer().isConnected)
  .map((map) => { const centre = map.getCenter(); return [centre.lat, centre.lng]; });
"""


def test_an_otaniemi_student_sees_their_campus_named_and_every_map_on_it(browsers):
    aino = browsers("Aino", domain="aalto.fi")
    aino.open("/")
    aino.click("Sign up")
    aino.sees("aalto.fi")
    hint = aino.text_of("section.auth .hint")
    assert "aalto.fi (Aalto University, Otaniemi)" in hint and "helsinki.fi" in hint
    aino.accessible("the sign-up screen")
    aino.screenshot("signup")

    aino.sign_up()
    assert aino.text_of("#campus") == "Aalto University, Otaniemi"
    aino.tab("me")
    assert aino.text_of("#me-campus") == "Aalto University, Otaniemi"
    assert aino.driver.execute_async_script(WATCH_MAPS) is True

    centres = {}
    for tab in ("delivery", "exchange", "rides"):
        aino.tab(tab)
        centres[tab] = aino.wait(lambda: aino.js(MAP_CENTRES), message=f"no map on the {tab} tab")
        aino.accessible(f"the {tab} tab with its map")
        aino.screenshot(f"{tab}-map")

    south, west, north, east = OTANIEMI
    for tab, shown in centres.items():
        for latitude, longitude in shown:
            assert south <= latitude <= north and west <= longitude <= east, f"{tab}: a map at {latitude},{longitude}"
