// Maps with Leaflet (Debian's libjs-leaflet, served by the gateway at /vendor/leaflet/). The base map's tiles come from
// the gateway's settings (/config.js, TILE_URL): by default the gateway's own, rendered from the bundled OpenStreetMap
// extract; the markers are vectors, so they show without tiles too. Each flow names the kinds of marker it puts on a
// map; the map knows none.

import * as L from "/vendor/leaflet/leaflet.esm.js";
import { tileUrl } from "/config.js";

// The gateway's own tiles exist at the zooms the import renders (deploy/tiles/render.py); another server's at its own.
// NB: the map itself may go further out than the tiles: points kilometres apart still fit on one map.
const zooms = tileUrl.startsWith("/tiles/") ? { minZoom: 13, maxZoom: 18 } : { minZoom: 0, maxZoom: 19 };

/** A map in `element` around `center` ({lat, lon}); answers helpers to put markers on it. */
export function campusMap(element, center, zoom = 16) {
  const map = L.map(element, { zoomControl: true, attributionControl: true, maxZoom: zooms.maxZoom })
    .setView([center.lat, center.lon], zoom);
  L.tileLayer(tileUrl, { ...zooms, attribution: "© OpenStreetMap contributors" }).addTo(map);
  const layer = L.layerGroup().addTo(map);
  // A map made while its element was hidden or resizing measures itself again.
  const observer = new ResizeObserver(() => map.invalidateSize());
  observer.observe(element);
  return {
    map,
    clear: () => layer.clearLayers(),
    /** A round marker of `kind` ({name, color, large}: its class is marker-<name>) with a tooltip; `onClick`
     *  optional. */
    marker(point, kind, label, onClick) {
      const marker = L.circleMarker([point.lat, point.lon], {
        radius: kind.large ? 9 : 7,
        color: "#fff",
        weight: 2,
        fillColor: kind.color,
        fillOpacity: 0.95,
        className: `marker-${kind.name}`,
      });
      if (label) marker.bindTooltip(label);
      if (onClick) marker.on("click", onClick);
      marker.addTo(layer);
      return {
        moveTo: (next) => marker.setLatLng([next.lat, next.lon]),
        remove: () => layer.removeLayer(marker),
        get point() {
          const { lat, lng } = marker.getLatLng();
          return { lat, lon: lng };
        },
      };
    },
    /** A line along `coordinates` (GeoJSON's [lon, lat] pairs) of `kind` ({name, color}: its class is path-<name>),
     *  under the markers; answers its remover. */
    path(coordinates, kind) {
      const line = L.polyline(coordinates.map(([lon, lat]) => [lat, lon]), {
        color: kind.color,
        weight: 5,
        opacity: 0.8,
        className: `path-${kind.name}`,
        interactive: false,
      });
      line.addTo(layer);
      line.bringToBack();
      return { remove: () => layer.removeLayer(line) };
    },
    /** Fits the view to the points given. */
    fit(points) {
      // NB: not animated: Leaflet 1.6 ends an animated zoom with a timer that fails on a map removed meanwhile.
      if (points.length === 1) {
        map.setView([points[0].lat, points[0].lon], Math.max(map.getZoom(), 16), { animate: false });
      } else if (points.length > 1) {
        map.fitBounds(points.map((p) => [p.lat, p.lon]), { padding: [24, 24], maxZoom: 17, animate: false });
      }
    },
    onClick(handler) {
      map.on("click", (event) => handler({ lat: event.latlng.lat, lon: event.latlng.lng }));
    },
    destroy() {
      observer.disconnect();
      // NB: later, as Leaflet 1.6 ends a zoom the person started with a 250 ms timer that fails on a removed map.
      setTimeout(() => map.remove(), 300);
    },
  };
}

/** Where the person is, when the browser may tell; else null. */
export function whereAmI(timeout = 4000) {
  return new Promise((resolve) => {
    if (!navigator.geolocation) return resolve(null);
    navigator.geolocation.getCurrentPosition(
      (position) => resolve({ lat: position.coords.latitude, lon: position.coords.longitude }),
      () => resolve(null),
      { timeout, maximumAge: 60_000 },
    );
  });
}

/** Meters between two points ({lat, lon}), as Leaflet measures them on the Earth. */
export function metersBetween(a, b) {
  return L.latLng(a.lat, a.lon).distanceTo(L.latLng(b.lat, b.lon));
}
